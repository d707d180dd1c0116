"""The forkserver is started as a crawl without a browser starts, with the built-in plugins preloaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nitpicker_cli.forkserver import CORE_MODULES, builtin_modules, wanted
from nitpicker_core.crawler.writer_process import CHILD_MODULES


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["crawl", "http://127.0.0.1:1/", "--render", "never"], True),
        (["-v", "pipeline", "http://127.0.0.1:1/", "--render=auto"], True),
        (["crawl", "http://127.0.0.1:1/", "--render", "always"], False),
        (["crawl", "http://127.0.0.1:1/"], False),  # the default renders: no reader, the writer a thread
        (["query", "pages", "x.nitpicker", "--render", "never"], False),
        (["crawl", "--render"], False),  # click refuses it: nothing started for it
        ([], False),
    ],
)
def test_wanted_by_the_crawls_that_fork_their_workers(args, expected):
    assert wanted(args) is expected


def test_preloads_the_builtin_plugins_by_name():
    modules = builtin_modules()
    assert {"nitpicker_scrape", "nitpicker_archive_writer", "nitpicker_core.crawler.reading"} <= set(modules)
    assert "nitpicker_core.crawler.writer_process" in modules
    assert set(CORE_MODULES) == set(CHILD_MODULES)  # what the crawl itself would preload, named twice


def test_started_before_the_project_is_imported():
    """In a fresh interpreter: the server runs, and this process has imported none of the plugins yet."""
    probe = """
import json, sys, multiprocessing.forkserver as fs
from nitpicker_cli.forkserver import start_early
started = start_early(["crawl", "http://127.0.0.1:1/", "--render", "never"])
server = fs._forkserver
print(json.dumps({
    "started": started,
    "running": server._forkserver_pid is not None,
    "preload": server._preload_modules,
    "imported": sorted(m for m in sys.modules if m.startswith(("nitpicker_scrape", "nitpicker_core"))),
}))
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(out.stdout)
    assert found["started"] and found["running"]
    assert "nitpicker_scrape" in found["preload"]
    assert found["imported"] == []
