"""The single archive writer thread: scrape events are queued by browser workers, stored and announced in order."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from nitpicker_core.crawler.phases import PhaseClock
from nitpicker_core.records import ScrapeResult
from nitpicker_core.sinks import ArchiveSink

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager
    from nitpicker_core.records import CrawlContext

log = logging.getLogger(__name__)
_STOP = object()


class _Ask:
    """A call the event loop awaits (``EventSink.ask``): its result or error goes back to the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], func: Any, args: Any):
        self.loop, self.future, self.func, self.args = loop, future, func, args

    def __call__(self) -> None:
        try:
            value = self.func(*self.args)
        except BaseException as exc:
            self.refuse(exc)
            raise
        self._settle(self.future.set_result, value)

    def refuse(self, error: BaseException) -> None:
        self._settle(self.future.set_exception, RuntimeError(f"archive writes failed: {error}"))

    def _settle(self, how: Any, value: Any) -> None:
        def settle() -> None:
            if not self.future.done():
                how(value)

        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            self.loop.call_soon_threadsafe(settle)


def _skipped_outside_scope(url: str, reason: str) -> ScrapeResult:
    """A skipped URL of the crawl's own host outside the scope: internal, marked like its checked siblings.

    Stored through ``put_page`` (``put_skipped`` has no place for the mark), as the writer stores any skip.
    """
    return ScrapeResult(
        url=url,
        scraped=True,
        is_skipped=True,
        skip_reason=reason,
        is_external=False,
        is_target=False,
        anchors=[],
        images=[],
        extra={"outside_scope": True},
    )


def _store(archive: ArchiveSink, hook: str, kwargs: dict[str, Any]) -> None:
    """The archive sink's call for one event; the event's hook is fired after it, for observers."""
    if hook == "crawl_page_scraped":
        archive.put_page(kwargs["result"])
    elif hook == "crawl_page_skipped" and kwargs.get("outside_scope"):
        archive.put_page(_skipped_outside_scope(kwargs["url"], kwargs["reason"]))
    elif hook == "crawl_page_skipped":
        archive.put_skipped(kwargs["url"], kwargs["reason"], is_external=kwargs["is_external"])
    elif hook == "crawl_resource_received":
        archive.put_resource(kwargs["resource"], kwargs["referrer_url"])
    elif hook == "crawl_error":
        archive.put_crawl_error(kwargs["error"])
    else:
        raise ValueError(f"not a scrape event: {hook}")


class EventSink:
    """Stores each scrape event (page scraped/skipped, resource, error) in the archive sink, then fires its hook.

    All on one thread: SQLite has one writer, and doing the writes here keeps the event loop, and so the
    browser pages, free. The first exception stops the sink and is re-raised by ``close`` (a write
    failure aborts the crawl).
    """

    def __init__(
        self,
        pm: NitpickerPluginManager,
        crawl: CrawlContext,
        archive: ArchiveSink,
        *,
        clock: PhaseClock | None = None,
    ) -> None:
        self.pm, self.crawl, self.archive = pm, crawl, archive
        self.clock = clock
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=2000)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="nitpicker-writer", daemon=True)
        self._thread.start()

    def emit(self, hook: str, **kwargs: Any) -> None:
        if self.error is not None:
            raise RuntimeError(f"archive writes failed: {self.error}") from self.error
        self._queue.put((hook, kwargs))

    def call(self, func: Any, *args: Any) -> None:
        """Run ``func(*args)`` on the writer thread, in order with the hook events."""
        self._queue.put((func, args))

    def ask(self, func: Any, *args: Any) -> asyncio.Future[Any]:
        """Run ``func(*args)`` on the writer thread, in order with the events; await its result.

        The future fails with the sink's error when an earlier write failed (``func`` never runs then).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.put((_Ask(loop, future, func, args), ()))
        return future

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                target, args = item
                if self.error is not None:
                    if isinstance(target, _Ask):  # its caller waits: tell it why nothing was done
                        target.refuse(self.error)
                else:
                    if callable(target):
                        target(*args)
                    else:
                        started = time.perf_counter()
                        _store(self.archive, target, args)
                        args.pop("outside_scope", None)  # the store's business, not the hook's
                        getattr(self.pm.hook, target)(crawl=self.crawl, **args)
                        if self.clock is not None:  # a page's resources and errors count as its write
                            seconds = time.perf_counter() - started
                            self.clock.add(
                                "archive write", seconds, count=int(target == "crawl_page_scraped")
                            )
            except BaseException as exc:  # noqa: BLE001 - remembered and re-raised by close()
                log.debug("archive write failed", exc_info=True)
                self.error = exc
            finally:
                self._queue.task_done()

    def drain(self) -> None:
        """Wait until every queued event has been written."""
        self._queue.join()

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join()
        if self.error is not None:
            raise self.error
