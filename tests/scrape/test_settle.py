"""When a rendered page counts as settled: late requests are waited for, endless polling is not, lazy-only scroll."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
from nitpicker_scrape import scrape
from nitpicker_scrape.settle import InFlight, settle
from support import server_hits

from nitpicker_core.crawler.browser import BrowserHost
from test_server import serve

pytestmark = pytest.mark.browser
T = TypeVar("T")
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
# A generous cap: settling is judged by what the page and the server saw, never by the clock
PATIENT = {"image": False, "timeouts": {"navigation": 60.0, "dom": 30.0, "idle": 60.0, "preset": 60.0}}


class Browser:
    """One browser for the module; ``on_page`` runs a coroutine against a fresh page of it."""

    def __init__(self, base: str, loop: asyncio.AbstractEventLoop, host: BrowserHost) -> None:
        self.base, self.loop, self.host = base, loop, host

    def on_page(self, use: Callable[[Any], Awaitable[T]]) -> T:
        async def go() -> T:
            page = await self.host.new_page("Nitpicker/test")
            try:
                return await use(page)
            finally:
                await self.host.close_page(page)

        return self.loop.run_until_complete(go())


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    server, base = serve()
    loop = asyncio.new_event_loop()
    host = BrowserHost(extra_args=[LOOPBACK_ONLY])
    loop.run_until_complete(host.start())
    try:
        yield Browser(base, loop, host)
    finally:
        loop.run_until_complete(host.close())
        loop.close()
        server.shutdown()


def test_requests_after_load_are_waited_for(browser):
    # two fetches in a row after load, 0.3 s each on the server, then the page adds a link
    result = browser.on_page(lambda page: scrape(f"{browser.base}/settle/late/", page, PATIENT))
    assert [(a.href, a.text) for a in result.anchors] == [(f"{browser.base}/settle/late/found", "late link")]


def test_a_script_busy_between_its_requests_is_waited_for(browser):
    # the second request starts 400 ms of script after the first ends, far past the 50 ms window: the page is
    # asked to run what it has queued before it counts as settled, and it answers only after its script
    result = browser.on_page(lambda page: scrape(f"{browser.base}/settle/busy/", page, PATIENT))
    assert result.resources == [f"{browser.base}/settle/late/part/1", f"{browser.base}/settle/late/part/2"]
    assert [(a.href, a.text) for a in result.anchors] == [(f"{browser.base}/settle/late/found", "late link")]


def test_a_page_that_polls_for_ever_settles_between_its_requests(browser):
    # networkidle (500 ms without a request) never comes on this page: the scrape used to wait out its cap
    before = server_hits(browser.base, "/settle/poll/tick")

    async def go(page: Any) -> bool:
        with InFlight(page) as in_flight:
            await page.goto(f"{browser.base}/settle/poll/", wait_until="domcontentloaded")
            return await settle(page, in_flight, 60.0)

    assert browser.on_page(go) is True
    result = browser.on_page(lambda page: scrape(f"{browser.base}/settle/poll/", page, PATIENT))
    assert result.metadata["title"] == "Polling"
    # one tick every 150 ms: waiting out the 60 s cap twice would have made some 800 requests
    assert server_hits(browser.base, "/settle/poll/tick") - before < 100


def test_a_hanging_request_is_capped(browser):
    async def go(page: Any) -> tuple[bool, set[str]]:
        with InFlight(page) as in_flight:
            await page.goto(f"{browser.base}/hang/", wait_until="domcontentloaded")
            settled = await settle(page, in_flight, 1.0)
            return settled, {request.url for request in in_flight.pending}

    assert browser.on_page(go) == (False, {f"{browser.base}/hang/forever.png"})


@pytest.mark.parametrize(
    ("path", "scrolled", "alt"), [("/settle/tall/", False, "eager"), ("/settle/tall-lazy/", True, "lazy")]
)
def test_only_pages_with_lazy_candidates_are_scrolled(browser, path, scrolled, alt):
    options = {**PATIENT, "image": True, "image_presets": ["desktop-compact"]}

    async def go(page: Any) -> tuple[Any, int]:
        result = await scrape(browser.base + path, page, options)
        return result, await page.evaluate("window.__scrolls")

    result, scrolls = browser.on_page(go)
    assert (scrolls > 0) is scrolled
    # either way the image is there and loaded: the lazy one because the page was scrolled to it
    assert [(i.alt, i.natural_width) for i in result.images] == [(alt, 10)]
    assert not result.errors
