"""`nitpicker viewer` as a real process: port probing, the loopback warning, bad input and Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from support import as_from_a_terminal

from nitpicker_viewer.guard import is_loopback


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "viewer", *args, "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        preexec_fn=as_from_a_terminal,
    )


def test_serves_on_the_next_free_port_and_stops_on_ctrl_c(viewer_archive):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    proc = start(str(viewer_archive), "--port", str(port))
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        served_port = int(url.rsplit(":", 1)[1].rstrip("/"))
        assert port < served_port < port + 50
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200 and b"site.nitpicker" in response.read()
        with urllib.request.urlopen(url + "api/info", timeout=10) as response:
            assert response.headers["Content-Type"] == "application/json"
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 5
        stderr = proc.stderr.read()
        assert f"nitpicker viewer: {url} (Ctrl-C stops)" in stderr and "nitpicker viewer: stopped" in stderr
        assert "Traceback" not in stderr and "GET /" not in stderr  # request lines only with --verbose
        with pytest.raises(OSError):
            urllib.request.urlopen(url, timeout=2)
    finally:
        taken.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_non_loopback_host_is_warned_about(viewer_archive):
    # 192.0.2.1 (TEST-NET-1) is not on this machine: the warning comes, then binding fails cleanly.
    proc = start(str(viewer_archive), "--host", "192.0.2.1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and out == ""
    lines = err.strip().splitlines()
    assert (
        lines[0]
        == "nitpicker: warning: binding 192.0.2.1: anyone who can reach this address can read the archive"
    )
    assert lines[1] == "nitpicker: error: cannot listen on 192.0.2.1: Cannot assign requested address"


def test_a_missing_archive_is_one_error_line(tmp_path):
    proc = start(str(tmp_path / "nope.nitpicker"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and out == ""
    assert err.strip() == "nitpicker: error: no such archive: nope.nitpicker"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.test", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback
