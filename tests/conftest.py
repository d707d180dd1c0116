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


@pytest.fixture(scope="session")
def structured_data_archive(site, tmp_path_factory):
    """test_server's /structured-data/ crawled, then analyzed by `structured-data` with the CLI: the analyzer's
    exact findings (tests/analyzers/test_structured_data.py) and the viewer's tree (tests/viewer) read it."""
    import shutil

    from support import crawl_subtree, structured_data_env

    work = tmp_path_factory.mktemp("structured")
    crawled = crawl_subtree(f"{site}/structured-data/", work)
    analyzed = work / "analyzed.nitpicker"
    shutil.copyfile(crawled, analyzed)
    env = structured_data_env(work / "entry")
    result = run_cli(
        "analyze",
        str(analyzed),
        "--plugin",
        "structured-data",
        cwd=work,
        env=env,
        timeout=300,
        subprocess=True,
    )
    assert result.returncode == 0, result.stderr
    return analyzed


def _crawl_js_site(site: str, work: Any, *flags: str) -> Any:
    archive = work / "js.nitpicker"
    result = run_cli(
        "crawl", "--parallels", "2", *flags, "-o", str(archive), f"{site}/js-site/", cwd=work, timeout=300
    )
    assert "complete:" in result.stderr and archive.exists(), result.stderr
    return archive


@pytest.fixture(scope="session")
def js_site_archive(site, tmp_path_factory):
    """test_server's /js-site/ crawled in Chromium: the JavaScript-dependence checks' exact findings
    (tests/checks_crawl/test_javascript_checks.py) and the viewer's raw-vs-rendered tab read it."""
    return _crawl_js_site(site, tmp_path_factory.mktemp("js-crawl"))


@pytest.fixture(scope="session")
def js_site_unrendered(site, tmp_path_factory):
    """/js-site/ crawled with --render never: one version of each page, nothing to compare."""
    return _crawl_js_site(site, tmp_path_factory.mktemp("js-never"), "--render", "never")


@pytest.fixture(scope="session")
def js_site_auto(site, tmp_path_factory):
    """/js-site/ crawled with --render auto: each scripted page its own template's sample."""
    return _crawl_js_site(site, tmp_path_factory.mktemp("js-auto"), "--render", "auto")


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


# --- Work units of the xdist workers (bin/test: --dist loadfile --no-loadscope-reorder) ---------------------------
# A session fixture (one crawl of a test_server section, a Dask cluster) is made once per worker process that
# runs a module using it; with one module per unit, two or three workers each made it. The modules sharing one
# are one unit, so each such fixture runs once per run. (A crawl cannot be shared across workers: each worker's
# test site has a port of its own, and the archive holds its URLs.) A directory stands for its own modules.
SHARED_UNITS = {
    # viewer_archive: test_server crawled from 11 roots, plus a lint analysis
    "tests/viewer/": ("tests/viewer/",),
    "tests/reports/": ("tests/reports/",),  # report_archive
    "tests/queries/": ("tests/queries/",),  # crawled
    "tests/screenshots/": ("tests/screenshots/",),  # shots
    "tests/diffs/": ("tests/diffs/",),  # change_pair
    "tests/dask/": ("tests/dask/",),  # dask_cluster
    # js_site_archive and js_site_unrendered: /js-site/ crawled rendered and with --render never
    "js-site": ("tests/checks_crawl/test_javascript_checks.py", "tests/viewer/test_versions_tab.py"),
    # tests/e2e/conftest.py's crawl(..., shared=True): /recursive/, /scope/blog/ and /error-status/ in two each
    "e2e-shared-crawls": (
        "tests/e2e/test_crawl_basic.py",
        "tests/e2e/test_crawl_history.py",
        "tests/e2e/test_crawl_rules.py",
        "tests/e2e/test_crawl_control.py",
    ),
}
_UNIT_OF = {member: unit for unit, members in SHARED_UNITS.items() for member in members}


def _unit(path: str) -> str:
    """The work unit of a test module: the SHARED_UNITS entry naming it or its directory, else the module."""
    return _UNIT_OF.get(path) or _UNIT_OF.get(path.rsplit("/", 1)[0] + "/") or path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the modules of each SHARED_UNITS entry as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedDirScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid.split("::", 1)[0])

    return SharedDirScheduling(config, log)


# The longest units first (measured: unit totals of a whole run's --durations=0, 3 December). Workers take whole
# units in this order; a long unit taken last would keep one worker busy after the others have finished.
LONG_FIRST = (
    "tests/viewer/",
    "tests/reports/",
    "e2e-shared-crawls",
    "tests/pipeline/test_pipeline_cli.py",
    "tests/e2e/test_kill_campaign.py",
    "tests/dask/",
    "tests/e2e/test_crawl_stop.py",
    "tests/e2e/test_crawl_render_auto.py",
    "tests/e2e/test_crawl_login.py",
    "tests/e2e/test_crawl_stable_recrawl.py",
    "tests/viewer/seo/test_seo_views_browser.py",
    "tests/e2e/test_crawl_edges.py",
    "tests/queries/",
    "tests/e2e/test_crawl_limits.py",
    "tests/generations/test_update_revalidation.py",
    "tests/screenshots/",
    "tests/analyze/test_analyze_engine.py",
    "tests/generations/test_state_hashes.py",
    "tests/checks/test_issues_cli.py",
    "tests/scrape/test_scrape.py",
    "tests/viewer/issues/test_issues_browser.py",
    "tests/e2e/test_crawl_url_rules.py",
    "tests/demo/test_demo_installed.py",
    "tests/analyzers/test_axe.py",
    "tests/test_example_plugin.py",
    "tests/e2e/test_crawl_statuses.py",
    "tests/pipeline/test_pipeline_settings.py",
    "tests/analyzers/test_lighthouse.py",
)
# --- end of the work units ---------------------------------------------------------------------------------------


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


def _source(func: Any) -> str:
    """The text of a function (from its code objects' lines: inspect.getsource tokenizes, ~10 ms a call)."""
    import linecache

    code = getattr(func, "__code__", None)
    if code is None:  # a class
        try:
            return inspect.getsource(func)
        except (OSError, TypeError):
            return ""
    lines, stack = [code.co_firstlineno], [code]
    while stack:
        current = stack.pop()
        lines.extend(line for _, _, line in current.co_lines() if line)
        stack.extend(const for const in current.co_consts if inspect.iscode(const))
    return "".join(linecache.getlines(code.co_filename)[code.co_firstlineno - 1 : max(lines)])


_SIGNS: dict[Any, frozenset[str]] = {}


def _signs(func: Any) -> frozenset[str]:
    """``browser``/``subprocess`` when a test helper's own text or a test helper it names shows them."""
    func = inspect.unwrap(func)
    if func in _SIGNS:
        return _SIGNS[func]
    _SIGNS[func] = frozenset()  # a helper naming itself (recursion) adds nothing
    module = inspect.getmodule(func)
    if module is None or not (getattr(module, "__file__", "") or "").startswith(_TESTS):
        return _SIGNS[func]  # the project's own code is what the test proves, not a sign of how it runs
    if module.__name__ == "support" or func.__name__ == "_fast_lane_starts_no_process":
        return _SIGNS[
            func
        ]  # support's helpers are signs by their names (run_cli runs in-process, RunningCli not)
    text = _source(func)
    found = {"browser"} if BROWSER_SIGNS.search(text) else set()
    if SUBPROCESS_SIGNS.search(text):
        found.add("subprocess")
    names = vars(module)
    for name in set(_CALLED.findall(text)):
        target = names.get(name)
        if hasattr(target, "__wrapped__"):  # a fixture asked for by name (request.getfixturevalue)
            target = inspect.unwrap(target)
        if target is not func and (inspect.isfunction(target) or inspect.isclass(target)):
            found |= _signs(target)
    _SIGNS[func] = frozenset(found)
    return _SIGNS[func]


def _uses(item: pytest.Item) -> frozenset[str]:
    """The signs of the test function, of every fixture in its closure and of the test helpers they name."""
    found = _signs(getattr(item, "obj", None)) if callable(getattr(item, "obj", None)) else frozenset()
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixturedef in info.name2fixturedefs.get(name, ()) if info else ():
            found |= _signs(fixturedef.func)
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in sorted(_uses(item)):
            if not item.get_closest_marker(mark):
                item.add_marker(getattr(pytest.mark, mark))
    rank = {unit: i for i, unit in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(_unit(item.nodeid.split("::")[0]), len(LONG_FIRST)))  # stable within


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
