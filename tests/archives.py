"""Build small real archives through the scrape hooks, the way the crawler does."""

from __future__ import annotations

from pathlib import Path

from nitpicker_core import Anchor, CrawlContext, ScrapeResult
from nitpicker_core.plugins import make_plugin_manager

SITE = "http://site.test"


def page_html(title: str, body: str, links: list[str]) -> str:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>{body}</p>{anchors}</body></html>")


def demo_pages() -> list[ScrapeResult]:
    """A five-page site: three pages with text, one thin page, one 404, plus an external link."""
    specs = [
        ("/", "Home", "Welcome to the demo site, which has several pages worth auditing today.",
         ["/about", "/blog/", "/missing", "https://elsewhere.test/"]),
        ("/about", "About", "We are a small team that writes about careful website audits.", ["/"]),
        ("/blog/", "Blog", "Short.", ["/", "/about"]),
        ("/missing", "Not Found", "This page does not exist.", []),
    ]
    results = []
    for path, title, body, links in specs:
        url = SITE + path
        results.append(ScrapeResult(
            url=url, status=404 if path == "/missing" else 200, status_text="OK",
            content_type="text/html", content_length=1000, metadata={"title": title, "lang": "en"},
            html=page_html(title, body, links),
            anchors=[Anchor(href if href.startswith("http") else SITE + href, href) for href in links]))
    results.append(ScrapeResult(url="https://elsewhere.test/", status=200, content_type="text/html",
                                is_external=True, is_target=False, metadata={"title": "Elsewhere"}))
    return results


def build_archive(path: Path, pages: list[ScrapeResult] | None = None, pm=None, also=None) -> Path:
    """Fire crawl_started → crawl_page_scraped* → crawl_finished on the built-in archive writer.

    ``also(pm, crawl)`` fires further events (resources, errors, …) before the crawl finishes.
    """
    pm = pm or make_plugin_manager()
    crawl = CrawlContext(output=path, roots=[SITE + "/"], options={"parallels": 1})
    pm.hook.crawl_started(crawl=crawl)
    for result in pages if pages is not None else demo_pages():
        pm.hook.crawl_page_scraped(result=result, crawl=crawl)
    if also is not None:
        also(pm, crawl)
    pm.hook.crawl_finished(crawl=crawl, stats={"status": "complete", "pages": 5})
    return path
