"""Shared fixtures. Installed third-party plugins never autoload here: only the built-ins are allowed."""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from support import BUILTIN_PLUGINS, run_cli

# Property tests run on loaded machines: a slow example is not a failure, only a wrong one is
settings.register_profile("loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded")

# Set at import time so subprocesses (the CLI, analyzer workers) inherit the same allow list.
os.environ["NITPICKER_LOAD_PLUGINS"] = ",".join(BUILTIN_PLUGINS)
os.environ.pop("NITPICKER_DISABLE_PLUGINS", None)
# Chromium resolves nothing but loopback in tests (recipes §1): no stray DNS traffic from the browser.
os.environ.setdefault(
    "NITPICKER_BROWSER_ARGS", "--host-resolver-rules='MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost'"
)


@pytest.fixture(scope="session")
def site():
    """The test site on 127.0.0.1: ``http://localhost:PORT`` is internal, ``http://127.0.0.1:PORT`` external."""
    from test_server import serve

    server, base = serve()
    yield base
    server.shutdown()


@pytest.fixture
def pm():
    """A fresh plugin manager with the built-in plugins and nothing else."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager()


@pytest.fixture
def bare_pm():
    """A plugin manager with the hookspecs and no plugins at all."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager(load=False)


@pytest.fixture
def cli():
    return run_cli


# The longest modules first (measured: module totals of a whole run's --durations). bin/test runs xdist with
# --dist loadfile --no-loadscope-reorder, so workers take whole modules in this order; a long module taken
# last would keep one worker busy after the others have finished.
LONG_FIRST = (
    "tests/e2e/test_crawl_rules.py",
    "tests/e2e/test_crawl_edges.py",
    "tests/dask/test_dask_analyze.py",
    "tests/dask/test_dask_crawl.py",
    "tests/e2e/test_crawl_control.py",
    "tests/pipeline/test_pipeline_cli.py",
    "tests/e2e/test_crawl_statuses.py",
    "tests/viewer/test_viewer_browser.py",
    "tests/queries/test_pages.py",
    "tests/e2e/test_crawl_stop.py",
    "tests/analyze/test_analyze_engine.py",
    "tests/demo/test_demo_installed.py",
    "tests/cli_ux/test_config_file.py",
    "tests/e2e/test_crawl_limits.py",
    "tests/security/test_security_servers.py",
    "tests/queries/test_findings.py",
    "tests/screenshots/test_screenshots_crawl.py",
)


# Layers (docs/testing.md). A test is marked from what its code, its fixtures' and the helpers they call use:
# `browser` when it crawls or drives Chromium, `subprocess` when it starts a process. The fast lane
# (`bin/test --fast`: -m "not browser and not subprocess") also skips, at its first process start, a test
# these signs missed, so the lane never waits on a process.
BROWSER_SIGNS = re.compile(
    r"""["']crawl["']|["']pipeline["']|crawl_subtree|Crawler\(|BrowserHost|find_browser|playwright|chromium"""
)
SUBPROCESS_SIGNS = re.compile(
    r"run_cli_subprocess|subprocess=True|RunningCli|McpStdio|subprocess\.|Popen|sys\.executable|PYTHONPATH"
    r"|pty_terminal|WorkerPool|multiprocessing|LocalCluster|os\.fork|os\.kill|signal\.SIG"
)
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\b")
_TESTS = os.path.dirname(__file__)


_SOURCES: dict[Any, str] = {}


def _source(func: Any) -> str:
    if func not in _SOURCES:
        try:
            _SOURCES[func] = inspect.getsource(func)
        except (OSError, TypeError):
            _SOURCES[func] = ""
    return _SOURCES[func]


def _code_of(item: pytest.Item) -> str:
    """The test function's source, its fixtures' (the whole closure) and the test helpers they name."""
    seen: set[int] = set()
    parts: list[str] = []

    def add(func: Any, depth: int) -> None:
        func = inspect.unwrap(func)
        if id(func) in seen or not callable(func):
            return
        seen.add(id(func))
        module = inspect.getmodule(func)
        if module is None or not (getattr(module, "__file__", "") or "").startswith(_TESTS):
            return  # the project's own code is what the test proves, not a sign of how it runs
        if module.__name__ == "support" or func.__name__ == "_fast_lane_starts_no_process":
            return  # the shared helpers are signs by their names (run_cli runs in-process, RunningCli does not)
        text = _source(func)
        parts.append(text)
        if depth < 4:
            names = vars(module)
            for name in set(_CALLED.findall(text)):
                target = names.get(name)
                if hasattr(target, "__wrapped__"):  # a fixture asked for by name (request.getfixturevalue)
                    target = inspect.unwrap(target)
                if inspect.isfunction(target) or inspect.isclass(target):
                    add(target, depth + 1)

    add(getattr(item, "obj", None), 0)
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixturedef in info.name2fixturedefs.get(name, ()) if info else ():
            add(fixturedef.func, 0)
    return "\n".join(parts)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        code = _code_of(item)
        if BROWSER_SIGNS.search(code) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        if SUBPROCESS_SIGNS.search(code) and not item.get_closest_marker("subprocess"):
            item.add_marker(pytest.mark.subprocess)
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_FIRST)))  # stable: order within


FAST = os.environ.get("NITPICKER_TEST_LANE") == "fast"


@pytest.fixture(scope="session", autouse=FAST)
def _fast_lane_starts_no_process() -> Iterator[None]:
    """In the fast lane a test that starts a process (Chromium, the CLI, a worker) is skipped at that point."""
    import multiprocessing.process
    import subprocess

    def refuse(what: str) -> Callable[..., Any]:
        def start(*_args: Any, **_kwargs: Any) -> Any:
            pytest.skip(f"starts {what}: not in the fast lane (the markers missed it; see docs/testing.md)")

        return start

    with pytest.MonkeyPatch.context() as patch:  # session-wide, so module fixtures are held to it as well
        patch.setattr(subprocess.Popen, "__init__", refuse("a process"))
        patch.setattr(multiprocessing.process.BaseProcess, "start", refuse("a worker process"))
        patch.setattr(os, "fork", refuse("a forked process"))
        yield
