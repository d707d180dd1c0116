"""One tab, many URLs: the page's listeners are attached once and each scrape sees only its own page's events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from nitpicker_scrape import scrape
from nitpicker_scrape.settle import QUIET_SECONDS, TRAIL_QUIET_SECONDS, InFlight, _load_states

from nitpicker_core.crawler.browser import BrowserHost
from test_server import serve

pytestmark = pytest.mark.browser
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
PATIENT = {"image": False, "timeouts": {"navigation": 60.0, "dom": 30.0, "idle": 60.0, "preset": 60.0}}
EVENTS = ("request", "requestfinished", "requestfailed", "load", "response", "console", "pageerror", "dialog")


@pytest.fixture(scope="module")
def tab() -> Iterator[tuple[str, Any]]:
    """The test site and a runner of one coroutine against one page reused for the whole module."""
    server, base = serve()
    loop = asyncio.new_event_loop()
    host = BrowserHost(extra_args=[LOOPBACK_ONLY])
    loop.run_until_complete(host.start())
    page = loop.run_until_complete(host.new_page("Nitpicker/test"))
    try:
        yield base, lambda make: loop.run_until_complete(make(page))
    finally:
        loop.run_until_complete(host.close())
        loop.close()
        server.shutdown()


def test_listeners_stay_attached_and_each_scrape_sees_its_own_page(tab):
    base, run = tab
    first = run(lambda page: scrape(f"{base}/reuse/", page, PATIENT))
    second = run(lambda page: scrape(f"{base}/settle/late/", page, PATIENT))
    third = run(lambda page: scrape(f"{base}/reuse/", page, PATIENT))
    # attached by the first scrape and kept: no subscription messages per URL
    counts = run(lambda page: _async({e: page._impl_obj.listener_count(e) for e in EVENTS}))
    assert counts == dict.fromkeys(EVENTS, 1)
    assert first.resources == third.resources == [f"{base}/reuse/pic.png"]
    assert second.resources == [f"{base}/settle/late/part/1", f"{base}/settle/late/part/2"]
    assert [a.href for a in second.anchors] == [
        f"{base}/settle/late/found"
    ]  # its late requests were waited for
    assert not first.errors and not second.errors and not third.errors


def test_a_dialog_between_urls_is_dismissed(tab):
    base, run = tab

    async def go(page: Any) -> str:
        await scrape(f"{base}/reuse/", page, PATIENT)
        # no scrape borrows the listeners now, and their presence stops Playwright's own dismissal
        await page.evaluate("setTimeout(() => { alert('late'); window.__after = 'ran'; }, 0)")
        await page.wait_for_function("window.__after === 'ran'", timeout=30_000)
        return await page.evaluate("window.__after")

    assert run(go) == "ran"


def test_load_is_read_from_playwrights_own_states(tab):
    # the cheap path of settle(): were this None after a Playwright upgrade, every page would pay the waiter
    base, run = tab

    async def go(page: Any) -> set[str] | None:
        await page.goto(f"{base}/reuse/", wait_until="load")
        return _load_states(page)

    states = run(go)
    assert states is not None and {"domcontentloaded", "load"} <= states


async def _async(value: Any) -> Any:
    return value


def test_only_a_request_that_can_run_script_keeps_the_long_quiet_window(tab):
    # the long window waits for a follow-up request a script may start; after an image the trailing one does
    base, run = tab

    async def go(page: Any) -> dict[str, tuple[bool, bool]]:
        finished: list[Any] = []

        def keep(request: Any) -> None:
            finished.append(request)

        page.on("requestfinished", keep)
        try:
            await page.goto(f"{base}/reuse/", wait_until="load")
            await page.goto(f"{base}/settle/late/", wait_until="load")
            await page.wait_for_function("[...document.links].some((a) => a.href.endsWith('/found'))")
        finally:
            page.remove_listener("requestfinished", keep)
        long_after: dict[str, tuple[bool, bool]] = {}
        for request in finished:
            before_load = InFlight(page)
            before_load._ended(request)
            # what ended before `load` cannot start anything `load` would not have waited for
            assert before_load._quiet_until == 0
            probe = InFlight(page)
            probe._after_load = True
            ended = time.monotonic()
            probe._ended(request)
            window = probe._quiet_until - ended
            assert window >= TRAIL_QUIET_SECONDS
            # (long window, the page asked to drain its queue before settling)
            long_after[request.resource_type] = (window >= QUIET_SECONDS, probe._drain)
        return long_after

    assert run(go) == {"document": (True, True), "image": (False, False), "fetch": (True, True)}
