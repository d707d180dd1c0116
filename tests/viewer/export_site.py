"""A small analyzed archive for the export, search and status-class tests (Flask client and browser alike)."""

from __future__ import annotations

from pathlib import Path

from archives import SITE, build_archive, demo_pages

from nitpicker_core import CrawlErrorRecord, Resource, ScrapeResult

EVIL = '=HYPERLINK("http://evil.test","click")'


def _pages() -> list[ScrapeResult]:
    extra = [
        ScrapeResult(
            url=SITE + f"/shop/item-{n}",
            status=200,
            content_type="text/html",
            content_length=500,
            metadata={"title": f"Item {n}" if n else EVIL, "lang": "en"},
            html=f"<html><head><title>Item {n}</title></head><body><p>{'word ' * n}</p></body></html>",
        )
        for n in range(12)
    ]
    extra += [
        ScrapeResult(url=SITE + "/old", status=301, content_type="text/html", metadata={"title": "Moved"}),
        ScrapeResult(url=SITE + "/boom", status=503, content_type="text/html", metadata={"title": "Busy"}),
        ScrapeResult(url=SITE + "/down", is_external=False),
    ]
    return [*demo_pages(), *extra]


def _also(pm, crawl):
    pm.hook.crawl_error(
        url=SITE + "/down",
        crawl=crawl,
        error=CrawlErrorRecord(SITE + "/down", "connection-refused", "refused", "fetch"),
    )
    pm.hook.crawl_resource_received(
        resource=Resource(SITE + "/a.css", status=200, content_type="text/css"),
        referrer_url=SITE + "/",
        crawl=crawl,
    )
    pm.hook.crawl_resource_received(
        resource=Resource(SITE + "/gone.js", status=404, content_type="application/javascript"),
        referrer_url=SITE + "/",
        crawl=crawl,
    )


def build_export_site(path: Path) -> Path:
    """Twenty URLs (2xx, 3xx, 4xx, 5xx, a failed fetch, a formula for a title, two resources), analyzed by
    ``words`` (a ``count`` cell with a note, a ``thin`` violation on short pages)."""
    from nitpicker_core import Analyzer, Cell, Column, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    class Words(Analyzer):
        name = "words"
        columns = (Column("count", "Words"),)

        def each_page(self, page):
            count = len(page.html.split())
            found = [Violation("thin", "few words", "warning")] if count < 12 else []
            return PageReport({"count": Cell(count, "words in the HTML")}, found)

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Words())

    build_archive(path, _pages(), also=_also)
    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "export-test-plugin")
    run_analyze(pm, load_config(pm, data={}), path, ["words"], commit=1)
    return path
