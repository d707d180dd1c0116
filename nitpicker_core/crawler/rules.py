"""Built-in crawl rules as an ordinary plugin: robots.txt, exclusions, in-scope headers and basic auth."""

from __future__ import annotations

import json
import weakref
from typing import Any

from nitpicker_core.crawler.robots import RobotsCache
from nitpicker_core.hookspecs import hookimpl
from nitpicker_core.records import CrawlContext
from nitpicker_core.urls import Excludes, Scope

STATE = "crawl-rules"
_ROUTED: weakref.WeakSet[Any] = weakref.WeakSet()


@hookimpl
def crawl_started(crawl: CrawlContext) -> None:
    opts = crawl.options
    crawl.state[STATE] = {
        "robots": RobotsCache(opts.get("user_agent") or "Nitpicker", enabled=not opts.get("ignore_robots")),
        "excludes": Excludes(opts.get("excludes"), opts.get("exclude_urls"), opts.get("exclude_keywords")),
        "scope": Scope(crawl.state.get("roots_with_credentials", crawl.roots), opts.get("scope")),
        "headers": crawl.state.get("headers", {}),
    }


@hookimpl(tryfirst=True)
def crawl_should_skip(url: str, crawl: CrawlContext) -> str | None:
    rules = crawl.state.get(STATE)
    if rules is None:
        return None
    robots = rules["robots"]
    if not robots.allowed(url):
        failure = robots.failure(url)  # a 5xx robots.txt disallows everything until it answers (RFC 9309)
        return f"blocked by robots.txt (it answered {failure})" if failure else "blocked by robots.txt"
    if rules["excludes"].is_excluded(url):
        return "excluded"
    return None


def keyword_skip_reason(url: str, html: str, crawl: CrawlContext) -> str | None:
    """The skip reason for a rendered page whose HTML matches an ``--exclude-keyword``, else None."""
    rules = crawl.state.get(STATE)
    hit = rules["excludes"].keyword_hit(html) if rules else None
    if hit is None:
        return None
    return json.dumps({"url": url, "matchedText": hit.text, "excludeKeywords": rules["excludes"].keywords},
                      ensure_ascii=False)


@hookimpl
async def crawl_before_navigate(page: Any, url: str, crawl: CrawlContext) -> None:
    """Send ``--header`` values only to in-scope URLs, never to other hosts the page talks to."""
    rules = crawl.state.get(STATE)
    if not rules or not rules["headers"]:
        return
    scope: Scope = rules["scope"]
    extra: dict[str, str] = rules["headers"]

    async def add_headers(route: Any) -> None:
        request = route.request
        if scope.is_internal(request.url):
            await route.continue_(headers={**request.headers, **extra})
        else:
            await route.continue_()

    if page in _ROUTED:  # a reused page keeps its route; adding another would stack them
        return
    _ROUTED.add(page)
    await page.route("**/*", add_headers)
