"""Settle a rendered page at its own pace: ``load``, then no request of its own in flight for a short window."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Self

#: seconds with nothing in flight after which the page counts as settled: long enough for a script's
#: follow-up request (a fetch after ``load``, a redirect timer of 0) to start, far below networkidle's 500 ms
QUIET_SECONDS = 0.05
# Requests that are not the network: they finish inside the renderer, and some never report an end
_LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-extension:")


class PageListener:
    """Handlers on a page's events for the length of a ``with`` block."""

    def __init__(self, page: Any, handlers: dict[str, Any]) -> None:
        self.page = page
        self._handlers = handlers

    def __enter__(self) -> Self:
        for event, handler in self._handlers.items():
            self.page.on(event, handler)
        return self

    def __exit__(self, *_exc: object) -> None:
        for event, handler in self._handlers.items():
            with contextlib.suppress(Exception):
                self.page.remove_listener(event, handler)


class InFlight(PageListener):
    """The page's requests that have started and neither finished nor failed, followed through page events."""

    def __init__(self, page: Any) -> None:
        super().__init__(page, {"request": self._started, "requestfinished": self._ended, "requestfailed": self._ended})
        self.pending: set[Any] = set()
        self._changed = asyncio.Event()

    def _started(self, request: Any) -> None:
        if request.url.startswith(_LOCAL_SCHEMES):
            return
        # a redirect hop ends when the next request of its chain starts, whatever events it got
        self.pending.discard(request.redirected_from)
        self.pending.add(request)
        self._changed.set()

    def _ended(self, request: Any) -> None:
        self.pending.discard(request)
        self._changed.set()

    async def quiet(self, deadline: float, window: float = QUIET_SECONDS) -> bool:
        """Wait until nothing has been in flight for ``window`` seconds; False when ``deadline`` (monotonic) came first."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            busy = bool(self.pending)
            try:
                await asyncio.wait_for(self._changed.wait(), left if busy else min(window, left))
            except TimeoutError:
                if not busy:
                    return True  # a whole window without a request starting or ending
                return False


async def settle(page: Any, in_flight: InFlight, seconds: float) -> bool:
    """Wait for ``load`` and then for a quiet network, both within ``seconds``; True when the page settled."""
    deadline = time.monotonic() + seconds
    try:
        await asyncio.wait_for(page.wait_for_load_state("load", timeout=seconds * 1000), seconds + 1)
    except Exception:  # noqa: BLE001 - a page that never loads (a hanging image) is still read, capped
        return False
    return await in_flight.quiet(deadline)
