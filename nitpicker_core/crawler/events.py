"""The single archive writer: scrape events are queued by the crawl's pages, stored and announced in order.

On a thread of the crawler, or in a child process of its own (``writer_process.py``) when the crawl's
plugins can be loaded there: then this process pickles and sends, and fires the hooks once stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from nitpicker_core.crawler.phases import ARCHIVE_WRITE_IN_PROCESS, PhaseClock
from nitpicker_core.records import ScrapeResult
from nitpicker_core.sinks import ArchiveSink

if TYPE_CHECKING:
    from collections.abc import Callable

    from nitpicker_core.crawler.writer_process import WriterProcess
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
        self.settle(value)

    def settle(self, value: Any) -> None:
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


def store_event(archive: ArchiveSink, hook: str, kwargs: dict[str, Any]) -> None:
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
    failure aborts the crawl). With ``writer`` (the sink lives in a child process), events and calls are
    sent there instead, and the hooks fire on the thread receiving its answers, in the same order.
    """

    def __init__(
        self,
        pm: NitpickerPluginManager,
        crawl: CrawlContext,
        archive: ArchiveSink,
        *,
        clock: PhaseClock | None = None,
        writer: WriterProcess | None = None,
    ) -> None:
        self.pm, self.crawl, self.archive = pm, crawl, archive
        self.clock = clock
        self.writer = writer
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=2000)
        self._error: BaseException | None = None
        if writer is not None:
            if clock is not None:
                writer.on_time = lambda seconds, pages: clock.add(
                    ARCHIVE_WRITE_IN_PROCESS, seconds, count=pages
                )
            return
        self._thread = threading.Thread(target=self._run, name="nitpicker-writer", daemon=True)
        self._thread.start()

    @property
    def error(self) -> BaseException | None:
        """The first failure of a write (or of a hook after one): the sink stores nothing more."""
        return self.writer.error if self.writer is not None else self._error

    def emit(self, hook: str, **kwargs: Any) -> None:
        if self.error is not None:
            raise RuntimeError(f"archive writes failed: {self.error}") from self.error
        if self.writer is not None:
            self.writer.post("e", hook, kwargs, self._announce(hook, kwargs))
            return
        self._queue.put((hook, kwargs))

    def _announce(self, hook: str, kwargs: dict[str, Any]) -> Callable[[bool, Any], None]:
        """The event's hook, fired once the writer process stored the event (never after a failure)."""

        def announce(ok: bool, _value: Any) -> None:
            if ok and self.error is None:
                kwargs.pop("outside_scope", None)  # the store's business, not the hook's
                getattr(self.pm.hook, hook)(crawl=self.crawl, **kwargs)

        return announce

    def call(self, name: str, *args: Any) -> None:
        """Call the archive sink's method ``name(*args)`` on the writer, in order with the hook events."""
        if self.writer is not None:
            self.writer.post("c", name, (args, {}))
            return
        self._queue.put((getattr(self.archive, name), args))

    def ask(self, name: str, *args: Any, then: Callable[[Any], Any] | None = None) -> asyncio.Future[Any]:
        """Call the archive sink's ``name(*args)`` on the writer, in order with the events; await its result.

        ``then(result)`` runs on the writer's thread (where the hooks fire) before the result is given. The
        future fails with the sink's error when an earlier write failed (nothing runs then).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        method = getattr(self.archive, name) if self.writer is None else None

        def run() -> Any:
            assert method is not None
            value = method(*args)
            return then(value) if then is not None else value

        asking = _Ask(loop, future, run, ())
        if self.writer is None:
            self._queue.put((asking, ()))
            return future

        def answered(ok: bool, value: Any) -> None:
            if not ok:
                asking.refuse(value)
                return
            try:
                value = then(value) if then is not None else value
            except BaseException as exc:
                asking.refuse(exc)
                raise
            asking.settle(value)

        self.writer.post("a", name, (args, {}), answered)
        return future

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                target, args = item
                if self._error is not None:
                    if isinstance(target, _Ask):  # its caller waits: tell it why nothing was done
                        target.refuse(self._error)
                else:
                    if callable(target):
                        target(*args)
                    else:
                        started = time.perf_counter()
                        store_event(self.archive, target, args)
                        args.pop("outside_scope", None)  # the store's business, not the hook's
                        getattr(self.pm.hook, target)(crawl=self.crawl, **args)
                        if self.clock is not None:  # a page's resources and errors count as its write
                            seconds = time.perf_counter() - started
                            self.clock.add(
                                "archive write", seconds, count=int(target == "crawl_page_scraped")
                            )
            except BaseException as exc:  # noqa: BLE001 - remembered and re-raised by close()
                log.debug("archive write failed", exc_info=True)
                self._error = exc
            finally:
                self._queue.task_done()

    def drain(self) -> None:
        """Wait until every queued event has been written."""
        if self.writer is not None:
            self.writer.drain()
            return
        self._queue.join()

    def close(self) -> None:
        """Every event written (the writer process stays for the sink's last calls: ``finish``, ``abandon``)."""
        if self.writer is not None:
            self.writer.drain()
        else:
            self._queue.put(_STOP)
            self._thread.join()
        if self.error is not None:
            raise self.error
