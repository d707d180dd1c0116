"""Read model of audit findings: violations, metadata mismatches, security headers, inventory runs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import aggregates, digest
from .lists import order_by, paged

if TYPE_CHECKING:
    from .reader import ArchiveReader

# Internal HTML pages (strict: the content type is text/html) of the commit bound as the first parameter,
# driven by the URL index, so URL-sorted lists stream and LIMIT stops early.
_HTML_PAGES_BY_URL = (
    "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps "
    f"ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 0 AND {digest.STRICT}"
)


def _case(values: Mapping[str, Any], default: Any) -> str:
    """``priority_of`` in SQL: a CASE over the lower-cased severity, built from the one mapping in the core."""
    whens = " ".join(f"WHEN {_sql_literal(k)} THEN {_sql_literal(v)}" for k, v in values.items())
    return f"(CASE lower(v.severity) {whens} ELSE {_sql_literal(default)} END)"


def _sql_literal(value: Any) -> str:
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


VIOLATION_SORTS = ("url", "analyzer", "severity", "rule", "priority")


def violation_list(
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
    *,
    severity_priority: Mapping[str, str],
    priorities: Sequence[str],
    unknown: str,
) -> dict[str, Any]:
    """The commit's violations, filtered, or counted per rule with ``group_by_rule``; ``priority`` is the
    severity's priority by ``severity_priority`` (``unknown`` for another), ranked in ``priorities`` order."""
    priority_sql = _case(severity_priority, unknown)
    # most severe first when sorted ascending, like the issues query
    rank = _case({k: priorities.index(v) for k, v in severity_priority.items()}, priorities.index(unknown))
    sorts = {
        "url": "u.url",
        "analyzer": "v.analyzer",
        "severity": "v.severity",
        "rule": "v.rule",
        "priority": rank,
    }
    where, params = "v.commit_id = ?", list[Any]([commit])
    for column, value in (
        ("v.analyzer", analyzer),
        ("v.severity", severity),
        ("v.rule", rule),
        (priority_sql, priority),
    ):
        if value:
            where, params = where + f" AND {column} = ?", [*params, value]
    if url:
        where, params = where + " AND instr(u.url, ?) > 0", [*params, url]
    source = f"FROM violation v JOIN url u ON u.id = v.url_id WHERE {where}"
    if group_by_rule:
        sql = (
            f"SELECT v.analyzer, v.rule, v.severity, {priority_sql} AS priority, COUNT(*) AS count, "
            f"COUNT(DISTINCT v.url_id) AS pages {source} GROUP BY v.analyzer, v.rule, v.severity"
        )
        return paged(
            archive, sql, params, " ORDER BY count DESC, v.analyzer, v.rule, v.severity", limit, offset
        )
    total = archive.execute(f"SELECT COUNT(*) {source}", params)[0][0]
    if sort == "url":  # driven by the URL index: a page of rows stops after `limit`, no sort of every row
        source = f"FROM url u CROSS JOIN violation v ON v.url_id = u.id WHERE {where}"
    sql = (
        f"SELECT u.url, v.analyzer, v.severity, {priority_sql} AS priority, v.rule, v.message, v.location, "
        f"v.snippet, v.help_url {source}"
    )
    clause = order_by(sorts, sort, order, tiebreak="u.url, v.id")
    return paged(archive, sql, params, clause, limit, offset, total=total)


def mismatch_list(
    archive: ArchiveReader,
    commit: int,
    kind: str | None = None,
    url: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Pages whose declared metadata disagrees with their own (digest.MISMATCHES), in the list shape."""
    sql, params = f"SELECT * FROM ({digest.MISMATCHES}) m WHERE 1", list[Any]([commit])
    total = aggregates.value(archive, commit, "list_totals")["mismatches"] if not kind and not url else None
    if kind:
        sql, params = sql + " AND m.kind = ?", [*params, kind]
    if url:
        sql, params = sql + " AND instr(m.url, ?) > 0", [*params, url]
    clause = order_by({"url": "m.url", "kind": "m.kind"}, sort, order, tiebreak="m.url, m.kind")
    return paged(archive, sql, params, clause, limit, offset, total=total)


_SECURITY_HEADERS = digest.SECURITY_HEADERS
_HAS = digest.HAS_HEADER


def header_list(
    archive: ArchiveReader,
    commit: int,
    missing: str | None = None,
    url: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Internal HTML pages with a flag per security header sent, the totals, and the headers' names."""
    source, params = _HTML_PAGES_BY_URL, list[Any]([commit])
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


def inventory_run_list(
    archive: ArchiveReader, commit: int, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    """The commit's inventory runs (id, sha256, counts decoded, at), in run order."""
    sql = "SELECT id, sha256, counts, at FROM inventory_run WHERE commit_id = ?"
    result = paged(archive, sql, [commit], " ORDER BY id", limit, offset)
    for row in result["items"]:
        row["counts"] = json.loads(row["counts"] or "{}")
    return result
