"""Link queries: broken and external links, isolated pages and clusters, and the link graph."""

from __future__ import annotations

import json
from typing import Any

from nitpicker_core import Query

from .common import PAGES_OF_COMMIT, PAGING, order_by, page_of, paged, sorting
from .pages import ERRORS_OF_COMMIT, LOOSE, STRICT, flags

# A URL row of the commit that redirects, joined so only rows of the commit count.
_REDIRECTS = ("page_state r CROSS JOIN commit_page rc ON rc.commit_id = ? AND rc.url_id = r.url_id "
              "AND rc.state_id = r.id")
# Resolved edges between pages: an anchor's target followed through its redirect_dest, counted.
_EDGES = (
    "SELECT sc.url_id AS src, COALESCE(tps.redirect_dest_url_id, a.target_url_id) AS dst, COUNT(*) AS anchors "
    "FROM commit_page sc JOIN page_state sps ON sps.id = sc.state_id JOIN anchor a ON a.state_id = sc.state_id "
    "LEFT JOIN commit_page tc ON tc.commit_id = sc.commit_id AND tc.url_id = a.target_url_id "
    "LEFT JOIN page_state tps ON tps.id = tc.state_id "
    "WHERE sc.commit_id = ? AND sps.is_external = 0 GROUP BY 1, 2"
)


def _roots(archive: Any, commit: int) -> list[str]:
    """The crawl's root URLs plus where they redirect to (a redirecting root still roots its target)."""
    roots = archive.info().get("roots") or []
    rows = archive.execute(
        "SELECT d.url FROM url u JOIN commit_page cp ON cp.url_id = u.id AND cp.commit_id = ? "
        "JOIN page_state ps ON ps.id = cp.state_id JOIN url d ON d.id = ps.redirect_dest_url_id "
        "WHERE u.url IN (SELECT value FROM json_each(?))", [commit, json.dumps(roots)])
    return sorted({*roots, *(r[0] for r in rows)})


def _broken_links(archive: Any, commit: int, limit: int, offset: int, sort: str, order: str) -> dict[str, Any]:
    sql = (
        "WITH d404 AS (SELECT cp.url_id, ps.status FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
        "WHERE cp.commit_id = ? AND ps.status = 404 AND ps.redirect_dest_url_id IS NULL), "
        "dead(via_id, dest_id, status) AS (SELECT url_id, url_id, status FROM d404 UNION ALL "
        f"SELECT r.url_id, d.url_id, d.status FROM d404 d CROSS JOIN {_REDIRECTS} WHERE r.redirect_dest_url_id = d.url_id) "
        "SELECT su.url AS source, tu.url AS href, a.fragment, a.text, du.url AS url, dead.status "
        "FROM dead CROSS JOIN anchor a ON a.target_url_id = dead.via_id "
        "CROSS JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id JOIN url su ON su.id = sc.url_id "
        "JOIN url tu ON tu.id = a.target_url_id JOIN url du ON du.id = dead.dest_id"
    )
    order_sql = order_by(_BROKEN_SORTS, sort, order, "source, a.ordinal")
    return paged(archive, sql, [commit, commit, commit], order_sql, limit, offset)


_BROKEN_SORTS = {"source": "source", "href": "href", "url": "url"}


def _external_links(archive: Any, commit: int, limit: int, offset: int, sort: str, order: str) -> dict[str, Any]:
    # Anchors whose written target is external, grouped by where that target finally led.
    sql = (
        "WITH ext(via_id, dest_id) AS (SELECT cp.url_id, COALESCE(ps.redirect_dest_url_id, cp.url_id) "
        "FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 1) "
        "SELECT du.url AS url, ps.status, COALESCE(json_extract(ps.extra, '$.error_kind'), ce.kind) AS error_kind, "
        "ps.is_external, COUNT(DISTINCT sc.url_id) AS referrers, COUNT(*) AS anchors "
        "FROM ext CROSS JOIN anchor a ON a.target_url_id = ext.via_id "
        "CROSS JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id JOIN url du ON du.id = ext.dest_id "
        "LEFT JOIN commit_page dc ON dc.commit_id = ? AND dc.url_id = ext.dest_id "
        f"LEFT JOIN page_state ps ON ps.id = dc.state_id LEFT JOIN {ERRORS_OF_COMMIT} ce ON ce.url_id = ext.dest_id "
        "GROUP BY ext.dest_id"
    )
    order_sql = order_by(_EXTERNAL_SORTS, sort, order, "url")
    return paged(archive, sql, [commit] * 4, order_sql, limit, offset, flags)


_EXTERNAL_SORTS = {"url": "url", "status": "status", "referrers": "referrers", "anchors": "anchors"}


def _isolated_pages(archive: Any, commit: int, limit: int, offset: int, sort: str, order: str,
                    include_roots: bool) -> dict[str, Any]:
    # Internal HTML pages no anchor of another page reaches, directly or through a URL redirecting to them.
    sql = (
        "SELECT u.url, ps.status, ps.title, u.url IN (SELECT value FROM json_each(?)) AS root "
        f"FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND ps.is_external = 0 AND {STRICT} "
        "AND NOT EXISTS (SELECT 1 FROM anchor a CROSS JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id "
        "WHERE a.target_url_id = cp.url_id AND sc.url_id != cp.url_id) "
        f"AND NOT EXISTS (SELECT 1 FROM {_REDIRECTS} CROSS JOIN anchor a ON a.target_url_id = r.url_id "
        "CROSS JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id "
        "WHERE r.redirect_dest_url_id = cp.url_id AND sc.url_id != cp.url_id)"
    )
    if not include_roots:
        sql += " AND NOT root"
    params = [json.dumps(_roots(archive, commit)), commit, commit, commit, commit]
    return paged(archive, sql, params, order_by(_ISOLATED_SORTS, sort, order), limit, offset,
                 lambda r: flags(r, ("root",)))


_ISOLATED_SORTS = {"url": "u.url", "status": "ps.status", "title": "ps.title", "root": "root"}


def _components(archive: Any, commit: int) -> list[list[str]]:
    """Weakly connected components of internal HTML pages through resolved anchors (union-find)."""
    nodes = {r[0]: r[1] for r in archive.execute(
        f"SELECT cp.url_id, u.url FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND ps.is_external = 0 AND {STRICT}",
        [commit])}
    parent = {n: n for n in nodes}

    def find(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for src, dst, _ in archive.execute(_EDGES, [commit]):
        if src in nodes and dst in nodes:
            a, b = find(src), find(dst)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[str]] = {}
    for n, url in nodes.items():
        groups.setdefault(find(n), []).append(url)
    return [sorted(g) for g in groups.values()]


def _isolated_clusters(archive: Any, commit: int, limit: int, offset: int, singletons: bool,
                       rooted: bool) -> dict[str, Any]:
    roots = set(_roots(archive, commit))
    found = []
    for urls in _components(archive, commit):
        entry = {"size": len(urls), "singleton": len(urls) == 1, "roots": [u for u in urls if u in roots],
                 "urls": urls}
        found.append(entry)
    singleton_total = sum(1 for c in found if c["singleton"] and not c["roots"])
    found = [c for c in found if (rooted or not c["roots"]) and (singletons or not c["singleton"])]
    found.sort(key=lambda c: (-c["size"], c["urls"][0]))
    result = page_of(found[offset:offset + limit], len(found), limit, offset)
    result["singleton_total"] = singleton_total
    return result


def _link_graph(archive: Any, commit: int, limit: int, offset: int, sort: str, order: str,
                all_nodes: bool) -> dict[str, Any]:
    internal = f"ps.is_external = 0 AND {LOOSE}"
    sql = (
        f"SELECT su.url AS source, du.url AS target, e.anchors FROM ({_EDGES}) e "
        "JOIN url su ON su.id = e.src JOIN url du ON du.id = e.dst "
        "JOIN commit_page dc ON dc.commit_id = ? AND dc.url_id = e.dst JOIN page_state ps ON ps.id = dc.state_id "
        f"WHERE e.src != e.dst AND {internal}"
    )
    result = paged(archive, sql, [commit, commit], order_by(_GRAPH_SORTS, sort, order, "source, target"),
                   limit, offset)
    node_sql = f"SELECT u.url, ps.status, ps.title FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND {internal}"
    params: list[Any] = [commit]
    if not all_nodes:
        ends = {url for e in result["items"] for url in (e["source"], e["target"])}
        node_sql, params = node_sql + " AND u.url IN (SELECT value FROM json_each(?))", [commit, json.dumps(sorted(ends))]
    result["nodes"] = [dict(r) for r in archive.execute(node_sql + " ORDER BY u.url", params)]
    return result


_GRAPH_SORTS = {"source": "source", "target": "target", "anchors": "e.anchors"}

QUERIES = [
    Query("broken-links", "One row per anchor whose destination, followed through redirects, answered 404: "
          "source page, href as written, resolved URL, status and anchor text.", _broken_links,
          {**PAGING, **sorting(_BROKEN_SORTS, "source")}, order=20),
    Query("external-links", "Links to external URLs grouped by resolved destination, with its status, error "
          "kind and the number of distinct referring pages.", _external_links,
          {**PAGING, **sorting(_EXTERNAL_SORTS, "url")}, order=21),
    Query("isolated-pages", "Internal HTML pages that no anchor of another page reaches (redirects followed). "
          "Roots are entry points: they are listed with root=true unless include_roots is false.",
          _isolated_pages,
          {**PAGING, **sorting(_ISOLATED_SORTS, "url"),
           "include_roots": {"type": "boolean", "default": True, "description": "also list unlinked roots"}},
          order=22),
    Query("isolated-clusters", "Weakly connected components of internal HTML pages (resolved anchors) that "
          "contain no root, largest first; singletons are counted, listed only with `singletons`.",
          _isolated_clusters,
          {**PAGING,
           "singletons": {"type": "boolean", "default": False, "description": "also list one-page components"},
           "rooted": {"type": "boolean", "default": False, "description": "also list components with a root"}},
          order=23),
    Query("link-graph", "Internal pages and the resolved, deduplicated links between them (anchor counts), "
          "paginated by edges; nodes are the endpoints of the returned edges unless all_nodes.", _link_graph,
          {**PAGING, **sorting(_GRAPH_SORTS, "source"),
           "all_nodes": {"type": "boolean", "default": False, "description": "list every internal page"}},
          order=24),
]
