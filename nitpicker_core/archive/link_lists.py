"""Read model of links: broken links and their anchors, external links, isolated pages and clusters, the link graph."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import aggregates, digest
from .lists import order_by, page_of, paged

if TYPE_CHECKING:
    from .reader import ArchiveReader

PAGES_OF_COMMIT = digest.PAGES_OF_COMMIT


def flags(row: dict[str, Any], names: tuple[str, ...] = ("is_external", "is_skipped")) -> dict[str, Any]:
    """The named 0/1 columns of a row as booleans."""
    for name in names:
        if row.get(name) is not None:
            row[name] = bool(row[name])
    return row


def _roots(archive: ArchiveReader, commit: int) -> list[str]:
    """The crawl's root URLs plus where they redirect to (a redirecting root still roots its target)."""
    roots = archive.info().get("roots") or []
    rows = archive.execute(
        "SELECT d.url FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id AND cp.commit_id = ? "
        "CROSS JOIN page_state ps ON ps.id = cp.state_id JOIN url d ON d.id = ps.redirect_dest_url_id "
        "WHERE u.url IN (SELECT value FROM json_each(?))",
        [commit, json.dumps(roots)],
    )
    return sorted({*roots, *(r[0] for r in rows)})


def _direction(order: str) -> str:
    return "DESC" if order == "desc" else "ASC"


def _broken_rows(archive: ArchiveReader, commit: int) -> tuple[str, list[Any]]:
    """(src_id, anchor_id, ordinal, dest_id, status) per broken anchor: stored rows, else the definition."""
    totals = aggregates.stored(archive, commit)
    if totals is None:
        return f"({aggregates.broken(commit)})", []
    return (
        "(SELECT s.url_id AS src_id, b.anchor_id, b.ordinal, b.dest_url_id AS dest_id, b.status "
        "FROM agg_broken b CROSS JOIN agg_url s ON s.set_id = b.set_id AND s.rank = b.src_rank "
        "WHERE b.set_id = ?)",
        [totals["set"]],
    )


def broken_link_list(
    archive: ArchiveReader,
    commit: int,
    limit: int,
    offset: int,
    sort: str | None,
    order: str,
    group: str = "target",
    per_group: int = 20,
) -> dict[str, Any]:
    if group == "anchor":
        return broken_link_anchors(archive, commit, limit, offset, sort or "source", order)
    rows, params = _broken_rows(archive, commit)
    key, name, other, columns = (
        ("b.dest_id", "url", "targets", BROKEN_TARGET_SORTS)
        if group == "target"
        else ("b.src_id", "source", "sources", BROKEN_SOURCE_SORTS)
    )
    sql = (
        f"SELECT {key} AS id, gu.url AS {name}, MIN(b.status) AS status, COUNT(DISTINCT b.src_id) AS pages, "
        f"COUNT(DISTINCT b.dest_id) AS targets, COUNT(*) AS anchors FROM {rows} b "
        f"JOIN url gu ON gu.id = {key} GROUP BY {key}"
    )
    clause = order_by(columns, sort or name, order, tiebreak=name)
    result = paged(archive, sql, params, clause, limit, offset)
    members = broken_link_members(archive, commit, rows, params, key, [r["id"] for r in result["items"]])
    for item in result["items"]:
        found = members.get(item.pop("id"), [])
        del item[other if group == "target" else "pages"]
        if group == "target":
            item["sources"] = list(dict.fromkeys(m["source"] for m in found))[:per_group]
        else:
            del item["status"]
            item["urls"] = list(dict.fromkeys(m["url"] for m in found))[:per_group]
        item["links"] = found[:per_group]
    return {"group": group, **result}


def broken_link_members(
    archive: ArchiveReader, commit: int, rows: str, params: list[Any], key: str, ids: list[int]
) -> dict[int, list[dict[str, Any]]]:
    """The broken anchors of the listed groups, in (source URL, document) order, with the href as written."""
    columns = digest.anchor_columns(archive.execute)
    found: dict[int, list[dict[str, Any]]] = {}
    if not ids:
        return found
    sql = (
        f"SELECT {key} AS id, su.url AS source, {digest.written_href(columns)} AS href, "
        f"{digest.position(columns)}, a.text, du.url AS url, b.status FROM {rows} b "
        "JOIN anchor a ON a.id = b.anchor_id JOIN url su ON su.id = b.src_id "
        "JOIN url tu ON tu.id = a.target_url_id JOIN url du ON du.id = b.dest_id "
        f"WHERE {key} IN (SELECT value FROM json_each(?)) ORDER BY {key}, su.url, b.ordinal"
    )
    for r in archive.execute(sql, [*params, json.dumps(ids)]):
        item = dict(r)
        found.setdefault(item.pop("id"), []).append(item)
    return found


def broken_link_anchors(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str
) -> dict[str, Any]:
    """One row per broken anchor (group=anchor)."""
    written = digest.written_href(digest.anchor_columns(archive.execute))
    columns = (
        f"SELECT su.url AS source, {written} AS href, tu.url AS target, a.fragment, "
        f"{digest.position(digest.anchor_columns(archive.execute))}, a.text, du.url AS url, b.status "
    )
    totals = aggregates.stored(archive, commit)
    if totals is None:
        sql = (
            f"{columns}FROM ({aggregates.broken(commit)}) b JOIN anchor a ON a.id = b.anchor_id "
            "JOIN url su ON su.id = b.src_id JOIN url tu ON tu.id = a.target_url_id JOIN url du ON du.id = b.dest_id"
        )
        result = paged(
            archive, sql, [], order_by(BROKEN_SORTS, sort, order, "source, a.ordinal"), limit, offset
        )
        return {"group": "anchor", **result}
    # Stored rows stream in (source URL, anchor ordinal) order through the primary key.
    sql = (
        f"{columns}FROM agg_broken b CROSS JOIN agg_url s ON s.set_id = b.set_id AND s.rank = b.src_rank "
        "CROSS JOIN url su ON su.id = s.url_id CROSS JOIN anchor a ON a.id = b.anchor_id "
        "CROSS JOIN url tu ON tu.id = a.target_url_id CROSS JOIN url du ON du.id = b.dest_url_id "
        "WHERE b.set_id = ?"
    )
    if sort == "source":
        clause = f" ORDER BY b.src_rank {_direction(order)}, b.ordinal"
    else:
        clause = order_by(BROKEN_SORTS, sort, order, "b.src_rank, b.ordinal")
    return {
        "group": "anchor",
        **paged(archive, sql, [totals["set"]], clause, limit, offset, total=totals["broken"]),
    }


BROKEN_SORTS = {"source": "source", "href": "href", "url": "url"}
BROKEN_TARGET_SORTS = {"url": "url", "pages": "pages", "anchors": "anchors"}
BROKEN_SOURCE_SORTS = {"source": "source", "targets": "targets", "anchors": "anchors"}
# The destination's current state and error kind (its own record first, else the commit's crawl_error).
_EXTERNAL_ERROR = (
    "COALESCE(ps.error_kind, "
    "(SELECT MIN(ce.kind || '') FROM crawl_error ce WHERE ce.commit_id = ?1 AND ce.url_id = du.id))"
)
# `outcome` tells a destination never requested (--no-fetch-external) from one that failed.
_EXTERNAL_COLUMNS = (
    f"SELECT du.url AS url, ps.status, {_EXTERNAL_ERROR} AS error_kind, "
    f"{digest.outcome_sql(_EXTERNAL_ERROR)} AS outcome, ps.is_external, e.referrers, e.anchors "
)
_EXTERNAL_STATE = (
    "LEFT JOIN commit_page dc ON dc.commit_id = ?1 AND dc.url_id = du.id "
    "LEFT JOIN page_state ps ON ps.id = dc.state_id"
)


def external_link_list(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str
) -> dict[str, Any]:
    totals = aggregates.stored(archive, commit)
    if totals is None:
        sql = (
            f"{_EXTERNAL_COLUMNS}FROM ({aggregates.external(commit)}) e JOIN url du ON du.id = e.dest_id "
            f"{_EXTERNAL_STATE}"
        )
        return paged(
            archive, sql, [commit], order_by(EXTERNAL_SORTS, sort, order, "url"), limit, offset, flags
        )
    sql = (
        f"{_EXTERNAL_COLUMNS}FROM agg_external e CROSS JOIN url du ON du.id = e.dest_url_id {_EXTERNAL_STATE} "
        "WHERE e.set_id = ?2"
    )
    if sort == "url":
        clause = f" ORDER BY e.rank {_direction(order)}"
    else:
        clause = order_by(EXTERNAL_SORTS, sort, order, "e.rank")
    return paged(
        archive, sql, [commit, totals["set"]], clause, limit, offset, flags, total=totals["external"]
    )


EXTERNAL_SORTS = {"url": "url", "status": "status", "referrers": "referrers", "anchors": "anchors"}


def isolated_page_list(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str, include_roots: bool
) -> dict[str, Any]:
    columns = "SELECT u.url, ps.status, ps.title, u.url IN (SELECT value FROM json_each(?1)) AS root "
    roots = json.dumps(_roots(archive, commit))
    totals = aggregates.stored(archive, commit)
    total = None
    if totals is None:
        sql = (
            f"{columns}FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ?2 "
            f"AND cp.url_id IN ({aggregates.isolated(commit)})"
        )
        ranked = "u.url"
    else:
        sql = (
            f"{columns}FROM agg_url n CROSS JOIN url u ON u.id = n.url_id "
            "CROSS JOIN commit_page cp ON cp.commit_id = ?2 AND cp.url_id = n.url_id "
            "CROSS JOIN page_state ps ON ps.id = cp.state_id WHERE n.set_id = ?3 AND n.isolated = 1"
        )
        ranked = "n.rank"
        total = totals["isolated"]
        if not include_roots:
            total -= archive.execute(
                "SELECT COUNT(*) FROM url u CROSS JOIN agg_url n ON n.set_id = ? AND n.url_id = u.id "
                "WHERE u.url IN (SELECT value FROM json_each(?)) AND n.isolated = 1",
                [totals["set"], roots],
            )[0][0]
    if not include_roots:
        sql += " AND NOT root"
    params = [roots, commit] if totals is None else [roots, commit, totals["set"]]
    if sort == "url":
        clause = f" ORDER BY {ranked} {_direction(order)}"
    else:
        clause = order_by(ISOLATED_SORTS, sort, order, ranked)
    return paged(archive, sql, params, clause, limit, offset, lambda r: flags(r, ("root",)), total)


ISOLATED_SORTS = {"url": "u.url", "status": "ps.status", "title": "ps.title", "root": "root"}


def _components(archive: ArchiveReader, commit: int) -> list[list[str]]:
    """Weakly connected components of internal HTML pages through resolved anchors, computed now."""
    urls = {
        r[0]: r[1]
        for r in archive.execute(
            f"SELECT n.url_id, u.url FROM ({aggregates.nodes(commit)}) n JOIN url u ON u.id = n.url_id"
        )
    }
    edges = ((src, dst) for src, dst, _ in archive.execute(aggregates.edges(commit)))
    groups: dict[int, list[str]] = {}
    for node, root in aggregates.components(list(urls), edges).items():
        groups.setdefault(root, []).append(urls[node])
    return [sorted(g) for g in groups.values()]


def isolated_cluster_list(
    archive: ArchiveReader, commit: int, limit: int, offset: int, singletons: bool, rooted: bool
) -> dict[str, Any]:
    totals = aggregates.stored(archive, commit)
    if totals is not None:
        return _stored_clusters(archive, commit, totals["set"], limit, offset, singletons, rooted)
    roots = set(_roots(archive, commit))
    found: list[dict[str, Any]] = []
    for urls in _components(archive, commit):
        entry = {
            "size": len(urls),
            "singleton": len(urls) == 1,
            "roots": [u for u in urls if u in roots],
            "urls": urls,
        }
        found.append(entry)
    singleton_total = sum(1 for c in found if c["singleton"] and not c["roots"])
    found = [c for c in found if (rooted or not c["roots"]) and (singletons or not c["singleton"])]
    found.sort(key=lambda c: (-c["size"], c["urls"][0]))
    result = page_of(found[offset : offset + limit], len(found), limit, offset)
    result["singleton_total"] = singleton_total
    return result


def _stored_clusters(
    archive: ArchiveReader, commit: int, set_id: int, limit: int, offset: int, singletons: bool, rooted: bool
) -> dict[str, Any]:
    # A component is named by its smallest rank, i.e. its first URL, so (size DESC, comp) is the sort order.
    root_rows = archive.execute(
        "SELECT n.comp, u.url, c.size FROM url u CROSS JOIN agg_url n ON n.set_id = ?1 AND n.url_id = u.id "
        "JOIN agg_cluster c ON c.set_id = ?1 AND c.comp = n.comp "
        "WHERE u.url IN (SELECT value FROM json_each(?2)) AND n.comp IS NOT NULL",
        [set_id, json.dumps(_roots(archive, commit))],
    )
    where, params = "c.set_id = ?", list[Any]([set_id])
    if not singletons:
        where += " AND c.size > 1"
    if not rooted:
        where += " AND c.comp NOT IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(sorted({r[0] for r in root_rows})))
    total = archive.execute(f"SELECT COUNT(*) FROM agg_cluster c WHERE {where}", params)[0][0]
    singles = archive.execute("SELECT COUNT(*) FROM agg_cluster WHERE set_id = ? AND size = 1", [set_id])[0][
        0
    ]
    singles -= len({r[0] for r in root_rows if r[2] == 1})
    listed = [
        (r[0], r[1])
        for r in archive.execute(
            f"SELECT c.comp, c.size FROM agg_cluster c WHERE {where} ORDER BY c.size DESC, c.comp LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
    ]
    members: dict[int, list[str]] = {comp: [] for comp, _ in listed}
    for comp, url in archive.execute(
        "SELECT n.comp, u.url FROM agg_url n INDEXED BY agg_url_comp CROSS JOIN url u ON u.id = n.url_id "
        "WHERE n.set_id = ? AND n.comp IN (SELECT value FROM json_each(?)) ORDER BY n.comp, n.rank",
        [set_id, json.dumps(list(members))],
    ):
        members[comp].append(url)
    items = [
        {
            "size": size,
            "singleton": size == 1,
            "roots": sorted(r[1] for r in root_rows if r[0] == comp),
            "urls": members[comp],
        }
        for comp, size in listed
    ]
    result = page_of(items, total, limit, offset)
    result["singleton_total"] = singles
    return result


def link_graph(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str, all_nodes: bool
) -> dict[str, Any]:
    totals = aggregates.stored(archive, commit)
    if totals is None:
        sql = (
            f"SELECT su.url AS source, du.url AS target, e.anchors FROM ({aggregates.graph_edges(commit)}) e "
            "JOIN url su ON su.id = e.src JOIN url du ON du.id = e.dst"
        )
        result = paged(archive, sql, [], order_by(GRAPH_SORTS, sort, order, "source, target"), limit, offset)
    else:
        sql = (
            "SELECT su.url AS source, du.url AS target, e.anchors FROM agg_edge e "
            "CROSS JOIN agg_url s ON s.set_id = e.set_id AND s.rank = e.src_rank "
            "CROSS JOIN url su ON su.id = s.url_id "
            "CROSS JOIN agg_url d ON d.set_id = e.set_id AND d.rank = e.dst_rank "
            "CROSS JOIN url du ON du.id = d.url_id WHERE e.set_id = ?"
        )
        # Edges are stored in (source, target) URL order; other sorts sort every edge.
        ranked = {"source": "e.src_rank", "target": "e.dst_rank", "anchors": "e.anchors"}
        clause = f" ORDER BY {ranked[sort]} {_direction(order)}, e.src_rank, e.dst_rank"
        result = paged(archive, sql, [totals["set"]], clause, limit, offset, total=totals["graph_edges"])
    internal = f"ps.is_external = 0 AND {aggregates.LOOSE}"
    node_sql = (
        f"SELECT u.url, ps.status, ps.title FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND {internal}"
    )
    params: list[Any] = [commit]
    if not all_nodes:
        ends = {url for e in result["items"] for url in (e["source"], e["target"])}
        node_sql = (
            "SELECT u.url, ps.status, ps.title FROM url u CROSS JOIN commit_page cp ON cp.commit_id = ? "
            "AND cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id "
            f"WHERE {internal} AND u.url IN (SELECT value FROM json_each(?))"
        )
        params = [commit, json.dumps(sorted(ends))]
    result["nodes"] = [dict(r) for r in archive.execute(node_sql + " ORDER BY u.url", params)]
    return result


GRAPH_SORTS = {"source": "source", "target": "target", "anchors": "e.anchors"}
