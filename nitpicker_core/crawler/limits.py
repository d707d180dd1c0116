"""The crawl's bounds (--max-pages, --max-depth): the reasons they give, depths a continued commit already knows."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nitpicker_core.sinks import LinkGraph
from nitpicker_core.urls import normalize, split_credentials

__all__ = ["ArchivedDepths", "Limits", "link_depths", "record_held"]


@dataclass(frozen=True)
class Limits:
    """``max_pages`` internal URLs per commit (resumed ones included); ``max_depth`` links from a root."""

    max_pages: int | None = None
    max_depth: int | None = None

    def depth_reason(self) -> str:
        return f"deeper than --max-depth {self.max_depth}"

    def pages_reason(self) -> str:
        return f"not crawled: --max-pages {self.max_pages} reached"


def link_depths(
    roots: Iterable[str], links: dict[str, list[str]], redirects: dict[str, str]
) -> dict[str, int]:
    """Fewest links from a root to each URL; a redirect's destination sits at its source's depth."""
    depths: dict[str, int] = {}
    todo: deque[tuple[str, int]] = deque((root, 0) for root in roots)
    while todo:
        url, depth = todo.popleft()
        if depths.get(url, depth + 1) <= depth:
            continue
        depths[url] = depth
        dest = redirects.get(url)
        if dest is not None:
            todo.appendleft((dest, depth))  # a zero-cost edge goes first, so the order stays breadth-first
        todo.extend((target, depth + 1) for target in links.get(url, ()))
    return depths


class ArchivedDepths:
    """Depth of a URL the queue gets without one: roots are 0; a continued commit's URLs, from its stored links.

    ``--resume`` loads pending URLs from the archive with no depth; walking the commit's own links from the
    roots gives each its real depth, so a resumed crawl stops at the same place an uninterrupted one would.
    ``graph`` gives the commit's links and redirects (the archive sink's ``link_graph``); None for a fresh
    commit, whose only URLs queued without a depth are its roots. A URL the stored links do not reach
    (rare: e.g. a redirect whose source was never stored) is taken to be at the limit: it is crawled, but
    nothing deeper is.
    """

    def __init__(
        self,
        graph: Callable[[], LinkGraph] | None,
        seeds: Iterable[str],
        max_depth: int,
        *,
        disable_queries: bool = False,
    ) -> None:
        self.graph, self.max_depth = graph, max_depth
        self.seeds = [normalize(split_credentials(s)[0], disable_queries=disable_queries) for s in seeds]
        self._depths: dict[str, int] | None = None

    def __call__(self, url: str) -> int:
        if self._depths is None:
            self._depths = self._load()
        return self._depths.get(url, self.max_depth)

    def _load(self) -> dict[str, int]:
        roots = {seed: 0 for seed in self.seeds}
        if self.graph is None:
            return roots
        links, redirects = self.graph()
        return {**link_depths(self.seeds, links, redirects), **roots}


def record_held(crawler: Any) -> Any:
    """The queue's ``on_hold``: a URL a limit keeps from being crawled is recorded as skipped, with the reason."""

    def held(url: str, reason: str) -> None:
        # limits hold back in-scope URLs only
        crawler.sink.emit("crawl_page_skipped", url=url, reason=reason, is_external=False)
        crawler.stats.skipped += 1

    return held
