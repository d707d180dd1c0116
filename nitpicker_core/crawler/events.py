"""The single archive writer thread: scrape events are queued by browser workers, stored and announced in order."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from nitpicker_core.crawler.phases import PhaseClock
from nitpicker_core.sinks import ArchiveSink

log = logging.getLogger(__name__)
_STOP = object()


def _store(archive: ArchiveSink, hook: str, kwargs: dict[str, Any]) -> None:
    """The archive sink's call for one event; the event's hook is fired after it, for observers."""
    if hook == "crawl_page_scraped":
        archive.put_page(kwargs["result"])
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

    def __init__(self, pm: Any, crawl: Any, archive: ArchiveSink, *, clock: PhaseClock | None = None) -> None:
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

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if self.error is None:
                    target, args = item
                    if callable(target):
                        target(*args)
                    else:
                        started = time.perf_counter()
                        _store(self.archive, target, args)
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
