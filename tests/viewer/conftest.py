"""One real crawl of test_server for every viewer test, the app over it, and the app served in a thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support import run_cli

ROOTS = ("/", "/recursive/", "/redirect/", "/error-status/", "/meta/", "/jsonld/", "/analytics/", "/reuse/",
         "/lazy/", "/broken-external/", "/viewer-sandbox/")


@pytest.fixture(scope="session")
def viewer_archive(site, tmp_path_factory) -> Path:
    """test_server crawled in Chromium, plus a `lint` analysis so the violation views have rows."""
    from nitpicker_core import Analyzer, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    workdir = tmp_path_factory.mktemp("viewer")
    archive = workdir / "site.nitpicker"
    result = run_cli("crawl", "-o", str(archive), *(site + r for r in ROOTS), "--parallels", "2", cwd=workdir,
                     timeout=600)
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


@pytest.fixture(scope="session")
def viewer_app(viewer_archive):
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    app = create_app(viewer_archive, make_plugin_manager())
    yield app
    app.config["NITPICKER_CLOSE"]()


@pytest.fixture
def client(viewer_app):
    return viewer_app.test_client()


@pytest.fixture(scope="module")
def served(viewer_app):
    """The viewer on 127.0.0.1 (a free port) in a thread; yields its base URL without a trailing slash."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, viewer_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
