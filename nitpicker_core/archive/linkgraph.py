"""Typed reads of a commit's internal link graph and page directives, and link depth over that graph.

What the canonical and directive checks read: small functions returning typed rows, so plugins need no SQL
against core tables (they can move into ``nitpicker_core.read`` as they are).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeVar

if TYPE_CHECKING:
    from .reader import ArchiveReader

K = TypeVar("K", bound=Hashable)

__all__ = ["InternalLink", "PageDirectives", "internal_links", "link_depths", "page_directives"]


class InternalLink(NamedTuple):
    """One distinct (source page, target URL, anchor text) of a crawled internal page, in source order."""

    source: str
    target: str
    text: str


class PageDirectives(NamedTuple):
    """What a page says about its own indexing and links, and where its stored HTML is."""

    url: str
    robots: str | None
    nofollow: bool
    canonical: str | None
    lang: str
    html_sha256: str | None
    source_sha256: str | None


# Anchors of internal pages inside the crawl's scope (a URL of the host outside it was only checked)
_LINKS = (
    "SELECT DISTINCT su.url, tu.url, COALESCE(a.text, '') FROM commit_page sc "
    "JOIN page_state sps ON sps.id = sc.state_id JOIN url su ON su.id = sc.url_id "
    "JOIN anchor a ON a.state_id = sc.state_id JOIN url tu ON tu.id = a.target_url_id "
    "WHERE sc.commit_id = ? AND sps.is_external = 0 AND sps.outside_scope IS NULL "
    "ORDER BY su.url, a.ordinal"
)
_DIRECTIVES = (
    "SELECT u.url, ps.robots, ps.nofollow, ps.canonical, COALESCE(ps.lang, ''), ps.html_sha256, {source} "
    "FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.is_external = 0 AND ps.is_skipped = 0 "
    "AND ps.outside_scope IS NULL ORDER BY u.url"
)


def internal_links(reader: ArchiveReader, commit: int) -> list[InternalLink]:
    """Every distinct link of the commit's crawled internal pages (targets of any host, redirects not followed)."""
    return [InternalLink(r[0], r[1], r[2]) for r in reader.execute(_LINKS, [commit])]


def page_directives(reader: ArchiveReader, commit: int) -> list[PageDirectives]:
    """The robots meta, nofollow, canonical, language and stored HTML of each internal crawled URL."""
    source = "ps.source_sha256" if reader.has_column("page_state", "source_sha256") else "NULL"
    return [
        PageDirectives(r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6])
        for r in reader.execute(_DIRECTIVES.format(source=source), [commit])
    ]


def link_depths(
    edges: Iterable[tuple[K, K]],
    roots: Iterable[K],
    redirects: Mapping[K, K] | None = None,
) -> dict[K, int]:
    """Clicks from the nearest root to each URL the links reach: a breadth-first walk, linear in the links.

    ``edges`` are (source, target) pairs of URLs (or URL ids); ``redirects`` maps a URL to where it
    redirects, followed at no cost (a link to a redirect reaches its destination at the same depth). Roots
    are depth 0.
    """
    redirects = redirects or {}
    out: dict[K, list[K]] = {}
    for source, target in edges:
        out.setdefault(source, []).append(target)
    depths: dict[K, int] = {}
    queue: deque[K] = deque()

    def reach(url: K, depth: int) -> None:
        hops = 0
        while url not in depths:
            depths[url] = depth
            queue.append(url)
            url = redirects.get(url, url)
            hops += 1
            if hops > 20:
                break

    for root in roots:
        reach(root, 0)
    while queue:
        url = queue.popleft()
        for target in out.get(url, ()):
            reach(target, depths[url] + 1)
    return depths
