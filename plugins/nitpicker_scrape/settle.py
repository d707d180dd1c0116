"""Settle a rendered page at its own pace: ``load``, then no request of its own in flight for a short window."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from playwright.async_api import Page, Request

#: seconds after a script-capable request that ended after ``load`` (a fetch, a script…): long enough for the
#: script's follow-up request (the next fetch of a chain, a redirect timer of 0) to start, far below
#: networkidle's 500 ms
QUIET_SECONDS = 0.05
#: seconds after ``load`` itself: a timer of 0 set by a load handler starts its request in time
BRIEF_QUIET_SECONDS = 0.02
#: seconds after any other request that ended after ``load`` (an image, the tab's favicon): an onload
#: attribute runs as it ends, and whatever it starts shows at once
TRAIL_QUIET_SECONDS = 0.01
# Resource types whose end hands the page's script something to act on (a response to read, a script to run,
# a frame's document): only they open the long window. Images, stylesheets, fonts and "other" (the tab's own
# favicon fetch after `load`, prefetches, pings) get the trailing one: an onload attribute is the most they run
_FOLLOW_UP = frozenset({"document", "script", "fetch", "xhr", "eventsource", "websocket"})
# Asked of the page once its windows have passed after a script-capable request ended: resolves when the page
# has run the tasks queued before it (a body read, a promise chain, a timer of 0). A busy renderer answers late,
# so the wait grows with the machine's load where a fixed window would not
DRAIN_JS = "() => new Promise((r) => setTimeout(() => setTimeout(r, 0), 0))"
#: seconds the drain may take at most (a page that replaced setTimeout, a renderer stuck in a script)
DRAIN_CAP_SECONDS = 2.0
# Requests that are not the network: they finish inside the renderer, and some never report an end
_LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-extension:")


class _Dispatch:
    """One Playwright listener per event for the life of a page, calling whatever handlers are borrowed now.

    Adding or removing a page's first listener of an event sends the driver a subscription message (and
    Playwright inspects the handler's signature each time): per page and event that was 7-8 % of a crawl's
    Python CPU (py-spy), so the listeners stay and only the Python-side handler lists change per URL.
    """

    def __init__(self, page: Page) -> None:
        self.page = page
        self.handlers: dict[str, list[Callable[..., Any]]] = {}

    def add(self, event: str, handler: Callable[..., Any]) -> None:
        handlers = self.handlers.get(event)
        if handlers is None:
            handlers = self.handlers[event] = []
            # Playwright's stub has one overload per literal event name; this one is chosen at run time
            self.page.on(event, lambda arg, name=event: self._fire(name, arg))  # type: ignore[call-overload]
        handlers.append(handler)

    def _fire(self, event: str, arg: Any) -> None:
        handlers = tuple(self.handlers[event])
        if not handlers and event == "dialog":
            # Between URLs nobody borrows the listener, yet its presence stops Playwright's own dismissal
            dismiss_dialog(arg)
        for handler in handlers:
            handler(arg)

    def remove(self, event: str, handler: Callable[..., Any]) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.handlers[event].remove(handler)


def dismiss_dialog(dialog: Any) -> None:
    """Dismiss an alert()/confirm() without waiting: it would block the page's scripts until answered."""
    task = asyncio.ensure_future(dialog.dismiss())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


_DISPATCH: weakref.WeakKeyDictionary[Any, _Dispatch] = weakref.WeakKeyDictionary()


def _dispatch(page: Page) -> _Dispatch:
    found = _DISPATCH.get(page)
    if found is None:
        found = _DISPATCH[page] = _Dispatch(page)
    return found


class PageListener:
    """Handlers on a page's events for the length of a ``with`` block (the page's listeners outlive it)."""

    def __init__(self, page: Page, handlers: dict[str, Any]) -> None:
        self.page = page
        self._handlers = handlers

    def __enter__(self) -> Self:
        dispatch = _dispatch(self.page)
        for event, handler in self._handlers.items():
            dispatch.add(event, handler)
        return self

    def __exit__(self, *_exc: object) -> None:
        dispatch = _dispatch(self.page)
        for event, handler in self._handlers.items():
            dispatch.remove(event, handler)


class InFlight(PageListener):
    """The page's requests that have started and neither finished nor failed, followed through page events."""

    def __init__(self, page: Page) -> None:
        super().__init__(
            page,
            {
                "request": self._started,
                "requestfinished": self._ended,
                "requestfailed": self._ended,
                "load": self._load,
            },
        )
        self.pending: set[Any] = set()
        self._changed = asyncio.Event()
        self._loaded = asyncio.Event()
        # monotonic time until which a page with nothing in flight is not settled yet: each window counts from
        # the event that opened it (``load``, a request's end), not from whenever the scrape looks
        self._quiet_until = 0.0
        self._after_load = False  # the page's `load` has fired since this URL began
        self._drain = False  # a script-capable request ended after `load`: ask the page before settling

    def _extend(self, seconds: float) -> None:
        self._quiet_until = max(self._quiet_until, time.monotonic() + seconds)

    def _load(self, _page: Any) -> None:
        self._after_load = True
        self._extend(BRIEF_QUIET_SECONDS)
        self._loaded.set()

    async def loaded(self, deadline: float) -> bool:
        """Wait for the main frame's ``load``; False when ``deadline`` (monotonic) came first."""
        states = _load_states(self.page)
        if states is None:  # Playwright keeps it elsewhere now: its own wait, a few protocol messages dearer
            left = max(0.0, deadline - time.monotonic())
            try:
                await asyncio.wait_for(self.page.wait_for_load_state("load", timeout=left * 1000), left + 1)
            except Exception:  # noqa: BLE001 - a page that never loads (a hanging image) is still read, capped
                return False
            return True
        while "load" not in states:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._loaded.clear()  # set only by the page's events, which run on this loop: nothing slips by
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._loaded.wait(), left)
        return True

    def _started(self, request: Request) -> None:
        if request.url.startswith(_LOCAL_SCHEMES):
            return
        # a redirect hop ends when the next request of its chain starts, whatever events it got
        self.pending.discard(request.redirected_from)
        self.pending.add(request)
        self._changed.set()

    def _ended(self, request: Request) -> None:
        self.pending.discard(request)
        if self._after_load:
            # Before `load` no window is needed: `load` waits for every script the page has run, and whatever
            # they started is still in flight then; only what ends afterwards can still start something
            follow_up = request.resource_type in _FOLLOW_UP
            self._drain = self._drain or follow_up
            self._extend(QUIET_SECONDS if follow_up else TRAIL_QUIET_SECONDS)
        self._changed.set()

    async def none_of(self, kinds: frozenset[str], stall: float, deadline: float) -> bool:
        """Wait until no request of the resource types ``kinds`` is in flight; False when none of them started or
        ended for ``stall`` seconds (a request that hangs), or ``deadline`` (monotonic) came first.

        A wait that gives up only when nothing moves lasts as long as a loaded machine needs, and no longer
        than ``stall`` for a request that never ends."""
        moved = time.monotonic()
        while True:
            now = time.monotonic()
            left = min(deadline, moved + stall) - now
            if left <= 0:
                return False
            self._changed.clear()  # set only by the page's events, which run on this loop: nothing slips by
            if not any(request.resource_type in kinds for request in self.pending):
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
                moved = time.monotonic()

    async def quiet(self, deadline: float) -> bool:
        """Wait until nothing is in flight and every window has passed; False when ``deadline`` (monotonic) came first.

        The windows: ``BRIEF_QUIET_SECONDS`` after ``load``, ``QUIET_SECONDS`` after a script-capable request
        (a script, fetch, XHR, document…) that ended after ``load``, ``TRAIL_QUIET_SECONDS`` after any other.
        After a script-capable request, the page is also asked to run what it has queued (``DRAIN_JS``) before
        it counts as settled: under load its follow-up request may start later than any window.
        """
        if not self._after_load:  # `load` was reached before its event came here: it opens its window now
            self._after_load = True
            self._extend(BRIEF_QUIET_SECONDS)
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                return False
            self._changed.clear()
            if self.pending:
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    return False
                continue
            need = self._quiet_until - now
            if need <= 0:
                if not self._drain:
                    return True  # nothing in flight and no window open: nothing can start any more
                self._drain = False
                with contextlib.suppress(Exception):  # navigated away, closed, capped: look again either way
                    await asyncio.wait_for(self.page.evaluate(DRAIN_JS), min(left, DRAIN_CAP_SECONDS))
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(need, left))


def _load_states(page: Page) -> set[str] | None:
    """The lifecycle events the main frame's current document has reached, as Playwright tracks them.

    Private to Playwright, read because its public wait (``wait_for_load_state``) sends the driver three
    messages per call (measured 3-4 % of a crawl's Python CPU); None when it is not there to read.
    """
    states = getattr(getattr(page.main_frame, "_impl_obj", None), "_load_states", None)
    return states if isinstance(states, set) else None


async def settle(page: Page, in_flight: InFlight, seconds: float) -> bool:
    """Wait for ``load`` and then for a quiet network, both within ``seconds``; True when the page settled."""
    deadline = time.monotonic() + seconds
    if not await in_flight.loaded(deadline):
        return False  # a page that never loads (a hanging image) is still read, capped
    return await in_flight.quiet(deadline)
