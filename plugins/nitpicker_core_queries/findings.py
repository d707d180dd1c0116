"""Audit findings: violations, duplicates, metadata mismatches, security headers, errors, inventory runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, SEVERITY_PRIORITY, Query, priority_of
from nitpicker_core.archive import aggregates, digest

from .common import PAGING, order_by, page_of, paged, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# Internal HTML pages (strict: the content type is text/html) of the commit bound as the first parameter,
# driven by the URL index, so URL-sorted lists stream and LIMIT stops early.
_HTML_PAGES_BY_URL = (
    "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps "
    f"ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 0 AND {digest.STRICT}"
)


def _case(values: dict[str, Any], default: Any) -> str:
    """``priority_of`` in SQL: a CASE over the lower-cased severity, built from the one mapping in the core."""
    whens = " ".join(f"WHEN {_sql_literal(k)} THEN {_sql_literal(v)}" for k, v in values.items())
    return f"(CASE lower(v.severity) {whens} ELSE {_sql_literal(default)} END)"


def _sql_literal(value: Any) -> str:
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


_UNKNOWN = priority_of(None)  # what a severity no analyzer declared counts as
_PRIORITY = _case(SEVERITY_PRIORITY, _UNKNOWN)
# most severe first when sorted ascending, like the issues query
_PRIORITY_RANK = _case(
    {k: PRIORITIES.index(v) for k, v in SEVERITY_PRIORITY.items()}, PRIORITIES.index(_UNKNOWN)
)
_VIOLATION_COLUMNS = {
    "url": "u.url",
    "analyzer": "v.analyzer",
    "severity": "v.severity",
    "rule": "v.rule",
    "priority": _PRIORITY_RANK,
}


def _violations(
    archive: ArchiveReader,
    commit: int,
    analyzer: str | None = None,
    severity: str | None = None,
    priority: str | None = None,
    rule: str | None = None,
    url: str | None = None,
    group_by_rule: bool = False,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    params: list[Any]
    where, params = "v.commit_id = ?", [commit]
    for column, value in (
        ("v.analyzer", analyzer),
        ("v.severity", severity),
        ("v.rule", rule),
        (_PRIORITY, priority),
    ):
        if value:
            where, params = where + f" AND {column} = ?", [*params, value]
    if url:
        where, params = where + " AND instr(u.url, ?) > 0", [*params, url]
    source = f"FROM violation v JOIN url u ON u.id = v.url_id WHERE {where}"
    if group_by_rule:
        sql = (
            f"SELECT v.analyzer, v.rule, v.severity, {_PRIORITY} AS priority, COUNT(*) AS count, "
            f"COUNT(DISTINCT v.url_id) AS pages {source} GROUP BY v.analyzer, v.rule, v.severity"
        )
        return paged(
            archive, sql, params, " ORDER BY count DESC, v.analyzer, v.rule, v.severity", limit, offset
        )
    total = archive.execute(f"SELECT COUNT(*) {source}", params)[0][0]
    if sort == "url":  # driven by the URL index: a page of rows stops after `limit`, no sort of every row
        source = f"FROM url u CROSS JOIN violation v ON v.url_id = u.id WHERE {where}"
    sql = (
        f"SELECT u.url, v.analyzer, v.severity, {_PRIORITY} AS priority, v.rule, v.message, v.location, "
        f"v.snippet, v.help_url {source}"
    )
    clause = order_by(_VIOLATION_COLUMNS, sort, order, tiebreak="u.url, v.id")
    return paged(archive, sql, params, clause, limit, offset, total=total)


def _duplicates(
    archive: ArchiveReader,
    commit: int,
    field: str = "title",
    urls: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    every = aggregates.value(archive, commit, "duplicates")[field]
    groups = every[offset : offset + limit]
    if urls is not None:  # a group can hold thousands of pages: a view shows the first few
        groups = [{**group, "urls": group["urls"][:urls]} for group in groups]
    return {"field": field, **page_of(groups, len(every), limit, offset)}


_MISMATCH_KINDS = digest.MISMATCH_KINDS


def _mismatches(
    archive: ArchiveReader,
    commit: int,
    kind: str | None = None,
    url: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    params: list[Any]
    sql, params = f"SELECT * FROM ({digest.MISMATCHES}) m WHERE 1", [commit]
    total = aggregates.value(archive, commit, "list_totals")["mismatches"] if not kind and not url else None
    if kind:
        sql, params = sql + " AND m.kind = ?", [*params, kind]
    if url:
        sql, params = sql + " AND instr(m.url, ?) > 0", [*params, url]
    clause = order_by({"url": "m.url", "kind": "m.kind"}, sort, order, tiebreak="m.url, m.kind")
    return paged(archive, sql, params, clause, limit, offset, total=total)


_SECURITY_HEADERS = digest.SECURITY_HEADERS
_HAS = digest.HAS_HEADER


def _headers(
    archive: ArchiveReader,
    commit: int,
    missing: str | None = None,
    url: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    params: list[Any]
    source, params = _HTML_PAGES_BY_URL, [commit]
    total = None
    if url:
        source, params = source + " AND instr(u.url, ?) > 0", [*params, url]
        sums = ", ".join(f"coalesce(SUM({has}), 0) AS {key}" for key, has in _HAS.items())
        totals = dict(archive.execute(f"SELECT COUNT(*) AS pages, {sums} {source}", params)[0])
    else:
        totals = aggregates.value(archive, commit, "list_totals")["headers"]
        total = totals["pages"]
    if missing:
        source += f" AND NOT {_HAS[missing]}"
        total = totals["pages"] - totals[missing]
    flags = ", ".join(f"{has} AS {key}" for key, has in _HAS.items())
    sql = f"SELECT u.url, ps.status, {flags} {source}"
    result = paged(archive, sql, params, " ORDER BY u.url", limit, offset, total=total)
    for row in result["items"]:
        for key in _SECURITY_HEADERS:
            row[key] = bool(row[key])
    return {"headers": _SECURITY_HEADERS, "totals": totals, **result}


def _error_kinds(archive: ArchiveReader, commit: int, examples: int = 5) -> dict[str, Any]:
    # The digest keeps the first 100 example URLs per kind (the parameter's maximum), in URL order.
    result = aggregates.value(archive, commit, "error_kinds")
    for item in result["items"]:
        item["examples"] = item["examples"][:examples]
    return result


def _inventory_runs(archive: ArchiveReader, commit: int, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    sql = "SELECT id, sha256, counts, at FROM inventory_run WHERE commit_id = ?"
    result = paged(archive, sql, [commit], " ORDER BY id", limit, offset)
    for row in result["items"]:
        row["counts"] = json.loads(row["counts"] or "{}")
    return result


_URL_FILTER = {"url": {"type": "string", "description": "only URLs containing this text"}}

QUERIES = [
    Query(
        "violations",
        "Analyzer findings of the commit, one row per violation (with the offending markup snippet and a help "
        "URL where the analyzer gives them), each with the analyzer's own severity and its priority on the one "
        "scale of every analyzer and check (critical, high, medium, low, info; axe serious and markup error are "
        "high); with group_by_rule, counts per analyzer, rule and severity (violations and distinct pages), "
        "most frequent first.",
        _violations,
        {
            "analyzer": {"type": "string", "description": "only this analyzer"},
            "severity": {"type": "string", "description": "only this analyzer severity (error, serious, …)"},
            "priority": {
                "type": "string",
                "enum": list(PRIORITIES),
                "description": "only violations of this priority, whatever the analyzer",
            },
            "rule": {"type": "string", "description": "only this rule"},
            **_URL_FILTER,
            "group_by_rule": {
                "type": "boolean",
                "default": False,
                "description": "counts per rule instead of rows",
            },
            **sorting(_VIOLATION_COLUMNS, "url"),
            **PAGING,
        },
        order=50,
    ),
    Query(
        "duplicates",
        "Groups of internal HTML pages (status 200) sharing the same non-empty title or description, largest "
        "group first.",
        _duplicates,
        {
            "field": {
                "type": "string",
                "enum": ["title", "description"],
                "default": "title",
                "description": "the metadata field to compare",
            },
            "urls": {
                "type": "integer",
                "minimum": 0,
                "description": "list at most this many URLs per group (count still counts them all)",
            },
            **PAGING,
        },
        order=51,
    ),
    Query(
        "mismatches",
        "Internal HTML pages whose canonical URL differs from the page URL, og:title from the title or "
        "og:description from the description (only where the declared value is present); one row per kind.",
        _mismatches,
        {
            "kind": {"type": "string", "enum": list(_MISMATCH_KINDS), "description": "only this kind"},
            **_URL_FILTER,
            **sorting({"url": "", "kind": ""}, "url"),
            **PAGING,
        },
        order=52,
    ),
    Query(
        "headers",
        "Security headers of internal HTML pages: whether each sends Content-Security-Policy, "
        "X-Frame-Options (or CSP frame-ancestors), X-Content-Type-Options, Strict-Transport-Security, "
        "Referrer-Policy and Permissions-Policy, with totals per header.",
        _headers,
        {
            "missing": {
                "type": "string",
                "enum": list(_SECURITY_HEADERS),
                "description": "only pages without this header",
            },
            **_URL_FILTER,
            **PAGING,
        },
        order=53,
    ),
    Query(
        "error-kinds",
        "Failed URLs of the commit counted by error kind (DNS, refused, timeout, redirect loop, …), internal "
        "and external, with the number of recorded error events and example URLs.",
        _error_kinds,
        {
            "examples": {
                "type": "integer",
                "default": 5,
                "minimum": 0,
                "maximum": digest.ERROR_EXAMPLES,
                "description": "example URLs per kind",
            }
        },
        order=54,
    ),
    Query(
        "inventory-runs",
        "Inventory files ingested into the commit, with their counts.",
        _inventory_runs,
        dict(PAGING),
        order=55,
    ),
]
