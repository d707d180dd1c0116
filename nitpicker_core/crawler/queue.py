"""The crawl queue: pending → in progress → done, one entry per normalized URL, within the crawl's limits."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from nitpicker_core.crawler.limits import Limits
from nitpicker_core.urls import looks_like_html, normalize

__all__ = ["Limits", "QueueCounts", "QueueItem", "UrlQueue", "normalized"]


NORMALIZED_MEMO = 1 << 16  # URLs ``normalized`` remembers (then it starts over)
_normalized: dict[tuple[str, bool], str] = {}


def normalized(url: str, disable_queries: bool = False) -> str:
    """``normalize``, remembered: a site's navigation links come back on every page, each normalized thrice.

    The result is remembered as its own normalized form too (``normalize`` is idempotent): the crawler asks
    again of the URLs it made, the page's stored anchors' and the queue's. A memo keyed by the arguments as
    written (``lru_cache``'s) missed those, and every call that left ``disable_queries`` out: half the calls
    normalized again, 4,700 of 9,400 on the docs site.
    """
    key = (url, bool(disable_queries))
    found = _normalized.get(key)
    if found is None:
        found = normalize(url, disable_queries=disable_queries)  # a ValueError is not remembered
        if len(_normalized) >= NORMALIZED_MEMO:
            _normalized.clear()
        _normalized[key] = _normalized[(found, key[1])] = found
    return found


@dataclass(frozen=True)
class QueueItem:
    """A URL to crawl and how: ``metadata_only`` skips the browser, ``predicted`` came from pagination.

    ``outside_scope``: a URL of the crawl's own host (and port) that the scope leaves out. It is internal, not
    external, yet only checked like an external link (metadata only), and like one it is neither counted
    nor held by ``--max-pages`` / ``--max-depth``.

    ``depth`` is the number of links from a root (roots are 0); None lets the queue work it out (a
    redirect's destination takes its source's depth, anything else asks the queue's ``depth_of``).
    """

    url: str
    external: bool = False
    metadata_only: bool = False
    predicted: bool = False
    referrer: str | None = None
    depth: int | None = None
    outside_scope: bool = False

    @property
    def in_scope(self) -> bool:
        """Crawled within the scope and its limits: neither external nor a same-host URL outside the scope."""
        return not self.external and not self.outside_scope

    @property
    def leads_on(self) -> bool:
        """An in-scope page whose links are followed (not a check that ends where it is)."""
        return self.in_scope and not self.metadata_only


@dataclass(frozen=True)
class QueueCounts:
    """Numbers for the progress line (resumed URLs included).

    Internal counts include the same-host URLs outside the scope (``outside_*``), checked but not crawled.
    """

    internal_done: int
    internal_rendered: int
    internal_found: int
    external_done: int
    external_found: int
    pending: int
    in_progress: int
    outside_done: int = 0
    outside_found: int = 0
    slowed: tuple[str, ...] = ()  # the hosts slowed down now and why: "127.0.0.1:8000 answers 429"

    @property
    def percent(self) -> int:
        found = self.internal_found + self.external_found
        return min(100, int(100 * (self.internal_done + self.external_done) / found)) if found else 100

    @property
    def remaining(self) -> int:
        return self.pending + self.in_progress


class UrlQueue:
    """A de-duplicating work queue; pages-to-be go to the front, assets to the back.

    Thread-safe: workers ``pop()`` and ``finish()``, scrapers ``add()`` what they found.

    Limits: with ``max_pages`` no in-scope URL is handed out once that many in-scope URLs are done or in
    progress (external checks and same-host URLs outside the scope are not counted and go on). With ``max_depth`` pages are handed out level by
    level: none of depth d+1 starts while one of depth d or less is pending or in progress, so the depth a URL
    is first found at is its real depth, and a URL deeper than the limit is held as soon as it is found.
    Held URLs are reported once to ``on_hold(url, reason)``; a held guess (predicted, never linked) is
    dropped without trace.
    """

    def __init__(
        self,
        *,
        disable_queries: bool = False,
        limits: Limits | None = None,
        is_internal: Callable[[str], bool] | None = None,
        same_host: Callable[[str], bool] | None = None,
        depth_of: Callable[[str], int] | None = None,
        on_hold: Callable[[str, str], None] | None = None,
    ) -> None:
        self.disable_queries = disable_queries
        self.limits = limits or Limits()
        self._is_internal = is_internal  # for URLs recorded done by plain string (resumed, redirect hops)
        self._same_host = same_host  # … and which of the others are of the crawl's own host
        self._depth_of = depth_of
        self._on_hold = on_hold
        self._by_depth = self.limits.max_depth is not None
        self._lock = threading.Lock()
        self._levels: dict[
            int, deque[QueueItem]
        ] = {}  # pending pages by depth (one level unless --max-depth)
        self._checks: deque[QueueItem] = (
            deque()
        )  # with --max-depth: pending URLs whose links are not followed
        self._items: dict[str, QueueItem] = {}
        self._depth: dict[str, int] = {}
        self._in_progress: set[str] = set()
        self._done: set[str] = set()
        self._rendered: set[str] = set()
        self._held: dict[str, str] = {}  # URL → why a limit keeps it from being crawled
        self._taken = 0  # in-scope URLs done or in progress: what --max-pages counts
        self._busy: dict[str, int] = {}  # with --max-depth: pages in progress → the level they were taken at
        self._report: dict[str, int | None] = {
            "max_pages": self.limits.max_pages,
            "max_depth": self.limits.max_depth,
            "not_crawled_max_pages": 0,
            "not_crawled_max_depth": 0,
        }

    def key(self, url: str) -> str:
        try:
            return normalized(url, self.disable_queries)
        except ValueError:  # a link no request can go to (a bad port) is its own key: recorded, never fetched
            return url

    # -- adding --------------------------------------------------------------------------------------------
    def add(self, items: Iterable[QueueItem | str]) -> list[QueueItem]:
        """Queue a batch of found URLs in the order found; returns the ones that were new.

        URLs that look like HTML go to the front (keeping the batch's order among themselves) so pages
        are discovered early; everything else goes to the back. A new URL deeper than ``max_depth`` is
        returned too, but held, not queued.
        """
        fresh: list[QueueItem] = []
        held: list[tuple[str, str]] = []
        with self._lock:
            placed: list[QueueItem] = []
            for item in items:
                item = QueueItem(item) if isinstance(item, str) else item
                key = self.key(item.url)
                depth = self._depth_for(key, item)
                known = self._items.get(key)
                if known is not None:
                    self._seen_again(key, known, item, depth, placed)
                    continue
                item = replace(item, url=key, depth=depth)
                if self._too_deep(item):
                    if item.predicted:
                        continue  # a guess past the limit is never made at all
                    held.append(self._hold(key, self.limits.depth_reason()))
                self._items[key] = item
                self._depth[key] = depth
                fresh.append(item)
                if key not in self._held:
                    placed.append(item)
            self._place(placed)
        self._tell(held)
        return fresh

    def add_done(self, item: QueueItem | str, *, rendered: bool = False) -> bool:
        """Record a URL finished in an earlier run (resume) or on the way (a redirect); False when known."""
        if isinstance(item, str):
            key = self.key(item)
            internal = self._is_internal(key) if self._is_internal else True
            outside = not internal and self._same_host is not None and self._same_host(key)
            item = QueueItem(item, external=not internal and not outside, outside_scope=outside)
        key = self.key(item.url)
        with self._lock:
            if key in self._items:
                return False
            self._items[key] = replace(item, url=key)
            if item.depth is not None:
                self._depth[key] = item.depth
            self._done.add(key)
            self._taken += item.in_scope
            if rendered:
                self._rendered.add(key)
        return True

    def _depth_for(self, key: str, item: QueueItem) -> int:
        if item.depth is not None:
            return item.depth
        if item.referrer is not None:  # queued without a depth but with a source: a redirect's destination
            source = self._depth.get(self.key(item.referrer))
            if source is not None:
                return source
        known = self._depth.get(key)
        if known is not None:
            return known
        return self._depth_of(key) if self._depth_of else 0

    def _too_deep(self, item: QueueItem) -> bool:
        limit = self.limits.max_depth
        return limit is not None and item.in_scope and item.depth is not None and item.depth > limit

    def _seen_again(
        self, key: str, known: QueueItem, item: QueueItem, depth: int, placed: list[QueueItem]
    ) -> None:
        """A known URL found again: a real link makes a guess a page; a shorter path makes it shallower."""
        if known.predicted and not item.predicted:
            self._items[key] = known = replace(known, predicted=False)
        if depth < self._depth.get(key, depth):
            self._depth[key] = depth
            self._items[key] = known = replace(known, depth=depth)
            if (
                key in self._held
                and not self._too_deep(known)
                and self._held[key] == self.limits.depth_reason()
            ):
                self._unhold(key)  # only possible when a depth was a guess (see ArchivedDepths)
                placed.append(known)

    def _place(self, items: list[QueueItem]) -> None:
        for item in reversed([i for i in items if looks_like_html(i.url)]):
            self._pending_for(item).appendleft(item)
        for item in (i for i in items if not looks_like_html(i.url)):
            self._pending_for(item).append(item)

    def _pending_for(self, item: QueueItem) -> deque[QueueItem]:
        if self._by_depth and not item.leads_on:
            return self._checks
        level = self._depth.get(item.url, 0) if self._by_depth else 0
        return self._levels.setdefault(level, deque())

    # -- taking --------------------------------------------------------------------------------------------
    def pop(self) -> QueueItem | None:
        """The next pending item, now in progress; None when nothing may start now.

        With ``max_depth``, None can also mean "wait": a page of the next level waits until the pages of
        the levels above it are done (there is always one in progress then).
        """
        held: list[tuple[str, str]] = []
        with self._lock:
            while (item := self._next()) is not None:
                if item.in_scope and self._pages_full():
                    if self._items[item.url].predicted:  # a guess never linked: no trace
                        self._forget(item.url)
                        continue
                    held.append(self._hold(item.url, self.limits.pages_reason()))
                    continue
                item = self._items[item.url]
                self._in_progress.add(item.url)
                self._taken += item.in_scope
                if self._by_depth and item.leads_on:
                    self._busy[item.url] = self._depth[item.url]
                break
        self._tell(held)
        return item

    def _pages_full(self) -> bool:
        return self.limits.max_pages is not None and self._taken >= self.limits.max_pages

    def _next(self) -> QueueItem | None:
        for level in sorted(self._levels):
            pending = self._levels[level]
            if not pending:
                continue
            if self._by_depth and any(depth < level for depth in self._busy.values()):
                break  # the level above is still being crawled: it may find these URLs nearer the root
            return pending.popleft()
        return self._checks.popleft() if self._checks else None

    def _hold(self, key: str, reason: str) -> tuple[str, str]:
        self._held[key] = reason
        field = "not_crawled_max_pages" if reason == self.limits.pages_reason() else "not_crawled_max_depth"
        self._report[field] = (self._report[field] or 0) + 1
        return key, reason

    def _unhold(self, key: str) -> None:
        reason = self._held.pop(key, None)
        if reason is not None:
            field = (
                "not_crawled_max_pages" if reason == self.limits.pages_reason() else "not_crawled_max_depth"
            )
            self._report[field] = (self._report[field] or 0) - 1

    def _tell(self, held: list[tuple[str, str]]) -> None:
        if self._on_hold is not None:  # outside the lock: the callback writes to the archive
            for url, reason in held:
                self._on_hold(url, reason)

    # -- finishing -----------------------------------------------------------------------------------------
    def finish(self, url: str, *, rendered: bool = False) -> None:
        """Mark a URL done; ``rendered`` when the browser rendered it as HTML."""
        key = self.key(url)
        with self._lock:
            if key not in self._items:  # a guess forgotten on the way (discard): never a URL of the crawl
                return
            if key in self._in_progress:
                self._leave_progress(key)
            elif key not in self._done:
                self._taken += not self._unlimited(key)
            self._done.add(key)
            if rendered:
                self._rendered.add(key)

    def discard(self, url: str) -> None:
        """Forget a URL without trace (a predicted page that turned out not to exist)."""
        with self._lock:
            self._forget(self.key(url))

    def _forget(self, key: str) -> None:
        if key in self._in_progress:
            self._leave_progress(key)
            self._taken -= not self._unlimited(key)
        elif key in self._done:
            self._taken -= not self._unlimited(key)
        self._items.pop(key, None)
        self._depth.pop(key, None)
        self._unhold(key)
        self._done.discard(key)
        self._rendered.discard(key)
        for pending in (*self._levels.values(), self._checks):
            if any(i.url == key for i in pending):
                kept = [i for i in pending if i.url != key]
                pending.clear()
                pending.extend(kept)

    def requeue(self, url: str) -> None:
        """Put an in-progress URL back at the front (the worker gave up on it, e.g. on shutdown)."""
        key = self.key(url)
        with self._lock:
            if key in self._in_progress and key in self._items:
                self._leave_progress(key)
                self._taken -= not self._unlimited(key)
                self._pending_for(self._items[key]).appendleft(self._items[key])

    def _leave_progress(self, key: str) -> None:
        self._in_progress.discard(key)
        self._busy.pop(key, None)

    def _unlimited(self, key: str) -> bool:
        """A check the limits do not count: an external URL, or a same-host one outside the scope."""
        item = self._items.get(key)
        return item is not None and not item.in_scope

    # -- looking -------------------------------------------------------------------------------------------
    def state(self, url: str) -> str | None:
        """ "pending", "in-progress", "done", "held" (kept back by a limit), or None when never queued."""
        key = self.key(url)
        with self._lock:
            if key in self._done:
                return "done"
            if key in self._in_progress:
                return "in-progress"
            if key in self._held:
                return "held"
            return "pending" if key in self._items else None

    def depth(self, url: str) -> int | None:
        """Links from a root to ``url`` (None when it was recorded without one, e.g. a redirect's end)."""
        with self._lock:
            return self._depth.get(self.key(url))

    def guessed(self, url: str) -> bool:
        """Queued only as a pagination guess: no page has linked to it."""
        with self._lock:
            item = self._items.get(self.key(url))
            return item is not None and item.predicted

    def held(self) -> dict[str, str]:
        """URLs a limit kept from being crawled, with the reason."""
        with self._lock:
            return dict(self._held)

    def limit_stats(self) -> dict[str, int | None]:
        """What the limits did, for the commit's stats (a live dict, kept up to date as URLs are held)."""
        return self._report

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.state(url) is not None

    def __len__(self) -> int:
        with self._lock:
            return sum(len(p) for p in self._levels.values()) + len(self._checks)

    def in_flight(self) -> int:
        """URLs taken and not finished (what ``counts().in_progress`` says, without counting the rest)."""
        with self._lock:
            return len(self._in_progress)

    def idle(self) -> bool:
        """Nothing pending and nothing in progress: the crawl is over (held URLs stay as they are)."""
        with self._lock:
            return not self._in_progress and not self._checks and not any(self._levels.values())

    def counts(self) -> QueueCounts:
        """Found counts never go down: a pagination guess counts once a page links to it or it was fetched,
        so one that turns out not to exist (and is forgotten) was never counted."""
        # One pass over the URLs, without the sets of each kind: the progress line asks several times a second
        with self._lock:
            done, rendered, items = self._done, self._rendered, self._items
            internal_found = internal_done = internal_rendered = external_found = external_done = 0
            outside_found = outside_done = 0
            for key, item in items.items():
                is_done = key in done
                if item.predicted and not is_done:
                    continue  # a guess nothing linked to yet
                if item.external:
                    external_found += 1
                    external_done += is_done
                else:
                    internal_found += 1
                    internal_done += is_done
                    internal_rendered += key in rendered
                if item.outside_scope:
                    outside_found += 1
                    outside_done += is_done
            pending = 0
            for queued in (*self._levels.values(), self._checks):
                for entry in queued:
                    known = items.get(entry.url)
                    pending += known is not None and (not known.predicted or entry.url in done)
            return QueueCounts(
                internal_done=internal_done,
                internal_rendered=internal_rendered,
                internal_found=internal_found,
                external_done=external_done,
                external_found=external_found,
                pending=pending,
                in_progress=len(self._in_progress),
                outside_done=outside_done,
                outside_found=outside_found,
            )
