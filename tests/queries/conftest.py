"""One real archive for the query tests: test_server crawled in Chromium, then analyzed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import run_cli

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
    "/clobber/",
    "/broken-external/",
    "/options/",
    "/query/",
    "/scope/admin/",
    "/exclude/",
)


@pytest.fixture(scope="session")
def qsite(site):
    return site


@pytest.fixture(scope="session")
def crawled(qsite, tmp_path_factory) -> Path:
    """The archive: one commit, the crawl of many route families plus a `lint` analysis."""
    from nitpicker_core import Analyzer, Column, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    workdir = tmp_path_factory.mktemp("queries")
    archive = workdir / "site.nitpicker"
    result = run_cli(
        "crawl",
        "-o",
        str(archive),
        *(qsite + r for r in ROOTS),
        "--parallels",
        "2",
        "--exclude",
        "/exclude/secret/*",
        cwd=workdir,
        timeout=600,
    )
    assert result.returncode in (0, 1, 2), result.stderr
    assert archive.exists(), result.stderr

    class Lint(Analyzer):
        name = "lint"
        columns = (Column("headings", "Headings"),)

        def each_page(self, page):
            headings = len(page.document.findall(".//h1"))
            found = (
                [
                    Violation(
                        "no-h1",
                        "the page has no h1",
                        "warning",
                        "body",
                        snippet="<body>",
                        help_url="https://rules.test/no-h1",
                    )
                ]
                if headings == 0
                else []
            )
            if not page.metadata.get("lang"):
                found.append(Violation("html-lang", "<html> has no lang attribute", "error", "html"))
            return PageReport({"headings": headings}, found)

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Lint())

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "lint-plugin")
    run_analyze(pm, load_config(pm, data={}), archive, ["lint"], commit=1)
    return archive


@pytest.fixture
def query(crawled):
    """Run a query through the real CLI and return its JSON."""
    import json

    def run(name: str, *params: str, archive: Path | None = None, ok: bool = True):
        result = run_cli("query", str(archive or crawled), name, *params)
        if ok:
            assert result.returncode == 0, result.stderr
            return json.loads(result.stdout)
        return result

    return run
