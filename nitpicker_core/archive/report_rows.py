"""Keyset-paginated batches the report sheets stream from: one call reads one batch after a URL.

Each batch is ``{"items": [...], "next_after": URL or None}``; the items are JSON-ready dicts (the queries
``report-*`` return them as they are).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import digest, referrers
from .cells import COLUMNS_ONLY
from .page_lists import render_decision_sql, seo_join, seo_select, seo_shape
from .rows import field_sql

if TYPE_CHECKING:
    from .reader import ArchiveReader

SCOPES = {
    # Page List: internal rendered HTML pages inside the crawl's scope.
    "targets": "ps.is_external = 0 AND ps.content_type = 'text/html' AND ps.is_target = 1",
    # Links: every URL row except redirect sources (their destination has its own row).
    "rows": "ps.redirect_dest_url_id IS NULL",
    "html": "ps.is_external = 0 AND ps.content_type = 'text/html'",
}
NOTE_ITEMS = 30  # URLs listed in a note; the count cell always has the full number

# The status a link finally gets: a redirecting target's destination answers for it.
_RESOLVED = (
    "FROM anchor a LEFT JOIN commit_page tc ON tc.commit_id = :c AND tc.url_id = a.target_url_id "
    "LEFT JOIN page_state tps ON tps.id = tc.state_id "
    "LEFT JOIN commit_page dc ON dc.commit_id = :c AND dc.url_id = tps.redirect_dest_url_id "
    "LEFT JOIN page_state dps ON dps.id = dc.state_id JOIN url tu ON tu.id = a.target_url_id "
    "LEFT JOIN url du ON du.id = tps.redirect_dest_url_id"
)
_R = "(CASE WHEN tps.redirect_dest_url_id IS NOT NULL THEN dps.{0} ELSE tps.{0} END)"
# The error recorded for the (resolved) URL: its state's own record first, else the commit's crawl_error.
_ERROR = (
    f"COALESCE({_R.format('error_kind')}, (SELECT MIN(ce.kind) FROM crawl_error ce "
    "WHERE ce.commit_id = :c AND ce.url_id = COALESCE(tps.redirect_dest_url_id, a.target_url_id)))"
)
# Bad: the (resolved) URL answered 4xx/5xx, or was requested and failed (an error was recorded). Skipped
# URLs and URLs never requested (--no-fetch-external, a crawl cut short) are not checked, so never bad.
_BAD = (
    f"(tc.url_id IS NOT NULL AND NOT COALESCE({_R.format('is_skipped')}, 0) "
    f"AND ({_R.format('status')} >= 400 OR ({_R.format('status')} IS NULL AND {_ERROR} IS NOT NULL)))"
)


def _links(columns: frozenset[str]) -> str:
    """Per page: link counts and the bad links (href as written, where it leads, position, error kind)."""
    return (
        "(SELECT json_object('internal', COALESCE(SUM(NOT x.ext), 0), 'external', COALESCE(SUM(x.ext), 0), "
        "'internal_bad', COALESCE(SUM(NOT x.ext AND x.bad), 0), 'external_bad', COALESCE(SUM(x.ext AND x.bad), 0), "
        "'bad', json_group_array(json_array(x.ext, x.text, x.status, x.status_text, x.href, x.dest, x.line, x.col, "
        "x.error)) FILTER (WHERE x.bad)) FROM ("
        f"SELECT COALESCE(tps.is_external, 0) AS ext, a.text, {_R.format('status')} AS status, "
        f"{_R.format('status_text')} AS status_text, {digest.written_href(columns)} AS href, "
        f"COALESCE(du.url, tu.url) AS dest, {digest.position(columns)}, {_BAD} AS bad, "
        f"CASE WHEN {_R.format('status')} IS NULL THEN {_ERROR} END AS error "
        f"{_RESOLVED} WHERE a.state_id = ps.id) x)"
    )


# URLs of this commit that redirect to the page.
_SOURCES = (
    "page_state r CROSS JOIN commit_page rc ON rc.commit_id = :c AND rc.state_id = r.id "
    "AND rc.url_id = r.url_id WHERE r.redirect_dest_url_id = k.url_id"
)
_REDIRECT_FROM = (
    f"(SELECT COUNT(*) FROM {_SOURCES}) AS redirect_from, "
    f"(SELECT json_group_array(url) FROM (SELECT ru.url FROM {_SOURCES.replace(' WHERE', ' JOIN url ru ON ru.id = r.url_id WHERE')} "
    f"ORDER BY ru.url LIMIT {NOTE_ITEMS})) AS redirect_from_urls"
)
# Anchors of this commit's pages aimed at the page or at a URL redirecting to it (CROSS JOIN fixes the
# join order: from the few target ids through the target index, never a scan of all anchors).
_INBOUND = (
    f"FROM (SELECT k.url_id AS id UNION ALL SELECT r.url_id FROM {_SOURCES}) t "
    "CROSS JOIN anchor a ON a.target_url_id = t.id "
    "CROSS JOIN commit_page sc ON sc.commit_id = :c AND sc.state_id = a.state_id"
)
# Referrers are anchors of other pages; a page's anchors to itself (in-page #fragments, a link to its own
# URL or through a redirect back to it) are counted apart as self_links.
_REFERRERS = (
    f"(SELECT COUNT(*) {_INBOUND} WHERE sc.url_id != k.url_id) AS referrers, "
    f"(SELECT json_group_array(url) FROM (SELECT DISTINCT su.url {_INBOUND} CROSS JOIN url su ON su.id = sc.url_id "
    f"WHERE sc.url_id != k.url_id ORDER BY su.url LIMIT {NOTE_ITEMS})) AS referrer_urls, "
    f"(SELECT COUNT(*) {_INBOUND} WHERE sc.url_id = k.url_id) AS self_links"
)
_CELLS = (
    '(SELECT json_group_array(json_array(c.analyzer, c."column", json(c.value), c.note)) '
    f"FROM analysis_cell c WHERE c.commit_id = :c AND c.url_id = k.url_id AND {COLUMNS_ONLY}) AS cells"
)
_META = (
    "title",
    "description",
    "keywords",
    "lang",
    "noindex",
    "nofollow",
    "noarchive",
    "canonical",
    "twitter_card",
    "og_site_name",
    "og_url",
    "og_title",
    "og_description",
    "og_type",
    "og_image",
)


def _rendering(archive: ArchiveReader) -> str:
    """Whether the page was rendered and why (or why not): ``--render auto``'s stored decision (rendered,
    reason: nitpicker_core.crawler.auto), else the reason a page was read without a browser (``unrendered``)
    and whether a rendered HTML was stored."""
    decided = render_decision_sql(archive)
    auto = f"json_extract({decided}, '$.{{}}')"
    return (
        f"{auto.format('rendered')} AS render_rendered, {auto.format('reason')} AS render_reason, "
        f"{field_sql(archive, 'unrendered')} AS unrendered, ps.html_sha256 IS NOT NULL AS has_html"
    )


def _keys(
    archive: ArchiveReader, commit: int, scope: str, after: str, limit: int, extra: str = ""
) -> list[Any]:
    """The next ``limit`` page rows of ``scope`` after the URL ``after``, in URL order."""
    # CROSS JOIN keeps the url index as the outer loop: a range scan in URL order that stops after `limit`.
    sql = (
        f"SELECT u.url, cp.url_id, cp.state_id FROM url u CROSS JOIN commit_page cp ON cp.commit_id = ? "
        f"AND cp.url_id = u.id JOIN page_state ps ON ps.id = cp.state_id WHERE u.url > ? AND {SCOPES[scope]}"
        f"{extra} ORDER BY u.url LIMIT ?"
    )
    return archive.execute(sql, [commit, after, limit])


def _batch(keys: list[Any], items: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    return {"items": items, "next_after": keys[-1][0] if len(keys) == limit else None}


def report_pages(
    archive: ArchiveReader, commit: int, scope: str = "targets", after: str = "", limit: int = 500
) -> dict[str, Any]:
    """Page rows of ``scope``: metadata, link counts with the bad links, redirect sources, referrers, cells
    and the SEO and content columns of the page list (page_lists.SEO_COLUMNS, CONTENT_COLUMNS); how the
    page was read: ``render_rendered`` and ``render_reason`` (``--render auto``'s decision, else null),
    ``unrendered`` (why no browser rendered it) and ``has_html``."""
    keys = _keys(archive, commit, scope, after, limit)
    if not keys:
        return _batch(keys, [], limit)
    meta = ", ".join(f"ps.{f}" for f in _META)
    sql = (
        f"WITH k(url, url_id, state_id) AS (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(:keys)), "
        # the batch's crawl errors in one pass (archives without a (commit, url) index scan them once, not per page)
        f"e(url_id, kind) AS (SELECT url_id, MIN(kind) FROM crawl_error WHERE commit_id = :c "
        f"AND url_id IN (SELECT url_id FROM k) GROUP BY url_id) "
        f"SELECT k.url, ps.status, ps.status_text, ps.content_type, ps.content_length, ps.headers, ps.is_external, "
        f"ps.is_skipped, ps.skip_reason, {field_sql(archive, 'alternate')} AS alternate, "
        f"COALESCE(ps.error_kind, e.kind) AS error_kind, {meta}, "
        f"{_links(digest.anchor_columns(archive.execute))} AS links, "
        f"{_REDIRECT_FROM}, {_REFERRERS}, {_CELLS}, {_rendering(archive)}, {seo_select(archive, commit)} "
        f"FROM k JOIN page_state ps ON ps.id = k.state_id LEFT JOIN e ON e.url_id = k.url_id "
        f"JOIN commit_page cp ON cp.commit_id = :c AND cp.url_id = k.url_id "
        f"{seo_join(archive, commit, 'k.url_id')} ORDER BY k.url"
    )
    rows = archive.execute(sql, {"c": commit, "keys": json.dumps([list(k) for k in keys])})
    items = []
    for row in rows:
        item = seo_shape(dict(row))
        for key in ("links", "redirect_from_urls", "referrer_urls", "cells", "headers"):
            item[key] = json.loads(item[key]) if item[key] else None
        items.append(item)
    return _batch(keys, items, limit)


def report_referrers(
    archive: ArchiveReader, commit: int, after: str = "", limit: int = 500
) -> dict[str, Any]:
    """One row per (page, anchor of the commit pointing at it directly or through a redirect)."""
    keys = _keys(archive, commit, "rows", after, limit)
    sql = (
        "WITH k(url, url_id, state_id) AS (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(:keys)), "
        f"t(page_id, via_id) AS (SELECT url_id, url_id FROM k UNION ALL SELECT k.url_id, r.url_id FROM k CROSS JOIN {_SOURCES}) "
        "SELECT k.url AS page, CASE WHEN t.via_id != t.page_id THEN vu.url END AS through, su.url AS source, "
        "a.fragment, a.text, ps.status, ps.status_text, ps.content_type "
        "FROM t JOIN k ON k.url_id = t.page_id JOIN page_state ps ON ps.id = k.state_id "
        "CROSS JOIN anchor a ON a.target_url_id = t.via_id "
        "CROSS JOIN commit_page sc ON sc.commit_id = :c AND sc.state_id = a.state_id "
        "JOIN url su ON su.id = sc.url_id JOIN url vu ON vu.id = t.via_id ORDER BY k.url, su.url, a.ordinal"
    )
    rows = archive.execute(sql, {"c": commit, "keys": json.dumps([list(k) for k in keys])}) if keys else []
    return _batch(keys, [dict(r) for r in rows], limit)


def report_link_texts(
    archive: ArchiveReader, commit: int, after: str = "", limit: int = 500
) -> dict[str, Any]:
    """Anchors whose text and the title of the internal page they lead to contain neither the other."""
    keys = _keys(archive, commit, "html", after, limit)
    sql = (
        "WITH k(url, url_id, state_id) AS (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(:keys)) "
        "SELECT k.url AS source, a.text, COALESCE(du.url, tu.url) AS target, "
        f"{_R.format('title')} AS title FROM k CROSS JOIN {_RESOLVED.removeprefix('FROM ')} "
        f"WHERE a.state_id = k.state_id AND trim(a.text) != '' AND {_R.format('title')} IS NOT NULL "
        f"AND {_R.format('content_type')} = 'text/html' AND NOT {_R.format('is_external')} "
        f"AND instr(lower({_R.format('title')}), lower(trim(a.text))) = 0 "
        f"AND instr(lower(a.text), lower(trim({_R.format('title')}))) = 0 ORDER BY k.url, a.ordinal"
    )
    rows = archive.execute(sql, {"c": commit, "keys": json.dumps([list(k) for k in keys])}) if keys else []
    return _batch(keys, [dict(r) for r in rows], limit)


def report_resources(
    archive: ArchiveReader, commit: int, after: str = "", limit: int = 500
) -> dict[str, Any]:
    """Resources with status, type, size and referring pages (count and the first NOTE_ITEMS URLs)."""
    sql = (
        f"SELECT k.url, rs.status, rs.status_text, rs.content_type, rs.content_length, {referrers.count_sql(archive, 'k')} "
        "AS referrers, (SELECT json_group_array(url) FROM (SELECT pu.url FROM commit_resource_referrer r "
        "JOIN url pu ON pu.id = r.page_url_id WHERE r.commit_id = :c AND r.resource_url_id = k.url_id "
        f"ORDER BY pu.url LIMIT {NOTE_ITEMS})) AS referrer_urls "
        "FROM (SELECT u.url, cr.* FROM commit_resource cr JOIN url u ON u.id = cr.url_id "
        "WHERE cr.commit_id = :c AND u.url > :after ORDER BY u.url LIMIT :limit) k "
        "JOIN resource_state rs ON rs.id = k.state_id ORDER BY k.url"
    )
    rows = archive.execute(sql, {"c": commit, "after": after, "limit": limit})
    items = [{**dict(r), "referrer_urls": json.loads(r["referrer_urls"] or "[]")} for r in rows]
    return {"items": items, "next_after": items[-1]["url"] if len(items) == limit else None}


def report_resource_referrers(
    archive: ArchiveReader, commit: int, after: str = "", limit: int = 500
) -> dict[str, Any]:
    """One row per (page, resource it loaded)."""
    exists = " AND EXISTS (SELECT 1 FROM commit_resource_referrer r WHERE r.commit_id = cp.commit_id AND r.page_url_id = cp.url_id)"
    keys = _keys(archive, commit, "rows", after, limit, exists)
    sql = (
        "WITH k(url, url_id) AS (SELECT value ->> 0, value ->> 1 FROM json_each(:keys)) "
        "SELECT k.url AS page, ru.url AS resource, rs.status, rs.status_text, rs.content_type, rs.content_length "
        "FROM k CROSS JOIN commit_resource_referrer r ON r.commit_id = :c AND r.page_url_id = k.url_id "
        "JOIN url ru ON ru.id = r.resource_url_id "
        "LEFT JOIN commit_resource cr ON cr.commit_id = :c AND cr.url_id = r.resource_url_id "
        "LEFT JOIN resource_state rs ON rs.id = cr.state_id ORDER BY k.url, ru.url"
    )
    rows = (
        archive.execute(sql, {"c": commit, "keys": json.dumps([list(k)[:2] for k in keys])}) if keys else []
    )
    return _batch(keys, [dict(r) for r in rows], limit)


def analysis_columns(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    """The (analyzer, column) pairs that have cells in the commit."""
    rows = archive.execute(
        f'SELECT DISTINCT analyzer, "column" FROM analysis_cell c WHERE commit_id = ? AND {COLUMNS_ONLY} '
        'ORDER BY analyzer, "column"',
        [commit],
    )
    return {"items": [{"analyzer": r[0], "column": r[1]} for r in rows]}
