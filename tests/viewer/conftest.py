"""One real crawl of test_server for every viewer test, the app over it, and the app served in a thread."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

AXE = Path(__import__("axe_playwright_python").__file__).with_name("axe.min.js")
ROOTS = (
    "/",
    "/recursive/",
    "/redirect/",
    "/error-status/",
    "/meta/",
    "/jsonld/",
    "/analytics/",
    "/reuse/",
    "/lazy/",
    "/broken-external/",
    "/viewer-sandbox/",
)


@pytest.fixture(scope="session")
def viewer_archive(site, tmp_path_factory) -> Path:
    """test_server crawled in Chromium, plus a `lint` analysis so the violation views have rows."""
    from nitpicker_core import Analyzer, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    workdir = tmp_path_factory.mktemp("viewer")
    archive = workdir / "site.nitpicker"
    result = run_cli(
        "crawl", "-o", str(archive), *(site + r for r in ROOTS), "--parallels", "2", cwd=workdir, timeout=600
    )
    assert archive.exists(), result.stderr

    class Lint(Analyzer):
        name = "lint"

        def each_page(self, page):
            if page.document.find(".//h1") is None:
                return PageReport({}, [Violation("no-h1", "the page has no h1", "warning")])
            return PageReport({}, [Violation("has-h1", "the page has an h1", "info")])

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Lint())

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "lint-plugin")
    run_analyze(pm, load_config(pm, data={}), archive, ["lint"], commit=1)
    return archive


@contextlib.contextmanager
def _viewer_over(archive: Path) -> Iterator[Any]:
    """The viewer app over ``archive`` with the built-in plugins; the archive is closed on leaving."""
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    app = create_app(archive, make_plugin_manager())
    try:
        yield app
    finally:
        app.config["NITPICKER_CLOSE"]()


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` on 127.0.0.1 (a free port) in a thread; yields its base URL without a trailing slash."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def viewer_over():
    """``with viewer_over(archive) as app``: the viewer over another archive (tests of their own sites)."""
    return _viewer_over


@pytest.fixture(scope="session")
def serving():
    """``with serving(app) as base_url``: an app served over real HTTP for the browser tests."""
    return _serving


@pytest.fixture(scope="session")
def viewer_app(viewer_archive):
    with _viewer_over(viewer_archive) as app:
        yield app


@pytest.fixture
def client(viewer_app):
    return viewer_app.test_client()


@pytest.fixture(scope="module")
def served(viewer_app):
    """The viewer on 127.0.0.1 (a free port) in a thread; yields its base URL without a trailing slash."""
    with _serving(viewer_app) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Chromium (the system's, as the crawler finds it) through Playwright, one per test module."""
    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=find_browser(), args=browser_args(), headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser page; the test fails on any console error, page error or failed response it saw.

    Modules that keep one page for all their tests define their own ``page``."""
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    yield page
    context.close()
    assert problems == []


def _axe_serious(browser: Any, base: str, paths: Iterable[str], theme: str) -> dict[str, list[Any]]:
    """axe-core's serious and critical violations on each of ``paths`` in ``theme``, by path (empty: none)."""
    # bypass_csp: axe is injected as an inline script, which the viewer's own CSP rightly forbids
    context = browser.new_context(bypass_csp=True, locale="en-US", reduced_motion="reduce")
    context.add_init_script(f"try {{ localStorage.setItem('nitpicker-theme', '{theme}'); }} catch (e) {{}}")
    page = context.new_page()
    found = {}
    try:
        for path in paths:
            page.goto(base + path)
            assert page.locator("html").get_attribute("data-theme") == theme
            page.add_script_tag(path=str(AXE))
            result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            serious = [
                (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                for v in result["violations"]
                if v["impact"] in ("serious", "critical")
            ]
            if serious:
                found[path] = serious
    finally:
        context.close()
    return found


@pytest.fixture(scope="session")
def axe_serious():
    """``axe_serious(browser, base_url, paths, theme)``: axe-core's serious findings per path."""
    return _axe_serious
