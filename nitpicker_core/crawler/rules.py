"""Built-in crawl rules as an ordinary plugin: ``--exclude-keyword`` through the ``crawl_page_filter`` hook.

Scope, robots.txt, URL excludes and in-scope headers are the crawler's own policy (see ``policy``); what
is left here judges a rendered page by its content, the way any third-party filter would.
"""

from __future__ import annotations

import json

from nitpicker_core.hookspecs import hookimpl
from nitpicker_core.records import CrawlContext, ScrapeResult
from nitpicker_core.urls import Excludes

STATE = "crawl-rules"  # this plugin's own scratch space in crawl.state


def _keywords(crawl: CrawlContext) -> Excludes:
    """The crawl's ``--exclude-keyword`` patterns, compiled once per crawl."""
    excludes = crawl.state.get(STATE)
    if excludes is None:
        excludes = crawl.state[STATE] = Excludes(keywords=crawl.options.get("exclude_keywords"))
    return excludes


@hookimpl
def crawl_page_filter(url: str, result: ScrapeResult, crawl: CrawlContext) -> str | None:
    """The skip reason for a rendered page whose HTML matches an ``--exclude-keyword``, else None."""
    if not crawl.options.get("exclude_keywords") or not result.html:
        return None
    excludes = _keywords(crawl)
    hit = excludes.keyword_hit(result.html)
    if hit is None:
        return None
    return json.dumps(
        {"url": url, "matchedText": hit.text, "excludeKeywords": excludes.keywords}, ensure_ascii=False
    )
