"""The crawl queue: pending → in progress → done, one entry per normalized URL."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace

from nitpicker_core.urls import looks_like_html, normalize

__all__ = ["QueueCounts", "QueueItem", "UrlQueue"]


@dataclass(frozen=True)
class QueueItem:
    """A URL to crawl and how: ``metadata_only`` skips the browser, ``predicted`` came from pagination."""

    url: str
    external: bool = False
    metadata_only: bool = False
    predicted: bool = False
    referrer: str | None = None


@dataclass(frozen=True)
class QueueCounts:
    """Numbers for the progress line (resumed URLs included)."""

    internal_done: int
    internal_rendered: int
    internal_found: int
    external_done: int
    external_found: int
    pending: int
    in_progress: int

    @property
    def percent(self) -> int:
        found = self.internal_found + self.external_found
        return int(100 * (self.internal_done + self.external_done) / found) if found else 100

    @property
    def remaining(self) -> int:
        return self.pending + self.in_progress


class UrlQueue:
    """A de-duplicating work queue; pages-to-be go to the front, assets to the back.

    Thread-safe: workers ``pop()`` and ``finish()``, scrapers ``add()`` what they found.
    """

    def __init__(self, *, disable_queries: bool = False) -> None:
        self.disable_queries = disable_queries
        self._lock = threading.Lock()
        self._pending: deque[QueueItem] = deque()
        self._items: dict[str, QueueItem] = {}
        self._in_progress: set[str] = set()
        self._done: set[str] = set()
        self._rendered: set[str] = set()

    def key(self, url: str) -> str:
        try:
            return normalize(url, disable_queries=self.disable_queries)
        except ValueError:  # a link no request can go to (a bad port) is its own key: recorded, never fetched
            return url

    def add(self, items: Iterable[QueueItem | str]) -> list[QueueItem]:
        """Queue a batch of found URLs in the order found; returns the ones that were new.

        URLs that look like HTML go to the front (keeping the batch's order among themselves) so pages
        are discovered early; everything else goes to the back.
        """
        fresh: list[QueueItem] = []
        with self._lock:
            for item in items:
                item = QueueItem(item) if isinstance(item, str) else item
                key = self.key(item.url)
                if key in self._items:
                    continue
                item = replace(item, url=key)
                self._items[key] = item
                fresh.append(item)
            front = [i for i in fresh if looks_like_html(i.url)]
            self._pending.extendleft(reversed(front))
            self._pending.extend(i for i in fresh if not looks_like_html(i.url))
        return fresh

    def add_done(self, item: QueueItem | str, *, rendered: bool = False) -> bool:
        """Record a URL finished in an earlier run (resume); False when it was already known."""
        item = QueueItem(item) if isinstance(item, str) else item
        key = self.key(item.url)
        with self._lock:
            if key in self._items:
                return False
            self._items[key] = replace(item, url=key)
            self._done.add(key)
            if rendered:
                self._rendered.add(key)
        return True

    def pop(self) -> QueueItem | None:
        """The next pending item, now in progress; None when nothing is pending."""
        with self._lock:
            if not self._pending:
                return None
            item = self._pending.popleft()
            self._in_progress.add(item.url)
            return item

    def finish(self, url: str, *, rendered: bool = False) -> None:
        """Mark a URL done; ``rendered`` when the browser rendered it as HTML."""
        key = self.key(url)
        with self._lock:
            self._in_progress.discard(key)
            self._done.add(key)
            if rendered:
                self._rendered.add(key)

    def discard(self, url: str) -> None:
        """Forget a URL without trace (a predicted page that turned out not to exist)."""
        key = self.key(url)
        with self._lock:
            self._items.pop(key, None)
            self._in_progress.discard(key)
            self._done.discard(key)
            self._rendered.discard(key)
            self._pending = deque(i for i in self._pending if i.url != key)

    def requeue(self, url: str) -> None:
        """Put an in-progress URL back at the front (the worker gave up on it, e.g. on shutdown)."""
        key = self.key(url)
        with self._lock:
            if key in self._in_progress and key in self._items:
                self._in_progress.discard(key)
                self._pending.appendleft(self._items[key])

    def state(self, url: str) -> str | None:
        """"pending", "in-progress", "done", or None when never queued."""
        key = self.key(url)
        with self._lock:
            if key in self._done:
                return "done"
            if key in self._in_progress:
                return "in-progress"
            return "pending" if key in self._items else None

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.state(url) is not None

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def idle(self) -> bool:
        """Nothing pending and nothing in progress: the crawl is over."""
        with self._lock:
            return not self._pending and not self._in_progress

    def counts(self) -> QueueCounts:
        with self._lock:
            internal = {k for k, i in self._items.items() if not i.external}
            return QueueCounts(
                internal_done=len(self._done & internal),
                internal_rendered=len(self._rendered & internal),
                internal_found=len(internal),
                external_done=len(self._done - internal),
                external_found=len(self._items) - len(internal),
                pending=len(self._pending),
                in_progress=len(self._in_progress),
            )
