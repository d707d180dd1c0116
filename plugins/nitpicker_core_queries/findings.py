"""Audit findings: violations, duplicates, metadata mismatches, security headers, errors, inventory runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, SEVERITY_PRIORITY, Query, priority_of, read
from nitpicker_core.archive import aggregates, digest

from .common import PAGING, page_of, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_UNKNOWN = priority_of(None)  # what a severity no analyzer declared counts as
_VIOLATION_COLUMNS = dict.fromkeys(read.VIOLATION_SORTS, "")  # what `sort` takes


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
    return read.violation_list(
        archive,
        commit,
        analyzer,
        severity,
        priority,
        rule,
        url,
        group_by_rule,
        sort,
        order,
        limit,
        offset,
        severity_priority=SEVERITY_PRIORITY,
        priorities=PRIORITIES,
        unknown=_UNKNOWN,
    )


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
    return read.mismatch_list(archive, commit, kind, url, sort, order, limit, offset)


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
    return read.header_list(archive, commit, missing, url, limit, offset)


def _error_kinds(archive: ArchiveReader, commit: int, examples: int = 5) -> dict[str, Any]:
    # The digest keeps the first 100 example URLs per kind (the parameter's maximum), in URL order.
    result = aggregates.value(archive, commit, "error_kinds")
    for item in result["items"]:
        item["examples"] = item["examples"][:examples]
    return result


def _inventory_runs(archive: ArchiveReader, commit: int, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    return read.inventory_run_list(archive, commit, limit, offset)


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
