"""The crawler's own policy: scope, robots.txt, URL excludes and where ``--header`` values may go."""

from __future__ import annotations

import contextlib
import weakref
from typing import Any
from urllib.parse import urlsplit

from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.robots import RobotsCache
from nitpicker_core.urls import Excludes, Scope, split_credentials

__all__ = ["CrawlPolicy"]


class CrawlPolicy:
    """What the core decides about every URL before any plugin is asked; built from the crawl's options.

    Scope and robots.txt are not plugin business: a crawl without them would go where it must not, so
    the crawler owns them and no plugin can switch them off (``--ignore-robots`` still can).
    """

    def __init__(self, options: CrawlOptions) -> None:
        # the roots as given, credentials included: the scope hands them to in-scope requests only
        self.scope = Scope(list(options.roots), [split_credentials(s)[0] for s in options.scope])
        self.robots = RobotsCache(options.user_agent or "Nitpicker", enabled=not options.ignore_robots)
        self.excludes = Excludes(options.excludes, options.exclude_urls)
        self.headers = dict(options.headers)
        self._routed: weakref.WeakSet[Any] = weakref.WeakSet()

    def skip_reason(self, url: str, robots: bool = True) -> str | None:
        """``blocked by robots.txt`` or ``excluded`` for ``url``, else None. May fetch robots.txt: blocks.
        ``robots=False`` for a URL nothing will be asked of: its host's robots.txt is neither read nor obeyed."""
        if robots and not self.robots.allowed(url):
            failure = self.robots.failure(
                url
            )  # a 5xx robots.txt disallows everything until it answers (RFC 9309)
            return f"blocked by robots.txt (it answered {failure})" if failure else "blocked by robots.txt"
        if self.excludes.is_excluded(url):
            return "excluded"
        return None

    def crawl_delay(self, url: str) -> tuple[str, float] | None:
        """(host, seconds) when robots.txt asks for a Crawl-delay on ``url``'s host."""
        delay = self.robots.crawl_delay(url)
        return (urlsplit(url).netloc.lower(), delay) if delay else None

    async def route_headers(self, page: Any) -> None:
        """Send ``--header`` values only to in-scope URLs, never to other hosts the page talks to."""
        if not self.headers or page in self._routed:  # a reused page keeps its route; another would stack
            return
        scope, extra = self.scope, self.headers

        async def add_headers(route: Any) -> None:
            request = route.request
            if scope.is_internal(request.url):
                await route.continue_(headers={**request.headers, **extra})
            else:
                await route.continue_()

        self._routed.add(page)
        await page.route("**/*", add_headers)

    def abort(self) -> None:
        """Cut robots.txt fetches in flight (the stop's grace is over)."""
        abort = getattr(self.robots, "abort", None)
        if abort is not None:
            with contextlib.suppress(Exception):
                abort()
