"""The single archive writer thread: scrape events are queued by browser workers and applied in order."""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

log = logging.getLogger(__name__)
_STOP = object()


class EventSink:
    """Calls the write-side scrape hooks (page scraped/skipped, resource, error) on one thread.

    SQLite has one writer; doing the writes here keeps the event loop, and so the browser pages, free.
    The first exception stops the sink and is re-raised by ``close`` (a write failure aborts the crawl).
    """

    def __init__(self, pm: Any, crawl: Any) -> None:
        self.pm, self.crawl = pm, crawl
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
                        getattr(self.pm.hook, target)(crawl=self.crawl, **args)
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
