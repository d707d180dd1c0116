"""Build small real archives through the archive sink and the scrape hooks, the way the crawler does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from nitpicker_core import Anchor, CrawlContext, CrawlErrorRecord, Resource, ScrapeResult, hookimpl
from nitpicker_core.indexing import Indexer
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.sinks import ArchiveSink, check_sink

SITE = "http://site.test"


def page_html(title: str, body: str, links: list[str]) -> str:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{body}</p>{anchors}</body></html>"
    )


def demo_pages() -> list[ScrapeResult]:
    """A five-page site: three pages with text, one thin page, one 404, plus an external link."""
    specs = [
        (
            "/",
            "Home",
            "Welcome to the demo site, which has several pages worth auditing today.",
            ["/about", "/blog/", "/missing", "https://elsewhere.test/"],
        ),
        ("/about", "About", "We are a small team that writes about careful website audits.", ["/"]),
        ("/blog/", "Blog", "Short.", ["/", "/about"]),
        ("/missing", "Not Found", "This page does not exist.", []),
    ]
    results = []
    for path, title, body, links in specs:
        url = SITE + path
        results.append(
            ScrapeResult(
                url=url,
                status=404 if path == "/missing" else 200,
                status_text="OK",
                content_type="text/html",
                content_length=1000,
                metadata={"title": title, "lang": "en"},
                html=page_html(title, body, links),
                anchors=[Anchor(href if href.startswith("http") else SITE + href, href) for href in links],
            )
        )
    results.append(
        ScrapeResult(
            url="https://elsewhere.test/",
            status=200,
            content_type="text/html",
            is_external=True,
            is_target=False,
            metadata={"title": "Elsewhere"},
        )
    )
    return results


class _Store:
    """Stores the scrape events a test fires in the archive sink, as the crawler's writer thread does.

    Registered as the plugin ``build-archive`` while an archive is built; its sink is in
    ``crawl.state["build-archive"]`` for a test that writes more (an inventory run…).
    """

    def __init__(self, sink: ArchiveSink) -> None:
        self.sink = sink

    @hookimpl
    def crawl_page_scraped(self, result: ScrapeResult) -> None:
        self.sink.put_page(result)

    @hookimpl
    def crawl_page_skipped(self, url: str, reason: str, is_external: bool) -> None:
        self.sink.put_skipped(url, reason, is_external=is_external)

    @hookimpl
    def crawl_resource_received(self, resource: Resource, referrer_url: str) -> None:
        self.sink.put_resource(resource, referrer_url)

    @hookimpl
    def crawl_error(self, error: CrawlErrorRecord) -> None:
        self.sink.put_crawl_error(error)


@contextlib.contextmanager
def storing(pm, crawl: CrawlContext) -> Iterator[ArchiveSink]:
    """Open ``crawl``'s archive sink through ``crawl_open_archive``; scrape events fired inside are stored.

    Leaving the block finishes the commit as complete, or abandons it when the block raised.
    """
    sink = check_sink(pm.hook.crawl_open_archive(crawl=crawl, indexer=Indexer(pm)))
    crawl.commit = sink.commit
    crawl.state["build-archive"] = sink
    store = _Store(sink)
    pm.register(store, name=f"build-archive-{id(store)}")
    try:
        pm.hook.crawl_started(crawl=crawl)
        yield sink
    except BaseException:
        sink.abandon()
        raise
    finally:
        pm.unregister(store)
    sink.finish("complete", {"status": "complete", "pages": 5})


def build_archive(path: Path, pages: list[ScrapeResult] | None = None, pm=None, also=None) -> Path:
    """Open an archive sink and fire crawl_started → crawl_page_scraped* into it, then finish the commit.

    ``also(pm, crawl)`` fires further events (resources, errors, …) before the crawl finishes.
    """
    pm = pm or make_plugin_manager()
    crawl = CrawlContext(output=path, roots=[SITE + "/"], options={"parallels": 1})
    with storing(pm, crawl):
        for result in pages if pages is not None else demo_pages():
            pm.hook.crawl_page_scraped(result=result, crawl=crawl)
        if also is not None:
            also(pm, crawl)
    return path
