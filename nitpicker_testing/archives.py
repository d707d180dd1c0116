"""Build real archives from plain data, through the archive sink and the scrape hooks, without a browser."""

from __future__ import annotations

import contextlib
import html as html_escape
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core import Anchor, CrawlContext, CrawlErrorRecord, Resource, ScrapeResult, join_url
from nitpicker_core.indexing import Indexer
from nitpicker_core.sinks import ArchiveSink, check_sink

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

SITE = "http://site.test"
PageData = ScrapeResult | Mapping[str, Any]


def page(
    url: str,
    html: str | None = None,
    *,
    title: str = "",
    links: Iterable[str] = (),
    status: int = 200,
    content_type: str = "text/html",
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    external: bool = False,
    **fields: Any,
) -> ScrapeResult:
    """One URL as the crawler would have stored it: a ScrapeResult from plain values.

    ``links`` are hrefs as written on the page (relative ones are resolved against ``url``) and become its
    anchors. Without ``html`` an HTML page gets a small document with the title and the links; an external
    URL gets none (the crawler only checks those). ``fields`` are any other ScrapeResult field.
    """
    hrefs = list(links)
    if html is None and not external and content_type == "text/html":
        anchors = "".join(f'<a href="{html_escape.escape(h)}">{html_escape.escape(h)}</a> ' for h in hrefs)
        html = (
            f"<!doctype html><html lang='en'><head><title>{html_escape.escape(title)}</title></head>"
            f"<body><h1>{html_escape.escape(title)}</h1>{anchors}</body></html>"
        )
    meta = {"title": title, **(metadata or {})} if title else dict(metadata or {})
    return ScrapeResult(
        url=url,
        status=status,
        status_text="OK" if status == 200 else "",
        content_type=content_type,
        content_length=len(html.encode()) if html is not None else None,
        headers=dict(headers or {}),
        metadata=meta,
        html=html,
        source=source,
        is_external=external,
        is_target=not external,
        anchors=None if external else [_anchor(url, href) for href in hrefs],
        **fields,
    )


def _anchor(url: str, href: str) -> Anchor:
    target, _, fragment = join_url(url, href).partition("#")
    return Anchor(target, href, fragment, raw_href=href)


def as_result(item: PageData) -> ScrapeResult:
    """``item`` itself when it is a ScrapeResult, else ``page(**item)``."""
    return item if isinstance(item, ScrapeResult) else page(**item)


def demo_pages(site: str = SITE) -> list[ScrapeResult]:
    """A small site: a home page linking to two pages and an external site, one thin page, one 404."""
    return [
        page(site + "/", title="Home", links=["/about", "/blog/", "/missing", "https://elsewhere.test/"]),
        page(site + "/about", title="About", links=["/"]),
        page(site + "/blog/", title="Blog", links=["/", "/about"]),
        page(site + "/missing", title="Not Found", status=404),
        page("https://elsewhere.test/", title="Elsewhere", external=True),
    ]


class ArchiveBuilder:
    """One crawl being stored: each call writes to the archive sink, then fires the hook observers get.

    The same order as the crawler's writer thread: ``sink.put_*`` first, then ``crawl_page_scraped``,
    ``crawl_page_skipped``, ``crawl_resource_received`` or ``crawl_error``.
    """

    def __init__(self, pm: NitpickerPluginManager, crawl: CrawlContext, sink: ArchiveSink) -> None:
        self.pm, self.crawl, self.sink = pm, crawl, sink

    @property
    def commit(self) -> int:
        return self.sink.commit

    def page(self, item: PageData) -> ScrapeResult:
        result = as_result(item)
        self.sink.put_page(result)
        self.pm.hook.crawl_page_scraped(result=result, crawl=self.crawl)
        return result

    def skipped(self, url: str, reason: str, *, is_external: bool = False) -> None:
        self.sink.put_skipped(url, reason, is_external=is_external)
        self.pm.hook.crawl_page_skipped(url=url, reason=reason, crawl=self.crawl, is_external=is_external)

    def resource(self, resource: Resource, referrer_url: str) -> None:
        self.sink.put_resource(resource, referrer_url)
        self.pm.hook.crawl_resource_received(resource=resource, referrer_url=referrer_url, crawl=self.crawl)

    def error(self, error: CrawlErrorRecord) -> None:
        self.sink.put_crawl_error(error)
        self.pm.hook.crawl_error(url=error.url, error=error, crawl=self.crawl)


@contextlib.contextmanager
def archive_builder(
    path: Path | str,
    *,
    pm: NitpickerPluginManager | None = None,
    roots: list[str] | None = None,
    mode: str = "new",
    options: Mapping[str, Any] | None = None,
) -> Iterator[ArchiveBuilder]:
    """Open a commit of the archive at ``path`` through ``crawl_open_archive`` and store what the block adds.

    ``pm`` defaults to a plugin manager with the installed plugins (the built-in archive writer among
    them). Leaving the block finishes the commit as ``complete`` and fires ``crawl_finished``; an exception
    abandons it (nothing of it is written). ``mode`` is ``CrawlContext.mode`` (``new`` adds a commit).
    """
    if pm is None:
        from nitpicker_core.plugins import make_plugin_manager

        pm = make_plugin_manager()
    crawl = CrawlContext(
        output=Path(path),
        roots=list(roots or [SITE + "/"]),
        options={"parallels": 1, **(options or {})},
        mode=mode,
    )
    sink = check_sink(pm.hook.crawl_open_archive(crawl=crawl, indexer=Indexer(pm)))
    crawl.commit = sink.commit
    try:
        pm.hook.crawl_started(crawl=crawl)
        yield ArchiveBuilder(pm, crawl, sink)
    except BaseException:
        sink.abandon()
        raise
    stats = {**sink.commit_stats(), "status": "complete"}
    sink.finish("complete", stats)
    pm.hook.crawl_finished(crawl=crawl, stats=stats)


def build_archive(
    path: Path | str,
    pages: Iterable[PageData] | None = None,
    *,
    pm: NitpickerPluginManager | None = None,
    roots: list[str] | None = None,
) -> Path:
    """Write ``pages`` (ScrapeResults or ``page()`` keyword mappings; default ``demo_pages()``) as one commit."""
    with archive_builder(path, pm=pm, roots=roots) as build:
        for item in demo_pages() if pages is None else pages:
            build.page(item)
    return Path(path)
