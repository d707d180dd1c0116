"""Page queries: the summary, the filtered page list, one page's detail and its rendered HTML."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    CATEGORIES,
    COUNT_DEFINITIONS,
    METADATA_FIELDS,
    Query,
    UsageError,
    content_type_sql_filter,
    count_totals,
)
from nitpicker_core.archive import aggregates, digest, times

from .analysis import page_analysis
from .common import PAGES_OF_COMMIT, PAGING, order_by, paged, sorting, status_class_param, status_class_sql
from .screenshots import page_screenshot

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# "Page" semantics (strict: rendered HTML; loose: plus failures and skipped URLs), defined with the digests.
STRICT = digest.STRICT
LOOSE = digest.LOOSE
CATEGORY = digest.CATEGORY
TEXT_FIELDS = tuple(
    f for f in METADATA_FIELDS if f not in {"noindex", "nofollow", "noarchive", "noimageindex"}
)

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
BOOLS = ("is_external", "is_skipped")


def flags(row: dict[str, Any], names: tuple[str, ...] = BOOLS) -> dict[str, Any]:
    for name in names:
        if row.get(name) is not None:
            row[name] = bool(row[name])
    return row


def _summary(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    found = aggregates.value(archive, commit, "summary")
    if "internal" not in found["status"]:  # stored by a nitpicker that did not split statuses by side
        found = {"commit": commit, **digest.summary(archive.execute, commit)}
    # the named counts every front door shows, derived here once (nitpicker_core.counts defines them)
    return {**found, "totals": count_totals(found), "definitions": dict(COUNT_DEFINITIONS)}


def _pages(
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
    unfiltered = (
        category is None
        and not strict
        and not every_type
        and all(v is None for v in (status, missing, url, external, tag, jsonld_type, outcome, status_class))
    )
    params: list[Any]
    sql, params = (_PAGE_COLUMNS_BY_URL if sort == "url" else PAGE_COLUMNS), [commit]
    if category is not None:
        where, args = content_type_sql_filter("ps.content_type", category)
        sql, params = f"{sql} AND {where}", [*params, *args]
    elif strict:
        sql += f" AND {STRICT}"
    elif not every_type and status is None and not status_class and not outcome:
        # a status or outcome filter covers every URL of that status, HTML or not, as the summary counts them
        sql += f" AND {LOOSE}"
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


def _state(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    rows = archive.execute(
        "SELECT cp.url_id, cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        "WHERE cp.commit_id = ? AND u.url = ?",
        [commit, url],
    )
    if not rows:
        raise UsageError(f"no URL {url!r} in commit {commit}")
    return dict(rows[0])


def _inbound(archive: ArchiveReader, commit: int, url_id: int, limit: int) -> dict[str, Any]:
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


def _page_detail(
    archive: ArchiveReader, commit: int, url: str, inbound_limit: int, resource_limit: int = 200
) -> dict[str, Any]:
    ids = _state(archive, commit, url)
    page = archive.page(url, commit)
    assert page is not None  # _state found the URL in this commit
    page["category"] = archive.execute(
        f"SELECT {CATEGORY} FROM page_state ps WHERE ps.id = ?", [ids["state_id"]]
    )[0][0]
    columns = digest.anchor_columns(archive.execute)
    outbound = archive.execute(
        f"SELECT a.ordinal, tu.url AS href, {digest.written_href(columns)} AS written, {digest.position(columns)}, "
        "a.fragment, a.text, tps.status, d.url AS redirect_dest "
        "FROM anchor a JOIN url tu ON tu.id = a.target_url_id "
        "LEFT JOIN commit_page tc ON tc.commit_id = ? AND tc.url_id = a.target_url_id "
        "LEFT JOIN page_state tps ON tps.id = tc.state_id LEFT JOIN url d ON d.id = tps.redirect_dest_url_id "
        "WHERE a.state_id = ? ORDER BY a.ordinal",
        [commit, ids["state_id"]],
    )
    sources = archive.execute(
        "SELECT u.url, ps.status FROM page_state ps CROSS JOIN commit_page cp ON cp.commit_id = ? "
        "AND cp.url_id = ps.url_id AND cp.state_id = ps.id JOIN url u ON u.id = ps.url_id "
        "WHERE ps.redirect_dest_url_id = ? ORDER BY u.url",
        [commit, ids["url_id"]],
    )
    crawl_errors = archive.execute(
        f"SELECT kind, message, phase, {times.iso_sql(archive, 'at')} AS at "
        "FROM crawl_error WHERE commit_id = ? AND url_id = ? ORDER BY id",
        [commit, ids["url_id"]],
    )
    counts = archive.execute(
        "SELECT (SELECT COUNT(*) FROM image WHERE state_id = :s), "
        "(SELECT COUNT(*) FROM page_resource WHERE state_id = :s)",
        {"s": ids["state_id"]},
    )[0]
    resources = archive.execute(_PAGE_RESOURCES, [commit, ids["state_id"], resource_limit])
    tags = archive.execute(
        "SELECT provider, category, external_id, version, confidence FROM tag "
        "WHERE state_id = ? ORDER BY ordinal",
        [ids["state_id"]],
    )
    return {
        "url": url,
        "page": page,
        "skip_reason": page.get("skip_reason", ""),
        "outbound": [dict(r) for r in outbound],
        "inbound": _inbound(archive, commit, ids["url_id"], inbound_limit),
        "redirect_sources": [dict(r) for r in sources],
        "crawl_errors": [dict(r) for r in crawl_errors],
        "page_errors": archive.page_errors(url, commit),
        "images": counts[0],
        "resources": {"total": counts[1], "items": [flags(dict(r), ("is_external",)) for r in resources]},
        "tags": [dict(r) for r in tags],
        "analysis": page_analysis(archive, commit, ids["url_id"]),
        "screenshot": page_screenshot(archive, ids["state_id"]),
    }


def _page_html(archive: ArchiveReader, commit: int, url: str, max_chars: int) -> dict[str, Any]:
    _state(archive, commit, url)
    html = archive.html(url, commit)
    if html is None:
        return {"url": url, "html": None, "length": 0, "truncated": False}
    return {"url": url, "html": html[:max_chars], "length": len(html), "truncated": len(html) > max_chars}


URL_PARAM = {"url": {"type": "string", "description": "the page's URL exactly as crawled"}}

QUERIES = [
    Query(
        "summary",
        "Counts of internal/external URLs and pages (internal URLs include the host's URLs outside "
        "the crawl's scope, counted apart as outside_scope: checked, never pages), status distribution (hard "
        "failures broken down by error kind; URLs never requested counted apart as not_checked), content "
        "types by category and metadata fill rates of internal HTML pages; `totals` names the counts every "
        "front door shows (urls, internal_urls, external_urls, pages, 2xx…5xx, failed, skipped, "
        "not_checked) and `definitions` says what each one means.",
        _summary,
        order=10,
    ),
    Query(
        "pages",
        "Pages of the commit. Default: HTML pages plus rows without a content type that are not "
        "redirects (failures, skipped URLs and URLs never requested); `strict` keeps only text/html; "
        "`every_type` keeps every URL, and so does a `status`, `status_class` or `outcome` filter unless "
        "`strict` or a `category` narrows the type; a `category` replaces them. Each row says its `outcome` (answered, redirect, skipped, failed, not_checked).",
        _pages,
        {
            **PAGING,
            **sorting(PAGE_SORTS, "url"),
            "status": {"type": "integer", "description": "HTTP status code"},
            **status_class_param("an error was recorded: the outcome failed"),
            "missing": {
                "type": "string",
                "enum": list(TEXT_FIELDS),
                "description": "metadata field that is empty",
            },
            "url": {
                "type": "string",
                "format": "glob",
                "description": "case-sensitive substring of the URL; a pattern with * ? or [ is a GLOB over the "
                "whole URL (every [ set closed by ]; [[] is a literal [)",
            },
            "category": {"type": "string", "enum": list(CATEGORIES), "description": "content-type category"},
            "external": {"type": "boolean", "description": "only external (true) or internal (false) URLs"},
            "tag": {"type": "string", "description": "tag provider name (e.g. Google Analytics)"},
            "jsonld_type": {"type": "string", "description": "JSON-LD @type (e.g. Article)"},
            "strict": {"type": "boolean", "default": False, "description": "only text/html pages"},
            "every_type": {
                "type": "boolean",
                "default": False,
                "description": "every URL of the commit whatever its content type (images, redirect "
                "hops…), as the summary's status counts are",
            },
            "outcome": {
                "type": "string",
                "enum": list(digest.OUTCOMES),
                "description": "what became of the URL: answered, redirect, skipped, failed (an error was "
                "recorded) or not_checked (never requested, e.g. with --no-fetch-external)",
            },
        },
        order=11,
    ),
    Query(
        "page-detail",
        "One URL: metadata, outbound links (`written`: the href exactly as in the page, with line and col "
        "where recorded; `href`: the absolute URL it names), inbound links of other pages resolved "
        "through redirects (grouped by referring page; the page's links to itself counted apart as "
        "`inbound.self_links`), redirect sources, skip reason, errors, the image count, "
        "the sub-resources the page loaded (with status, type and size as stored in the commit), its "
        "technology tags, its analyzer cells (`analysis`: one entry per analyzer with `cells` and `notes`) "
        "and its `screenshot` (`crawl --screenshots`: hash, type, pixels and bytes of the image and its "
        "`thumbnail`, each read with the `screenshot` query; null without one).",
        _page_detail,
        {
            **URL_PARAM,
            "inbound_limit": {
                "type": "integer",
                "default": 1000,
                "minimum": 1,
                "description": "referring pages to list",
            },
            "resource_limit": {
                "type": "integer",
                "default": 200,
                "minimum": 1,
                "description": "sub-resources to list (sorted by URL; `resources.total` counts them all)",
            },
        },
        required=("url",),
        order=12,
    ),
    Query(
        "page-html",
        "The rendered HTML of one page, truncated to `max_chars`.",
        _page_html,
        {
            **URL_PARAM,
            "max_chars": {
                "type": "integer",
                "default": 100000,
                "minimum": 1,
                "description": "characters to return",
            },
        },
        required=("url",),
        order=13,
    ),
]
