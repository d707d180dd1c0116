"""Settle a rendered page at its own pace: ``load``, then no request of its own in flight for a short window."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Callable
from typing import Any, Self

#: seconds with nothing in flight after which the page counts as settled: long enough for a script's
#: follow-up request (a fetch after ``load``, a redirect timer of 0) to start, far below networkidle's 500 ms
QUIET_SECONDS = 0.05
#: seconds with nothing in flight that settle a page whose last request could not start another (an image,
#: a stylesheet): a timer of 0 after ``load`` still starts its request in time, at 30 ms less per page
BRIEF_QUIET_SECONDS = 0.02
# Resource types whose end seldom runs page script (an onload attribute can): the brief window covers them
_NO_FOLLOW_UP = frozenset({"image", "stylesheet", "font", "media", "texttrack", "manifest"})
# Requests that are not the network: they finish inside the renderer, and some never report an end
_LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-extension:")


class _Dispatch:
    """One Playwright listener per event for the life of a page, calling whatever handlers are borrowed now.

    Adding or removing a page's first listener of an event sends the driver a subscription message (and
    Playwright inspects the handler's signature each time): per page and event that was 7-8 % of a crawl's
    Python CPU (py-spy), so the listeners stay and only the Python-side handler lists change per URL.
    """

    def __init__(self, page: Any) -> None:
        self.page = page
        self.handlers: dict[str, list[Callable[..., Any]]] = {}

    def add(self, event: str, handler: Callable[..., Any]) -> None:
        handlers = self.handlers.get(event)
        if handlers is None:
            handlers = self.handlers[event] = []
            self.page.on(event, lambda arg, name=event: self._fire(name, arg))
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


def _dispatch(page: Any) -> _Dispatch:
    found = _DISPATCH.get(page)
    if found is None:
        found = _DISPATCH[page] = _Dispatch(page)
    return found


class PageListener:
    """Handlers on a page's events for the length of a ``with`` block (the page's listeners outlive it)."""

    def __init__(self, page: Any, handlers: dict[str, Any]) -> None:
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

    def __init__(self, page: Any) -> None:
        super().__init__(page, {"request": self._started, "requestfinished": self._ended, "requestfailed": self._ended,
                                "load": self._load})
        self.pending: set[Any] = set()
        self._changed = asyncio.Event()
        self._loaded = asyncio.Event()
        self._chained_until = 0.0  # monotonic time before which the full window applies
        self._after_load = False  # the page's `load` has fired since this URL began

    def _load(self, _page: Any) -> None:
        self._after_load = True
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

    def _started(self, request: Any) -> None:
        if request.url.startswith(_LOCAL_SCHEMES):
            return
        # a redirect hop ends when the next request of its chain starts, whatever events it got
        self.pending.discard(request.redirected_from)
        self.pending.add(request)
        self._changed.set()

    def _ended(self, request: Any) -> None:
        self.pending.discard(request)
        if self._after_load and request.resource_type not in _NO_FOLLOW_UP:
            # Before `load` no window is needed: `load` waits for every script the page has run, and whatever
            # they started is still in flight then; only what ends afterwards can still start something
            self._chained_until = time.monotonic() + QUIET_SECONDS
        self._changed.set()

    async def quiet(self, deadline: float, window: float = QUIET_SECONDS) -> bool:
        """Wait until nothing has been in flight for ``window`` seconds; False when ``deadline`` (monotonic) came first.

        Only a script-capable request (a script, fetch, XHR, document…) that ends after ``load`` can start
        another when it ends; after an image, a stylesheet or a font, after requests that ended before ``load``
        and after ``load`` itself, the brief window is enough for a timer of 0.
        """
        brief = min(window, BRIEF_QUIET_SECONDS)
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                return False
            self._changed.clear()
            busy = bool(self.pending)
            need = max(brief, self._chained_until - now)
            try:
                await asyncio.wait_for(self._changed.wait(), left if busy else min(need, left))
            except TimeoutError:
                if not busy:
                    return True  # a whole window without a request starting or ending
                return False


def _load_states(page: Any) -> set[str] | None:
    """The lifecycle events the main frame's current document has reached, as Playwright tracks them.

    Private to Playwright, read because its public wait (``wait_for_load_state``) sends the driver three
    messages per call (measured 3-4 % of a crawl's Python CPU); None when it is not there to read.
    """
    states = getattr(getattr(page.main_frame, "_impl_obj", None), "_load_states", None)
    return states if isinstance(states, set) else None


async def settle(page: Any, in_flight: InFlight, seconds: float) -> bool:
    """Wait for ``load`` and then for a quiet network, both within ``seconds``; True when the page settled."""
    deadline = time.monotonic() + seconds
    if not await in_flight.loaded(deadline):
        return False  # a page that never loads (a hanging image) is still read, capped
    return await in_flight.quiet(deadline)
