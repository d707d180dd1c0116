"""Shared pieces of the built-in queries: commit-scoped page SQL, paging and sorting parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nitpicker_core import UsageError
from nitpicker_core.archive import digest

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# Every page row of one commit: bind the commit id as the first parameter.
PAGES_OF_COMMIT = digest.PAGES_OF_COMMIT

PAGING: dict[str, dict[str, Any]] = {
    "limit": {
        "type": "integer",
        "default": 100,
        "minimum": 1,
        "maximum": 10000,
        "description": "rows per page",
    },
    "offset": {"type": "integer", "default": 0, "minimum": 0, "description": "rows to skip"},
}


def sorting(columns: dict[str, str], default: str) -> dict[str, dict[str, Any]]:
    """``sort`` (one of ``columns``' keys) and ``order`` parameters for a list query."""
    return {
        "sort": {
            "type": "string",
            "enum": sorted(columns),
            "default": default,
            "description": "column to sort by",
        },
        "order": {
            "type": "string",
            "enum": ["asc", "desc"],
            "default": "asc",
            "description": "sort direction",
        },
    }


def order_by(columns: dict[str, str], sort: str, order: str, tiebreak: str = "u.url") -> str:
    """An ORDER BY clause from validated parameters; ``columns`` maps names to SQL expressions."""
    if sort not in columns:
        raise UsageError(f"cannot sort by {sort!r}")
    direction = "DESC" if order == "desc" else "ASC"
    return f" ORDER BY {columns[sort]} {direction}, {tiebreak} ASC"


def page_of(items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    """The shape of every paginated list: the items plus enough to fetch the next page."""
    return {
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": items,
        "next_offset": offset + limit if offset + limit < total else None,
    }


def paged(
    archive: ArchiveReader,
    sql: str,
    params: list[Any],
    order: str,
    limit: int,
    offset: int,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """Run ``sql`` for one page of rows (``order`` appended) plus its total (unless known), in the list shape."""
    if total is None:
        total = archive.execute(f"SELECT COUNT(*) FROM ({sql})", params)[0][0]
    rows = [dict(r) for r in archive.execute(f"{sql}{order} LIMIT ? OFFSET ?", [*params, limit, offset])]
    return page_of([shape(r) for r in rows] if shape else rows, total, limit, offset)


def external_flag(row: dict[str, Any]) -> dict[str, Any]:
    """``is_external`` as a boolean (SQLite hands back 0/1)."""
    if "is_external" in row:
        row["is_external"] = bool(row["is_external"])
    return row


STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx", "failed")


def status_class_param(failed: str) -> dict[str, dict[str, Any]]:
    """The ``status_class`` parameter; ``failed`` says what the class ``failed`` means for the query's rows."""
    return {
        "status_class": {
            "type": "string",
            "enum": list(STATUS_CLASSES),
            "description": f"a class of status codes (4xx: 400 to 499), or failed ({failed})",
        }
    }


def status_class_sql(column: str, status_class: str, failed: str) -> str:
    """The SQL condition of a validated status class over the status ``column``; ``failed`` is the SQL of failed."""
    if status_class == "failed":
        return f"({failed})"
    low = int(status_class[0]) * 100
    return f"({column} BETWEEN {low} AND {low + 99})"
