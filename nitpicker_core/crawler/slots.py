"""One reusable browser page per crawl worker: a warm renderer and HTTP cache, cookies cleared between URLs."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from nitpicker_core.crawler.browser import DEFAULT_VIEWPORT

# A fresh context now and then bounds what one renderer can accumulate; each costs a new renderer process and
# a cold HTTP cache (at 50 that was ~7% of a --no-image crawl's CPU on a 300-page site)
MAX_USES = 500


@dataclass
class _Slot:
    page: Any
    credentials: tuple[str, str] | None
    generation: int
    storage: list[dict[str, Any]] = field(default_factory=list, repr=False)  # its init script's localStorage
    uses: int = 0
    reset: asyncio.Task[bool] | None = (
        None  # the clean-up after its last URL, running while the crawl goes on
    )
    fresh: bool = False  # opened ahead of its first URL (``warm``): nothing to clean up yet


class PageSlots:
    """Leases each worker the same page for its successive URLs, as a person browsing would.

    A new context per URL starts a renderer process and re-downloads every stylesheet and script; a page
    per worker avoids both. Between URLs the cookies are cleared and the viewport is reset (started when a
    URL is done, so the round trips overlap the worker's bookkeeping and its next preflight); after a
    failure, a browser restart, a change of credentials or of the login's localStorage, or ``MAX_USES`` URLs
    the worker gets a fresh context (an init script, which writes the localStorage, cannot be taken back).
    """

    def __init__(self, host: Any, user_agent: str) -> None:
        self.host, self.user_agent = host, user_agent
        self._slots: dict[int, _Slot] = {}
        # a worker's page is opened by one caller at a time: ``warm`` may still be opening it when the worker's
        # first URL comes
        self._opening: dict[int, asyncio.Lock] = {}

    async def acquire(
        self,
        worker: int,
        credentials: dict[str, str] | None,
        cookies: list[dict[str, Any]] | None = None,
        storage: list[dict[str, Any]] | None = None,
    ) -> Any:
        """The worker's page, its cookies cleared; then ``cookies`` (a login's) added for the URL to come, in a
        context whose documents of the ``storage`` origins find their localStorage items (a login's) set."""
        async with self._opening.setdefault(worker, asyncio.Lock()):
            page = await self._acquire(worker, credentials, storage or [])
        if cookies:
            await page.context.add_cookies(cookies)
        return page

    async def _acquire(
        self, worker: int, credentials: dict[str, str] | None, storage: list[dict[str, Any]]
    ) -> Any:
        key = (credentials["username"], credentials["password"]) if credentials else None
        slot = self._slots.get(worker)
        generation = getattr(self.host, "restarts", 0)
        if slot is not None and (
            slot.credentials != key
            or slot.storage != storage
            or slot.generation != generation
            or slot.uses >= MAX_USES
            or slot.page.is_closed()
        ):
            await self._drop(worker)
            slot = None
        if slot is not None and slot.fresh:
            slot.fresh = False
        elif slot is not None:
            reset, slot.reset = slot.reset, None
            if not await (reset if reset is not None else _reset(slot.page)):
                await self._drop(worker)  # the page died between URLs: start over with a fresh one
                slot = None
        if slot is None:
            page = await self.host.new_page(self.user_agent, http_credentials=credentials)
            if storage:
                from nitpicker_core.crawler.login import storage_script

                try:
                    await page.context.add_init_script(script=storage_script(storage))
                except BaseException:
                    with contextlib.suppress(Exception):
                        await self.host.close_page(page)
                    raise
            slot = self._slots[worker] = _Slot(page, key, getattr(self.host, "restarts", 0), storage)
        slot.uses += 1
        return slot.page

    async def warm(self, worker: int, credentials: dict[str, str] | None) -> None:
        """Open the worker's page before its first URL comes (a new context starts a renderer: a few hundred ms
        that URL then does not wait for); nothing when the worker has one. Its first ``acquire`` takes it
        as it takes any page, dropping it if that URL needs other credentials."""
        async with self._opening.setdefault(worker, asyncio.Lock()):
            if worker in self._slots:
                return
            page = await self.host.new_page(self.user_agent, http_credentials=credentials)
            key = (credentials["username"], credentials["password"]) if credentials else None
            self._slots[worker] = _Slot(page, key, getattr(self.host, "restarts", 0), fresh=True)

    async def release(self, worker: int, healthy: bool) -> None:
        """Keep the page for the worker's next URL, or close it when the URL failed or hung."""
        if not healthy:
            await self._drop(worker)
            return
        slot = self._slots.get(worker)
        if slot is not None and slot.uses < MAX_USES:
            slot.reset = asyncio.create_task(_reset(slot.page))

    async def _drop(self, worker: int) -> None:
        slot = self._slots.pop(worker, None)
        if slot is not None:
            if slot.reset is not None:
                slot.reset.cancel()  # not awaited: it ends by itself, and a closed page is all it can meet
            with contextlib.suppress(Exception):
                await self.host.close_page(slot.page)

    async def close(self) -> None:
        # together: each close is a round trip to the browser, and the crawl's end waited for them in turn
        await asyncio.gather(*(self._drop(worker) for worker in list(self._slots)))


async def _reset(page: Any) -> bool:
    """Clear the page's cookies and restore its viewport; False when the page is gone."""
    try:
        await page.context.clear_cookies()
        if page.viewport_size != DEFAULT_VIEWPORT:  # known without asking the browser
            await page.set_viewport_size(dict(DEFAULT_VIEWPORT))
    except Exception:  # noqa: BLE001 - a dead page is a fresh page next time, never an error
        return False
    return True
