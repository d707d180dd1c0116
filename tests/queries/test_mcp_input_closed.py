"""`nitpicker mcp` exits when its input closes, even in the middle of a call that would never end (issue 33).

The probe's server did not exit when its client closed stdin during a long call. The MCP SDK's own client
kills a server that lingers two seconds after it closes stdin, which would hide the defect, so this client
speaks the protocol's stdio transport itself (JSON-RPC, one message a line) and watches the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from archives import build_archive
from plugin_dists import make_dist

ENDLESS = """
import sys
from nitpicker_core import Query, hookimpl

def started():
    print("endless query started", file=sys.stderr, flush=True)
    return 1

def endless(archive, commit):
    archive._conn.create_function("started", 0, started)  # said from inside the statement
    sql = "WITH RECURSIVE n(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    return archive.execute(sql)[0][0]

@hookimpl
def register_queries(register):
    register(Query("endless", "never ends", endless))
"""
DEADLINE = 20  # seconds, what the issue asks of every command


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(tmp_path / "cache"))


def _send(child: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert child.stdin is not None
    child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    child.stdin.flush()


def test_the_server_exits_when_its_input_closes_during_a_long_call(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    build_archive(target)
    plugins = make_dist(tmp_path / "plugins", "endless-query", "endless", "endless_query", ENDLESS)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(plugins), *sys.path]),
        NITPICKER_LOAD_PLUGINS=os.environ["NITPICKER_LOAD_PLUGINS"] + ",endless",
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "mcp"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started, answers, errors = threading.Event(), [], []

        def read_err() -> None:
            assert child.stderr is not None
            for line in child.stderr:
                errors.append(line)
                if "endless query started" in line:
                    started.set()

        def read_out() -> None:
            assert child.stdout is not None
            for line in child.stdout:
                answers.append(json.loads(line))

        for read in (read_err, read_out):
            threading.Thread(target=read, daemon=True).start()
        _send(
            child,
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            },
        )
        _send(child, {"method": "notifications/initialized"})
        _send(
            child,
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "endless", "arguments": {"archive": str(target)}},
            },
        )
        assert started.wait(60), f"the call never started: {errors} {answers}"
        assert child.stdin is not None
        child.stdin.close()  # the client goes away
        closed = time.monotonic()
        try:
            child.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the server still runs {DEADLINE} s after its input closed: {errors}")
        took = time.monotonic() - closed
        print(f"exited {took:.2f} s after its input closed")
        assert took < DEADLINE
        assert answers and answers[0].get("id") == 1  # it was a working server
        assert not any("Traceback" in line for line in errors), errors
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
