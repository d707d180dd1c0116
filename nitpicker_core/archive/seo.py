"""Per-URL SEO facts of a commit: indexability and why, crawl depth, inlinks and outlinks.

What Screaming Frog's Internal tab shows per URL and no single page state holds: depth and inlinks need the
commit's whole link graph, indexability the page's own directives read by one rule
(``nitpicker_core.indexability``). ``ensure`` computes them once per reader and commit into a temporary table
(``temp.seo_fact``, private to the reader's connection, the archive itself untouched) that the page list joins,
sorts and filters on; a live working directory is computed again on each call, as its pages still change.

Definitions (the same the page detail and the checks use):
- *depth*: clicks from the nearest start URL along links, a redirect followed at no cost (start URLs 0);
  none when no link reaches the URL.
- *inlinks*: anchors of other pages aimed at the URL or at a URL of the commit that redirects to it (the page
  detail's inbound links); *unique inlinks*: the pages those anchors are on.
- *outlinks* / *external outlinks*: the page's anchors to other internal / external URLs (links to itself
  left out); *unique*: distinct targets.
- *indexable*: 1 when nothing stored says search engines would leave the URL out, 0 with the reason when it
  does (``non_indexable_reason``, or "not HTML" for a document of another type); none for URLs never
  fetched and external URLs.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from nitpicker_core.content_types import HTML_TYPES
from nitpicker_core.indexability import non_indexable_reason

from .linkgraph import link_depths

if TYPE_CHECKING:
    from .reader import ArchiveReader

__all__ = ["FACT_COLUMNS", "ensure", "facts_and_targets", "facts_of", "indexability_of", "start_urls"]

FACT_COLUMNS: tuple[str, ...] = (
    "depth",
    "inlinks",
    "unique_inlinks",
    "outlinks",
    "unique_outlinks",
    "external_outlinks",
    "unique_external_outlinks",
    "indexable",
    "indexability_reason",
)
TABLE = "temp.seo_fact"
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (commit_id INTEGER NOT NULL, url_id INTEGER NOT NULL, "
    + ", ".join(f"{c} {'TEXT' if c == 'indexability_reason' else 'INTEGER'}" for c in FACT_COLUMNS)
    + ", PRIMARY KEY (commit_id, url_id)) WITHOUT ROWID"
)
_ROWS = (
    "SELECT cp.url_id, u.url, ps.status, ps.content_type, ps.is_external, ps.is_skipped, ps.skip_reason, "
    "ps.scraped, ps.error_kind, ps.noindex, ps.canonical, d.url AS redirect_dest, ps.redirect_dest_url_id, "
    "json_extract(ps.headers, '$.\"x-robots-tag\"') AS x_robots_tag, ps.outside_scope "
    "FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
    "LEFT JOIN url d ON d.id = ps.redirect_dest_url_id WHERE cp.commit_id = ?"
)
_ROW_NAMES = (
    "url_id url status content_type is_external is_skipped skip_reason scraped error_kind noindex canonical "
    "redirect_dest redirect_dest_url_id x_robots_tag outside_scope"
).split()
# Every anchor of the commit's pages by source, as stored: no GROUP BY (a sort of every anchor), the rows
# arrive grouped by source through commit_page's key and are counted as they come.
_ANCHORS = (
    "SELECT sc.url_id, a.target_url_id FROM commit_page sc CROSS JOIN anchor a ON a.state_id = sc.state_id "
    "WHERE sc.commit_id = ?"
)
_built: weakref.WeakKeyDictionary[Any, set[int]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
Run = Callable[[str, list[Any]], Iterable[Sequence[Any]]]


def start_urls(run: Run, commit: int) -> list[str]:
    """The commit's start URLs (its crawl's roots; the archive's where the commit does not name them)."""
    for (options,) in run("SELECT options FROM commits WHERE id = ?", [commit]):
        roots = (json.loads(options or "{}") or {}).get("roots")
        if roots:
            return list(roots)
    for (value,) in run("SELECT value FROM info WHERE key = 'roots'", []):
        return list(json.loads(value) or [])
    return []


def ensure(archive: ArchiveReader, commit: int) -> str:
    """The name of the table holding the commit's facts (``commit_id``, ``url_id``, FACT_COLUMNS), computed
    into the reader's temporary table (for a commit without stored aggregates)."""
    with _lock:
        done = _built.setdefault(archive, set())
        if commit in done and archive.live_pid is None:
            return TABLE
        archive.execute(_SCHEMA)
        archive.execute(f"DELETE FROM {TABLE} WHERE commit_id = ?", [commit])
        rows = facts_of(archive.stream, commit)
        marks = ", ".join("?" * (2 + len(FACT_COLUMNS)))
        archive.executemany(
            f"INSERT INTO {TABLE} VALUES ({marks})",
            ((commit, url_id, *(fact[c] for c in FACT_COLUMNS)) for url_id, fact in rows.items()),
        )
        done.add(commit)
    return TABLE


def facts_of(run: Run, commit: int) -> dict[int, dict[str, Any]]:
    """url id → its facts (FACT_COLUMNS), for every URL of the commit; ``run(sql, params)`` gives rows."""
    return facts_and_targets(run, commit)[0]


def facts_and_targets(run: Run, commit: int) -> tuple[dict[int, dict[str, Any]], dict[int, Collection[int]]]:
    """``facts_of`` and, from the same walk over the anchors, each page's link targets: the distinct URL ids
    the anchors of each internal page inside the crawl's scope point to (its links to itself included), what
    ``linkgraph.anchor_graph`` reads (the aggregates store it so the checks need not walk the anchors again).
    """
    urls: dict[str, int] = {}
    scoped: set[int] = set()
    external: dict[int, bool] = {}
    redirects: dict[int, int] = {}
    facts: dict[int, dict[str, Any]] = {}
    for values in run(_ROWS, [commit]):
        row = dict(zip(_ROW_NAMES, values, strict=True))
        url_id = row["url_id"]
        urls[row["url"]] = url_id
        external[url_id] = bool(row["is_external"])
        if row["redirect_dest_url_id"] is not None:
            redirects[url_id] = row["redirect_dest_url_id"]
        facts[url_id] = {c: 0 for c in FACT_COLUMNS[1:7]} | {"depth": None, **_indexability(row)}
        if not row["is_external"] and row["outside_scope"] is None:
            scoped.add(url_id)
    out: dict[int, list[int]] = {}
    targets: dict[int, Collection[int]] = {}
    links = _Links({url_id for url_id, is_external in external.items() if is_external}, redirects)
    second = itemgetter(1)
    # streamed, millions of anchors: each page's counted at C speed as they come (grouped by source)
    for source, group in groupby(run(_ANCHORS, [commit]), key=itemgetter(0)):
        ids = list(map(second, group))
        counted = Counter(ids)
        if source in facts:
            out[source] = links.count(facts[source], source, ids, counted)
        if source in scoped:  # a page seen again is merged, not replaced
            found = counted.keys()
            targets[source] = targets[source] | found if source in targets else found
    links.inlinks(facts, external)
    roots = [urls[url] for url in start_urls(run, commit) if url in urls]
    for url_id, depth in link_depths(out, roots, redirects).items():
        if url_id in facts and not external.get(url_id):
            facts[url_id]["depth"] = depth
    return facts, targets


class _Links:
    """Outlinks counted page by page, inlinks gathered across the pages (``inlinks`` writes them).

    A page's anchors at a URL other than itself reach that URL, and the URL it redirects to; each page
    reaching a URL counts once in its unique inlinks, however many of its links reach it. An external URL
    reached only by a link to it directly has none (reaching it through a redirect counts, as ever).
    """

    def __init__(self, externals: set[int], redirects: dict[int, int]) -> None:
        self.externals = externals
        self.redirects = redirects
        self.redirecting = set(redirects)
        self.anchors: Counter[int] = Counter()  # every anchor by target, a page's own at itself taken off
        self.pages: Counter[int] = Counter()  # pages linking to an internal target directly
        self.via_anchors: dict[int, int] = {}  # reached through a redirect
        self.via_pages: dict[int, int] = {}

    def count(self, fact: dict[str, Any], source: int, ids: list[int], targets: Counter[int]) -> list[int]:
        """Count one page's anchors (``ids``, ``targets`` counting them) into its outlinks and the inlinks;
        its internal targets."""
        externals = self.externals
        internal = [target for target in targets if target != source and target not in externals]
        outside = targets.keys() & externals
        outside.discard(source)
        own = targets.get(source, 0)
        fact["external_outlinks"] += sum(map(targets.__getitem__, outside))
        fact["unique_external_outlinks"] += len(outside)
        fact["outlinks"] += sum(map(targets.__getitem__, internal))
        fact["unique_outlinks"] += len(internal)
        self.anchors.update(ids)  # at C speed; the direct links of external targets are left out at the end
        if own:
            self.anchors[source] -= own
        self.pages.update(internal)
        redirected = self.redirecting.intersection(internal)
        if redirected:
            direct = set(internal)
            vias: set[int] = set()
            for target in redirected:
                via = self.redirects[target]
                if via != target and via != source:
                    self.via_anchors[via] = self.via_anchors.get(via, 0) + targets[target]
                    if via not in direct:
                        vias.add(via)
            for via in vias:
                self.via_pages[via] = self.via_pages.get(via, 0) + 1
        return internal

    def inlinks(self, facts: dict[int, dict[str, Any]], external: dict[int, bool]) -> None:
        """Write the inlinks gathered into ``facts``."""
        for url_id, fact in facts.items():
            direct = not external.get(url_id)
            fact["inlinks"] += (self.anchors.get(url_id, 0) if direct else 0) + self.via_anchors.get(
                url_id, 0
            )
            fact["unique_inlinks"] += (self.pages.get(url_id, 0) if direct else 0) + self.via_pages.get(
                url_id, 0
            )


def indexability_of(archive: ArchiveReader, commit: int, url_id: int) -> dict[str, Any]:
    """One URL's ``indexable`` (1, 0 or None) and ``indexability_reason``, as the page list has them, without
    the commit's other facts (page detail reads one URL; the link graph is the costly part)."""
    rows = archive.execute(_ROWS + " AND cp.url_id = ?", [commit, url_id])
    if not rows:
        return {"indexable": None, "indexability_reason": None}
    return _indexability(dict(zip(_ROW_NAMES, rows[0], strict=True)))


def _indexability(row: dict[str, Any]) -> dict[str, Any]:
    if row["is_external"] or (not row["scraped"] and not row["is_skipped"]):
        return {"indexable": None, "indexability_reason": None}
    record = {
        "url": row["url"],
        "status": row["status"],
        "redirect_dest": row["redirect_dest"],
        "is_skipped": row["is_skipped"],
        "skip_reason": row["skip_reason"],
        "error_kind": row["error_kind"],
        "noindex": row["noindex"],
        "headers": {"x-robots-tag": row["x_robots_tag"]} if row["x_robots_tag"] else {},
        "canonical": row["canonical"],
    }
    reason = non_indexable_reason(record)
    if reason is None and row["is_skipped"]:
        return {"indexable": None, "indexability_reason": None}  # the crawl's choice: nothing is known
    if reason is None and row["status"] is None:
        return {"indexable": None, "indexability_reason": None}
    if reason is None and row["content_type"] and row["content_type"] not in HTML_TYPES:
        reason = f"not HTML ({row['content_type']})"
    return {"indexable": int(reason is None), "indexability_reason": reason}
