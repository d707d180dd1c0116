"""Every command obeys a signal within 20 s, whatever its queries do (issue 33).

`log` of an archive whose commits table was an endless recursive view ignored SIGTERM and SIGINT for 640 s:
Python runs a signal's handler between bytecodes, never inside SQLite, so a long statement held the signal
until it ended. A query that never ends stands in for any long one here: a plugin's, installed on
PYTHONPATH as a user's would be, that says when its statement starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from archive_testdata import page
from plugin_dists import make_dist

from nitpicker_core.archive import ArchiveWriter

ENDLESS = """
import sys
from nitpicker_core import Query, hookimpl

def started():
    print("endless query started", file=sys.stderr, flush=True)
    return 1

def endless(archive, commit):
    # said from inside the statement (its first row), so the signal finds it in SQLite, not in Python
    archive._conn.create_function("started", 0, started)
    sql = "WITH RECURSIVE n(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    return archive.execute(sql)[0][0]

@hookimpl
def register_queries(register):
    register(Query("endless", "never ends", endless))
"""
DEADLINE = 20  # seconds: what the issue asks of every command


def _archive(target: Path) -> None:
    w = ArchiveWriter.open(target)
    c = w.begin_commit(options={"roots": ["https://example.org/"]})
    w.put_pages(c, [page(i, 3) for i in range(3)])
    w.finish_commit(c, "complete", {"pages": 3})
    w.write()
    w.close()


def _default_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_long_query_stops_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    target = tmp_path / "site.nitpicker"
    _archive(target)
    plugins = make_dist(tmp_path / "plugins", "endless-query", "endless", "endless_query", ENDLESS)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(plugins), *sys.path]),
        NITPICKER_LOAD_PLUGINS=os.environ["NITPICKER_LOAD_PLUGINS"] + ",endless",
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "query", str(target), "endless"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # at their defaults, as in a terminal: a suite started in the background of a script (as CI may be)
        # has SIGINT ignored, and nohup SIGHUP, and a child inherits that
        preexec_fn=_default_signals,
    )
    try:
        started = threading.Event()
        lines: list[str] = []

        def read() -> None:
            assert child.stderr is not None
            for line in child.stderr:
                lines.append(line)
                if "endless query started" in line:
                    started.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert started.wait(60), f"the query never started: {lines}"
        child.send_signal(sig)
        sent = time.monotonic()
        try:
            child.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{sig.name} not obeyed within {DEADLINE} s")
        took = time.monotonic() - sent
        reader.join(10)
        assert child.returncode == 130, lines
        # click answers a KeyboardInterrupt it sees itself with "aborted"; either way one line, exit 130
        assert lines[-1].strip() in ("nitpicker: interrupted", "nitpicker: aborted"), lines
        assert took < DEADLINE
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
