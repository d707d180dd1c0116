"""Typed reads of a commit's internal link graph and page directives, and link depth over that graph.

What the canonical and directive checks read: small functions returning typed rows, so plugins need no SQL
against core tables (they can move into ``nitpicker_core.read`` as they are).
"""

from __future__ import annotations

import json
import zlib
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    from .reader import ArchiveReader

__all__ = [
    "AnchorGraph",
    "InternalLink",
    "PageDirectives",
    "anchor_graph",
    "internal_links",
    "link_depths",
    "page_directives",
    "page_html",
    "link_texts",
]

N = TypeVar("N", bound=Hashable)


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


class AnchorGraph(NamedTuple):
    """The commit's internal links as URL ids, read in one pass: what whole-graph checks walk.

    ``targets`` maps each crawled internal page inside the crawl's scope that has anchors to the distinct
    URLs they point to (fragments off, redirects not followed, a page's links to itself included);
    ``urls`` names every URL id, ``ids`` is its inverse. Ids keep the millions of links of a large commit
    as small integers; a check turns the few it reports back into URLs.
    """

    targets: dict[int, frozenset[int]]
    urls: dict[int, str]
    ids: dict[str, int]

    def linked(self) -> set[int]:
        """Ids of the URLs an anchor of another page points to (a page's links to itself do not count)."""
        found: set[int] = set()
        for source, targets in self.targets.items():
            found.update(targets - {source} if source in targets else targets)
        return found


# Anchors of internal pages inside the crawl's scope (a URL of the host outside it was only checked)
_SCOPE = (
    "FROM commit_page sc JOIN page_state sps ON sps.id = sc.state_id "
    "JOIN anchor a ON a.state_id = sc.state_id "
    "WHERE sc.commit_id = ? AND sps.is_external = 0 AND sps.outside_scope IS NULL"
)
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


def anchor_graph(reader: ArchiveReader, commit: int) -> AnchorGraph:
    """The commit's internal links (the pages of ``internal_links``) by URL id: each page's targets as the
    commit's stored aggregates keep them (``agg_graph``), else in one pass over the anchors."""
    from . import aggregates  # aggregates → seo → this module

    stored = aggregates.graph_set(reader, commit)
    targets: dict[int, frozenset[int]] = {}
    if stored is not None:
        unpack = aggregates.unpack_targets
        sql = "SELECT url_id, targets FROM agg_graph WHERE set_id = ?"
        targets = {source: frozenset(unpack(blob)) for source, blob in reader.tuples(sql, [stored])}
    else:
        rows = reader.tuples(f"SELECT sc.url_id, a.target_url_id {_SCOPE}", [commit])
        second = itemgetter(1)
        # a page's anchors come together (the join walks the commit's pages, then each page's anchors); a
        # page seen again is merged, not replaced
        for source, group in groupby(rows, key=itemgetter(0)):
            found = frozenset(map(second, group))
            targets[source] = targets[source] | found if source in targets else found
    urls: dict[int, str] = dict(reader.tuples("SELECT id, url FROM url"))  # type: ignore[arg-type]
    return AnchorGraph(targets, urls, {url: i for i, url in urls.items()})


# A "plain" anchor text: printable ASCII other than '"' and '\\' (JSON quotes it in as many bytes as it has
# characters, plus the quotes), beginning and ending with a letter or digit, without two spaces in a row.
# Case folding, trimming the ends' spaces and punctuation and making inner runs of spaces single leave such
# a text as SQLite's ``lower`` makes it.
# (The cheapest tests first: SQLite stops at the first that fails. Once the first has held, the text is
# ASCII, one byte a character: its last character is its last byte, taken without counting the characters
# as ``substr(a.text, -1)`` does, a third of the filter's time on 3,000,000 anchors.)
_LAST = "substr(CAST(a.text AS BLOB), -1)"
_PLAIN = (
    "(length(CAST(json_quote(a.text) AS BLOB)) = length(a.text) + 2 AND a.text GLOB '[A-Za-z0-9]*' "
    f"AND NOT a.text GLOB '*  *' AND ({_LAST} BETWEEN x'61' AND x'7A' OR {_LAST} BETWEEN x'30' AND x'39' "
    f"OR {_LAST} BETWEEN x'41' AND x'5A'))"
)


def link_texts(
    reader: ArchiveReader,
    commit: int,
    keep: Callable[[str], bool],
    phrases: Collection[str] | None = None,
) -> list[InternalLink]:
    """The links of ``internal_links`` whose text ``keep`` accepts, in one pass (repeats not removed).

    For a check that looks at a few texts among millions of links: the URLs are named only for those. With
    ``phrases`` (texts as compared: case folded, ends trimmed, inner spaces single), SQLite leaves out
    first every plain text (see ``_PLAIN``) that is none of them in lower case, which is all such a text
    can be once trimmed and folded (so one longer than the longest phrase is none); ``keep`` sees the others.
    """
    sql, params = f"SELECT sc.url_id, a.target_url_id, a.text {_SCOPE}", list[Any]([commit])
    if phrases is not None:
        # a plain text's length in bytes is its length in characters (and needs no counting); the crawl
        # stores both with each anchor (anchor.plain: its length, 0 when not plain, format 7), an anchor
        # stored before has them worked out here
        plain, length = _PLAIN, "length(CAST(a.text AS BLOB))"
        if reader.has_column("anchor", "plain"):
            plain, length = f"coalesce(a.plain, {_PLAIN})", f"coalesce(a.plain, {length})"
        sql += f" AND (NOT {plain} OR ({length} <= ? AND lower(a.text) IN (SELECT value FROM json_each(?))))"
        longest = max((len(phrase) for phrase in phrases), default=0)
        params += [longest, json.dumps(sorted(phrases), ensure_ascii=False)]
    found = [(source, target, text) for source, target, text in reader.tuples(sql, params) if keep(text)]
    if not found:
        return []
    urls: dict[int, str] = dict(reader.tuples("SELECT id, url FROM url"))  # type: ignore[arg-type]
    return [InternalLink(urls[source], urls[target], text) for source, target, text in found]


def page_html(
    reader: ArchiveReader, commit: int, sent: bool = False, only: Collection[str] | None = None
) -> Iterator[tuple[str, str]]:
    """(URL, HTML) of each internal crawled URL of ``page_directives`` whose HTML is stored, in one query.

    The rendered HTML, or with ``sent`` the HTML as the server sent it (none in archives that did not
    keep it). What ``html_by_sha256`` gives for each page's hash, without a query per page. With ``only``,
    the pages of those URLs alone (the others are not decompressed).
    """
    if only is not None and not only:
        return
    column = "html_sha256"
    if sent:
        if not reader.has_column("page_state", "source_sha256"):
            return
        column = "source_sha256"
    sql = (
        "SELECT u.url, b.codec, b.data FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        f"JOIN page_state ps ON ps.id = cp.state_id JOIN blob b ON b.sha256 = ps.{column} "
        "WHERE cp.commit_id = ? AND ps.is_external = 0 AND ps.is_skipped = 0 AND ps.outside_scope IS NULL"
    )
    params: list[Any] = [commit]
    if only is not None:  # the others' blobs are not even read
        sql += " AND u.url IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(list(only), ensure_ascii=False))
    for url, codec, data in reader.tuples(sql, params):
        yield url, (zlib.decompress(data) if codec == "zlib" else bytes(data)).decode("utf-8")


def page_html_facts(reader: ArchiveReader, commit: int) -> list[tuple[str, str | None, bool, bool]]:
    """(URL, stored HTML facts, whether its rendered HTML is stored, whether the HTML as sent is) of each page
    ``page_html`` reads: what the crawl found in that HTML (``nitpicker_core.html_facts``), without reading it.

    Empty for an archive written before the facts were stored (format 7); a state stored before has NULL.
    """
    if not reader.has_column("page_state", "html_facts"):
        return []
    sql = (
        "SELECT u.url, ps.html_facts, ps.html_sha256 IS NOT NULL, ps.source_sha256 IS NOT NULL "
        "FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
        "WHERE cp.commit_id = ? AND ps.is_external = 0 AND ps.is_skipped = 0 AND ps.outside_scope IS NULL"
    )
    return [(url, facts, bool(html), bool(sent)) for url, facts, html, sent in reader.tuples(sql, [commit])]


def page_directives(reader: ArchiveReader, commit: int) -> list[PageDirectives]:
    """The robots meta, nofollow, canonical, language and stored HTML of each internal crawled URL."""
    source = "ps.source_sha256" if reader.has_column("page_state", "source_sha256") else "NULL"
    return [
        PageDirectives(url, robots, bool(nofollow), canonical, lang, html, sent)
        for url, robots, nofollow, canonical, lang, html, sent in reader.tuples(
            _DIRECTIVES.format(source=source), [commit]
        )
    ]


def link_depths(
    edges: Iterable[tuple[N, N]] | Mapping[N, Iterable[N]],
    roots: Iterable[N],
    redirects: Mapping[N, N] | None = None,
) -> dict[N, int]:
    """Clicks from the nearest root to each URL the links reach: a breadth-first walk, linear in the links.

    ``edges`` are (source, target) pairs, or a mapping of each source to its targets; ``redirects`` maps a
    URL to where it redirects, followed at no cost (a link to a redirect reaches its destination at the same
    depth). Roots are depth 0. Any hashable names a URL (the ids of ``anchor_graph`` as well as URLs).
    """
    redirects = redirects or {}
    out: Mapping[N, Iterable[N]]
    if isinstance(edges, Mapping):
        out = edges
    else:
        lists: dict[N, list[N]] = {}
        for source, target in edges:
            lists.setdefault(source, []).append(target)
        out = lists
    depths: dict[N, int] = {}
    queue: deque[N] = deque()

    def reach(url: N, depth: int) -> None:
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
        depth = depths[url] + 1
        for target in out.get(url, ()):
            if target not in depths:  # most targets were reached before: no call for them
                reach(target, depth)
    return depths
