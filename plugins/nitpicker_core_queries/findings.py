"""Audit findings: violations, duplicates, metadata mismatches, security headers, errors, inventory runs."""

from __future__ import annotations

import json
from typing import Any

from nitpicker_core import Query

from .common import PAGES_OF_COMMIT, PAGING, order_by, paged, sorting

# Internal HTML pages (strict: the content type is text/html) of the commit bound as the first parameter.
_HTML_PAGES = (f"FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND ps.is_external = 0 "
               "AND ps.content_type = 'text/html'")


_VIOLATION_COLUMNS = {"url": "u.url", "analyzer": "v.analyzer", "severity": "v.severity", "rule": "v.rule"}


def _violations(archive: Any, commit: int, analyzer: str | None = None, severity: str | None = None,
                rule: str | None = None, url: str | None = None, group_by_rule: bool = False,
                sort: str = "url", order: str = "asc", limit: int = 100, offset: int = 0) -> dict[str, Any]:
    where, params = "v.commit_id = ?", [commit]
    for column, value in (("analyzer", analyzer), ("severity", severity), ("rule", rule)):
        if value:
            where, params = where + f" AND v.{column} = ?", [*params, value]
    if url:
        where, params = where + " AND instr(u.url, ?) > 0", [*params, url]
    source = f"FROM violation v JOIN url u ON u.id = v.url_id WHERE {where}"
    if group_by_rule:
        sql = (f"SELECT v.analyzer, v.rule, v.severity, COUNT(*) AS count, COUNT(DISTINCT v.url_id) AS pages "
               f"{source} GROUP BY v.analyzer, v.rule, v.severity")
        return paged(archive, sql, params, " ORDER BY count DESC, v.analyzer, v.rule, v.severity",
                               limit, offset)
    sql = f"SELECT u.url, v.analyzer, v.severity, v.rule, v.message, v.location {source}"
    clause = order_by(_VIOLATION_COLUMNS, sort, order, tiebreak="u.url, v.id")
    return paged(archive, sql, params, clause, limit, offset)


def _duplicates(archive: Any, commit: int, field: str = "title", limit: int = 100,
                offset: int = 0) -> dict[str, Any]:
    column = {"title": "ps.title", "description": "ps.description"}[field]
    sql = (
        f"SELECT {column} AS value, COUNT(*) AS count, json_group_array(u.url) AS urls {_HTML_PAGES} "
        f"AND ps.is_target = 1 AND ps.status = 200 AND trim(coalesce({column}, '')) != '' "
        f"GROUP BY {column} HAVING COUNT(*) > 1"
    )
    result = paged(archive, sql, [commit], " ORDER BY count DESC, value", limit, offset)
    for row in result["items"]:
        row["urls"] = sorted(json.loads(row["urls"]))
    return {"field": field, **result}


# One row per mismatch kind: the page's own value next to the one its metadata declares.
_MISMATCHES = " UNION ALL ".join(
    f"SELECT u.url, '{kind}' AS kind, {own} AS page_value, {declared} AS declared_value {_HTML_PAGES} "
    f"AND trim(coalesce({declared}, '')) != '' AND trim({declared}) != trim(coalesce({own}, ''))"
    for kind, own, declared in (
        ("canonical", "u.url", "ps.canonical"),
        ("og_title", "ps.title", "ps.og_title"),
        ("og_description", "ps.description", "ps.og_description"),
    )
)
_MISMATCH_KINDS = ("canonical", "og_title", "og_description")


def _mismatches(archive: Any, commit: int, kind: str | None = None, url: str | None = None,
                sort: str = "url", order: str = "asc", limit: int = 100, offset: int = 0) -> dict[str, Any]:
    sql, params = f"SELECT * FROM ({_MISMATCHES}) m WHERE 1", [commit] * len(_MISMATCH_KINDS)
    if kind:
        sql, params = sql + " AND m.kind = ?", [*params, kind]
    if url:
        sql, params = sql + " AND instr(m.url, ?) > 0", [*params, url]
    clause = order_by({"url": "m.url", "kind": "m.kind"}, sort, order, tiebreak="m.url, m.kind")
    return paged(archive, sql, params, clause, limit, offset)


_SECURITY_HEADERS = {
    "csp": "content-security-policy",
    "x_frame_options": "x-frame-options",
    "x_content_type_options": "x-content-type-options",
    "hsts": "strict-transport-security",
}
_HAS = {key: f"(json_extract(ps.headers, '$.\"{header}\"') IS NOT NULL)"
        for key, header in _SECURITY_HEADERS.items()}


def _headers(archive: Any, commit: int, missing: str | None = None, url: str | None = None,
             limit: int = 100, offset: int = 0) -> dict[str, Any]:
    source, params = _HTML_PAGES, [commit]
    if url:
        source, params = source + " AND instr(u.url, ?) > 0", [*params, url]
    sums = ", ".join(f"coalesce(SUM({has}), 0) AS {key}" for key, has in _HAS.items())
    totals = dict(archive.execute(f"SELECT COUNT(*) AS pages, {sums} {source}", params)[0])
    if missing:
        source += f" AND NOT {_HAS[missing]}"
    flags = ", ".join(f"{has} AS {key}" for key, has in _HAS.items())
    sql = f"SELECT u.url, ps.status, {flags} {source}"
    result = paged(archive, sql, params, " ORDER BY u.url", limit, offset)
    for row in result["items"]:
        for key in _SECURITY_HEADERS:
            row[key] = bool(row[key])
    return {"headers": _SECURITY_HEADERS, "totals": totals, **result}


# Failed URLs by kind: crawl_error events of the commit plus pages whose current state is a failure.
_ERRORS = (
    "WITH e(url_id, kind, message) AS ("
    " SELECT url_id, kind, message FROM crawl_error WHERE commit_id = ?1"
    " UNION SELECT cp.url_id, json_extract(ps.extra, '$.error_kind'), NULL FROM commit_page cp"
    " JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ?1 AND instr(ps.extra, 'error_kind') > 0"
    " AND json_extract(ps.extra, '$.error_kind') IS NOT NULL), "
    "f(url_id, kind, message) AS (SELECT url_id, kind, MAX(message) FROM e GROUP BY url_id, kind) "
)


def _error_kinds(archive: Any, commit: int, examples: int = 5) -> dict[str, Any]:
    rows = archive.execute(
        _ERRORS + "SELECT f.kind, COUNT(*) AS count, "
        "SUM(coalesce(ps.is_external, 0) = 0) AS internal, SUM(coalesce(ps.is_external, 0) = 1) AS external, "
        "(SELECT COUNT(*) FROM crawl_error c WHERE c.commit_id = ?1 AND c.kind = f.kind) AS events "
        "FROM f LEFT JOIN commit_page cp ON cp.commit_id = ?1 AND cp.url_id = f.url_id "
        "LEFT JOIN page_state ps ON ps.id = cp.state_id GROUP BY f.kind ORDER BY count DESC, f.kind",
        [commit])
    samples = archive.execute(
        _ERRORS + "SELECT kind, url, message FROM (SELECT f.kind, u.url, f.message, "
        "ROW_NUMBER() OVER (PARTITION BY f.kind ORDER BY u.url) AS n FROM f JOIN url u ON u.id = f.url_id) "
        "WHERE n <= ?2 ORDER BY kind, url", [commit, examples])
    items = [dict(r) for r in rows]
    for item in items:
        item["examples"] = [{"url": s["url"], "message": s["message"]}
                            for s in samples if s["kind"] == item["kind"]]
    return {"total": sum(i["count"] for i in items), "items": items}


def _inventory_runs(archive: Any, commit: int, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    sql = "SELECT id, sha256, counts, at FROM inventory_run WHERE commit_id = ?"
    result = paged(archive, sql, [commit], " ORDER BY id", limit, offset)
    for row in result["items"]:
        row["counts"] = json.loads(row["counts"] or "{}")
    return result


_URL_FILTER = {"url": {"type": "string", "description": "only URLs containing this text"}}

QUERIES = [
    Query(
        "violations",
        "Analyzer findings of the commit, one row per violation; with group_by_rule, counts per analyzer, "
        "rule and severity (violations and distinct pages), most frequent first.",
        _violations,
        {"analyzer": {"type": "string", "description": "only this analyzer"},
         "severity": {"type": "string", "description": "only this severity (error, warning, …)"},
         "rule": {"type": "string", "description": "only this rule"},
         **_URL_FILTER,
         "group_by_rule": {"type": "boolean", "default": False,
                           "description": "counts per rule instead of rows"},
         **sorting(_VIOLATION_COLUMNS, "url"), **PAGING},
        order=50),
    Query(
        "duplicates",
        "Groups of internal HTML pages (status 200) sharing the same non-empty title or description, largest "
        "group first.",
        _duplicates,
        {"field": {"type": "string", "enum": ["title", "description"], "default": "title",
                   "description": "the metadata field to compare"}, **PAGING},
        order=51),
    Query(
        "mismatches",
        "Internal HTML pages whose canonical URL differs from the page URL, og:title from the title or "
        "og:description from the description (only where the declared value is present); one row per kind.",
        _mismatches,
        {"kind": {"type": "string", "enum": list(_MISMATCH_KINDS), "description": "only this kind"},
         **_URL_FILTER, **sorting({"url": "", "kind": ""}, "url"), **PAGING},
        order=52),
    Query(
        "headers",
        "Security headers of internal HTML pages: whether each sends Content-Security-Policy, "
        "X-Frame-Options, X-Content-Type-Options and Strict-Transport-Security, with totals per header.",
        _headers,
        {"missing": {"type": "string", "enum": list(_SECURITY_HEADERS),
                     "description": "only pages without this header"},
         **_URL_FILTER, **PAGING},
        order=53),
    Query(
        "error-kinds",
        "Failed URLs of the commit counted by error kind (DNS, refused, timeout, redirect loop, …), internal "
        "and external, with the number of recorded error events and example URLs.",
        _error_kinds,
        {"examples": {"type": "integer", "default": 5, "minimum": 0, "maximum": 100,
                      "description": "example URLs per kind"}},
        order=54),
    Query("inventory-runs", "Inventory files ingested into the commit, with their counts.", _inventory_runs,
          dict(PAGING), order=55),
]
