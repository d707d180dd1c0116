"""Read model of pages: the filtered page list, one page's inbound links and the rows of its detail."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core.content_types import sql_filter as content_type_sql_filter
from nitpicker_core.errors import UsageError

from . import aggregates, digest, times
from .link_lists import flags
from .lists import order_by, paged, status_class_sql

if TYPE_CHECKING:
    from .reader import ArchiveReader

PAGES_OF_COMMIT = digest.PAGES_OF_COMMIT
CATEGORY = digest.CATEGORY
_PAGE_SELECT = (
    "SELECT u.url, ps.status, ps.content_type, " + CATEGORY + " AS category, ps.title, ps.description, "
    "ps.lang, ps.is_external, ps.is_skipped, ps.skip_reason, d.url AS redirect_dest, "
    + digest.ERROR_KIND
    + " AS error_kind, "
    + digest.OUTCOME
    + " AS outcome, ps.content_length, "
    'cp."order" AS crawl_order '
)
_PAGE_JOINS = "LEFT JOIN url d ON d.id = ps.redirect_dest_url_id WHERE cp.commit_id = ?"
PAGE_COLUMNS = _PAGE_SELECT + "FROM " + PAGES_OF_COMMIT + " " + _PAGE_JOINS
# The same rows driven by the URL index, so a URL-sorted page streams and LIMIT stops early.
_PAGE_COLUMNS_BY_URL = (
    _PAGE_SELECT + "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id "
    "CROSS JOIN page_state ps ON ps.id = cp.state_id " + _PAGE_JOINS
)
PAGE_SORTS = {
    "url": "u.url",
    "status": "ps.status",
    "title": "ps.title",
    "content_type": "ps.content_type",
    "size": "ps.content_length",
    "crawl_order": 'cp."order"',
}


def page_list(
    archive: ArchiveReader,
    commit: int,
    limit: int,
    offset: int,
    sort: str,
    order: str,
    status: int | None = None,
    missing: str | None = None,
    url: str | None = None,
    category: str | None = None,
    external: bool | None = None,
    tag: str | None = None,
    jsonld_type: str | None = None,
    strict: bool = False,
    outcome: str | None = None,
    status_class: str | None = None,
    every_type: bool = False,
) -> dict[str, Any]:
    """The commit's pages filtered and sorted as the `pages` query documents, in the list shape."""
    unfiltered = (
        category is None
        and not strict
        and not every_type
        and all(v is None for v in (status, missing, url, external, tag, jsonld_type, outcome, status_class))
    )
    sql, params = (_PAGE_COLUMNS_BY_URL if sort == "url" else PAGE_COLUMNS), list[Any]([commit])
    if category is not None:
        where, args = content_type_sql_filter("ps.content_type", category)
        sql, params = f"{sql} AND {where}", [*params, *args]
    elif strict:
        sql += f" AND {digest.STRICT}"
    elif not every_type and status is None and not status_class and not outcome:
        # a status or outcome filter covers every URL of that status, HTML or not, as the summary counts them
        sql += f" AND {digest.LOOSE}"
    if status is not None:
        sql, params = sql + " AND ps.status = ?", [*params, status]
    if status_class:
        sql += " AND " + status_class_sql("ps.status", status_class, f"{digest.OUTCOME} = 'failed'")
    if missing is not None:
        sql += f" AND (ps.{missing} IS NULL OR ps.{missing} = '')"
    if url:
        glob = any(ch in url for ch in "*?[")
        sql, params = sql + (" AND u.url GLOB ?" if glob else " AND instr(u.url, ?) > 0"), [*params, url]
    if external is not None:
        sql, params = sql + " AND ps.is_external = ?", [*params, int(external)]
    if outcome:
        sql, params = sql + f" AND {digest.OUTCOME} = ?", [*params, outcome]
    if tag:
        sql += " AND EXISTS (SELECT 1 FROM tag t WHERE t.state_id = ps.id AND t.provider = ? COLLATE NOCASE)"
        params.append(tag)
    if jsonld_type:
        sql += (
            " AND EXISTS (SELECT 1 FROM jsonld j, json_each(CASE WHEN json_valid(j.types) THEN j.types "
            "ELSE '[]' END) e WHERE j.state_id = ps.id AND e.value = ? COLLATE NOCASE)"
        )
        params.append(jsonld_type)
    total = aggregates.value(archive, commit, "list_totals")["pages"] if unfiltered else None
    return paged(archive, sql, params, order_by(PAGE_SORTS, sort, order), limit, offset, flags, total)


def page_ids(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    """``url_id`` and ``state_id`` of ``url`` in the commit; a usage error when the commit has no such URL."""
    rows = archive.execute(
        "SELECT cp.url_id, cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        "WHERE cp.commit_id = ? AND u.url = ?",
        [commit, url],
    )
    if not rows:
        raise UsageError(f"no URL {url!r} in commit {commit}")
    return dict(rows[0])


def inbound_links(archive: ArchiveReader, commit: int, url_id: int, limit: int) -> dict[str, Any]:
    """The pages linking to the URL (directly or through a redirect), first ``limit`` of them with their
    anchors, texts and hrefs, the ``total``, and ``self_links`` (the page's anchors to itself)."""
    # Anchors of other pages aimed at the URL itself or at any URL of this commit that redirects to it; the
    # page's own anchors to itself (in-page #fragments) are not referrers: they are counted as self_links.
    targets = (
        "WITH targets(url_id) AS (SELECT ? UNION SELECT r.url_id FROM page_state r CROSS JOIN commit_page rc "
        "ON rc.commit_id = ? AND rc.url_id = r.url_id AND rc.state_id = r.id "
        "WHERE r.redirect_dest_url_id = ?) "
    )
    anchors = (
        "FROM targets t CROSS JOIN anchor a ON a.target_url_id = t.url_id "
        "CROSS JOIN commit_page sc ON sc.state_id = a.state_id AND sc.commit_id = ? "
    )
    sql = (
        targets + "SELECT su.url AS source, COUNT(*) AS anchors, json_group_array(DISTINCT a.text) AS texts, "
        f"json_group_array(DISTINCT tu.url) AS hrefs {anchors}JOIN url su ON su.id = sc.url_id "
        "JOIN url tu ON tu.id = a.target_url_id WHERE sc.url_id != ? GROUP BY su.url"
    )
    params = [url_id, commit, url_id, commit, url_id]
    total = archive.execute(f"SELECT COUNT(*) FROM ({sql})", params)[0][0]
    rows = archive.execute(f"{sql} ORDER BY su.url LIMIT ?", [*params, limit])
    items = [
        {
            "source": r["source"],
            "anchors": r["anchors"],
            "texts": json.loads(r["texts"]),
            "hrefs": json.loads(r["hrefs"]),
        }
        for r in rows
    ]
    self_links = archive.execute(f"{targets}SELECT COUNT(*) {anchors}WHERE sc.url_id = ?", params)[0][0]
    return {"total": total, "items": items, "self_links": self_links}


# The sub-resources a page state loaded, with what this commit stored about each (no row: status None).
_PAGE_RESOURCES = (
    "SELECT u.url, rs.status, rs.content_type, rs.content_length, rs.compression, rs.cdn, rs.is_external "
    "FROM page_resource p JOIN url u ON u.id = p.resource_url_id "
    "LEFT JOIN commit_resource cr ON cr.commit_id = ? AND cr.url_id = p.resource_url_id "
    "LEFT JOIN resource_state rs ON rs.id = cr.state_id WHERE p.state_id = ? ORDER BY u.url, p.id LIMIT ?"
)


# The sub-resources a page state loaded, with what this commit stored about each (no row: status None).
_PAGE_RESOURCES = (
    "SELECT u.url, rs.status, rs.content_type, rs.content_length, rs.compression, rs.cdn, rs.is_external "
    "FROM page_resource p JOIN url u ON u.id = p.resource_url_id "
    "LEFT JOIN commit_resource cr ON cr.commit_id = ? AND cr.url_id = p.resource_url_id "
    "LEFT JOIN resource_state rs ON rs.id = cr.state_id WHERE p.state_id = ? ORDER BY u.url, p.id LIMIT ?"
)


def page_detail_rows(
    archive: ArchiveReader, commit: int, url_id: int, state_id: int, resource_limit: int
) -> dict[str, Any]:
    """What page-detail shows of one page besides its row: category, outbound anchors with their targets'
    answers, redirect sources, crawl errors, image and resource counts, resources (first ``resource_limit``)
    and tags."""
    category = archive.execute(f"SELECT {CATEGORY} FROM page_state ps WHERE ps.id = ?", [state_id])[0][0]
    columns = digest.anchor_columns(archive.execute)
    outbound = archive.execute(
        f"SELECT a.ordinal, tu.url AS href, {digest.written_href(columns)} AS written, {digest.position(columns)}, "
        "a.fragment, a.text, tps.status, d.url AS redirect_dest "
        "FROM anchor a JOIN url tu ON tu.id = a.target_url_id "
        "LEFT JOIN commit_page tc ON tc.commit_id = ? AND tc.url_id = a.target_url_id "
        "LEFT JOIN page_state tps ON tps.id = tc.state_id LEFT JOIN url d ON d.id = tps.redirect_dest_url_id "
        "WHERE a.state_id = ? ORDER BY a.ordinal",
        [commit, state_id],
    )
    sources = archive.execute(
        "SELECT u.url, ps.status FROM page_state ps CROSS JOIN commit_page cp ON cp.commit_id = ? "
        "AND cp.url_id = ps.url_id AND cp.state_id = ps.id JOIN url u ON u.id = ps.url_id "
        "WHERE ps.redirect_dest_url_id = ? ORDER BY u.url",
        [commit, url_id],
    )
    crawl_errors = archive.execute(
        f"SELECT kind, message, phase, {times.iso_sql(archive, 'at')} AS at "
        "FROM crawl_error WHERE commit_id = ? AND url_id = ? ORDER BY id",
        [commit, url_id],
    )
    counts = archive.execute(
        "SELECT (SELECT COUNT(*) FROM image WHERE state_id = :s), "
        "(SELECT COUNT(*) FROM page_resource WHERE state_id = :s)",
        {"s": state_id},
    )[0]
    resources = archive.execute(_PAGE_RESOURCES, [commit, state_id, resource_limit])
    tags = archive.execute(
        "SELECT provider, category, external_id, version, confidence FROM tag "
        "WHERE state_id = ? ORDER BY ordinal",
        [state_id],
    )
    return {
        "category": category,
        "outbound": [dict(r) for r in outbound],
        "redirect_sources": [dict(r) for r in sources],
        "crawl_errors": [dict(r) for r in crawl_errors],
        "images": counts[0],
        "resources": {"total": counts[1], "items": [flags(dict(r), ("is_external",)) for r in resources]},
        "tags": [dict(r) for r in tags],
    }
