"""One render: the scrape hooks on a leased browser page, a failure told as plain data (local tabs and Dask workers)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker_core.crawler.errors import classify
from nitpicker_core.records import CrawlContext, ScrapeResult

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager

__all__ = ["RenderFailure", "render_page"]


@dataclass(frozen=True)
class RenderFailure:
    """Why a render gave no result: the error kind, the first line of the message, and whether it timed out.

    Plain data, so a Dask worker can send it back; the crawler decides what it means for the page.
    """

    kind: str
    message: str
    timed_out: bool = False


async def render_page(
    pm: NitpickerPluginManager,
    crawl: CrawlContext,
    slots: Any,
    slot: Any,
    url: str,
    *,
    light: bool,
    credentials: dict[str, str] | None,
    timeout: float,
    route: Callable[[Any], Awaitable[None]] | None = None,
    cookies: list[dict[str, Any]] | None = None,
    storage: list[dict[str, Any]] | None = None,
) -> ScrapeResult | RenderFailure | None:
    """``crawl_before_navigate`` then ``crawl_scrape`` for ``url`` on the page ``slots`` leases to ``slot``.

    None when no plugin scraped the URL. A page that cannot be leased (the browser will not start) raises.
    ``cookies``: a logged-in crawl's, added to the page's context before it navigates; ``storage``: its origins'
    localStorage, written in the page's documents of those origins before their scripts run.
    """
    page = await slots.acquire(slot, credentials, cookies, storage)
    healthy = False
    try:
        if route is not None:
            await route(page)
        for result in pm.hook.crawl_before_navigate(page=page, url=url, crawl=crawl):
            if asyncio.iscoroutine(result):
                await result
        scraped = pm.hook.crawl_scrape(url=url, page=page, crawl=crawl, render="light" if light else "full")
        if asyncio.iscoroutine(scraped):
            scraped = await asyncio.wait_for(scraped, timeout=timeout)
        healthy = True
    except TimeoutError:
        return RenderFailure("timeout", f"rendering {url} took longer than {timeout:.0f} s", timed_out=True)
    except Exception as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return RenderFailure(classify(exc), message)
    finally:
        await slots.release(slot, healthy)
    return scraped  # type: ignore[no-any-return]
