"""`crawl --screenshots`: a wrapper around the scrape that photographs each rendered page once it is read."""

from __future__ import annotations

import asyncio
import base64
import inspect
import time
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any

from nitpicker_core import HTML_TYPES, CrawlContext, PageError, ScrapeResult, Screenshot, hookimpl

from . import PHASES_KEY

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["capture", "crawl_scrape"]

#: the width every screenshot is taken at (the crawl's own desktop viewport), and its viewport height
WIDTH, VIEWPORT_HEIGHT = 1280, 960
#: the full-size image stops here: a longer page is cut (an endless feed would make a 100 MB image)
MAX_HEIGHT = 8000
QUALITY = 70  # JPEG: a text page is 10-60 kB, an 8000 px colourful one ~600 kB (measured)
#: the thumbnail is the first viewport (what a visitor sees first) at a quarter of its size: 320 × 240
THUMB_SCALE = 0.25
#: seconds both captures may take together; a page that overruns keeps everything else and says why
TIMEOUT = 30.0
_TOP_JS = """() => {
  window.scrollTo(0, 0);
  return Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0);
}"""


async def capture(page: Page) -> Screenshot:
    """The page from its top: up to MAX_HEIGHT px at WIDTH px, and a thumbnail of its first viewport."""
    if page.viewport_size != {"width": WIDTH, "height": VIEWPORT_HEIGHT}:
        # the image presets leave the viewport at their last width: photograph the desktop layout
        await page.set_viewport_size({"width": WIDTH, "height": VIEWPORT_HEIGHT})
    height = max(1, min(int(await page.evaluate(_TOP_JS) or 0), MAX_HEIGHT))
    # animations stopped: the same page gives the same bytes, so identical pages share one stored image
    image = await page.screenshot(
        type="jpeg",
        quality=QUALITY,
        full_page=True,
        animations="disabled",
        clip={"x": 0, "y": 0, "width": WIDTH, "height": height},
        timeout=TIMEOUT * 1000,
    )
    top = min(height, VIEWPORT_HEIGHT)
    # Chromium scales the thumbnail itself (no image library, and no decoding of the big image in Python):
    # one more capture of the first viewport, ~50 ms, off the event loop
    session = await page.context.new_cdp_session(page)
    try:
        shot = await session.send(
            "Page.captureScreenshot",
            {
                "format": "jpeg",
                "quality": QUALITY,
                "clip": {"x": 0, "y": 0, "width": WIDTH, "height": top, "scale": THUMB_SCALE},
            },
        )
    finally:
        await session.detach()
    return Screenshot(
        image=image,
        width=WIDTH,
        height=height,
        thumbnail=base64.b64decode(shot["data"]),
        thumb_width=round(WIDTH * THUMB_SCALE),
        thumb_height=round(top * THUMB_SCALE),
    )


async def _photographed(scraping: Awaitable[ScrapeResult] | ScrapeResult, page: Page) -> ScrapeResult:
    result = await scraping if inspect.isawaitable(scraping) else scraping
    if result is None or result.html is None or result.is_skipped or result.content_type not in HTML_TYPES:
        return result  # nothing was rendered: a redirect answered by the server, a PDF, a failed page
    start = time.perf_counter()
    try:
        result.screenshot = await asyncio.wait_for(capture(page), TIMEOUT)
    except TimeoutError:
        result.errors.append(PageError(step="screenshot", message=f"timed out after {TIMEOUT:g} s"))
    except Exception as exc:  # noqa: BLE001 - a page that cannot be photographed is still a crawled page
        lines = str(exc).strip().splitlines()
        result.errors.append(PageError(step="screenshot", message=lines[0] if lines else type(exc).__name__))
    phases = result.extra.get(PHASES_KEY)
    if isinstance(phases, dict):  # the crawl's per-phase clock (commit stats) shows what screenshots cost
        phases["screenshot"] = phases.get("screenshot", 0.0) + time.perf_counter() - start
    return result


@hookimpl(wrapper=True)
def crawl_scrape(url: str, page: Page, crawl: CrawlContext, render: str) -> Generator[None, Any, Any]:
    """With ``screenshots`` on, the full scrape's result gets ``screenshot``; nothing else changes."""
    scraping = yield
    if render != "full" or not crawl.options.get("screenshots") or scraping is None:
        return scraping
    return _photographed(scraping, page)
