"""Read model of analyzer cells: one row per (page, analyzer) with its cells and notes, and column counts."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import UsageError

from .lists import page_of

if TYPE_CHECKING:
    from .reader import ArchiveReader

ANALYSIS_SORTS = ("url", "analyzer", "value")
#: A cell whose key starts with this is an analyzer's data, not a table column (the items the structured-data
#: analyzer stores for the viewer's tree): stored and cached with its results, read by naming it (``column``
#: of analysis_list), left out of every list of columns, the tables, the sheets, history and diffs.
DATA_PREFIX = "_"
#: SQL: the cell of alias ``c`` is a column (not a data cell)
COLUMNS_ONLY = "substr(c.\"column\", 1, 1) != '_'"
# A cell's value as SQLite orders it: numbers as numbers, strings as text; a value that is not JSON as stored.
_VALUE = "(CASE WHEN json_valid(c.value) THEN json_extract(c.value, '$') ELSE c.value END)"


def decode_cell(value: str | None) -> Any:
    """A stored cell value (JSON text) as the analyzer gave it."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def group_cells(rows: Iterable[Any]) -> dict[tuple[int, str], dict[str, Any]]:
    """Rows of (url_id, analyzer, column, value, note) as one ``{"cells", "notes"}`` per (url_id, analyzer)."""
    out: dict[tuple[int, str], dict[str, Any]] = {}
    for url_id, analyzer, column, value, note in rows:
        entry = out.setdefault((url_id, analyzer), {"cells": {}, "notes": {}})
        entry["cells"][column] = decode_cell(value)
        if note:
            entry["notes"][column] = note
    return out


def _where(
    commit: int, analyzer: str | None, column: str | None, url: str | None, page: str | None
) -> tuple[str, list[Any]]:
    where, params = "c.commit_id = ?", list[Any]([commit])
    if analyzer:
        where, params = where + " AND c.analyzer = ?", [*params, analyzer]
    if column:
        where, params = where + ' AND c."column" = ?', [*params, column]
    else:
        where += f" AND {COLUMNS_ONLY}"
    if page:
        where, params = where + " AND u.url = ?", [*params, page]
    elif url:
        glob = any(ch in url for ch in "*?[")
        where, params = where + (" AND u.url GLOB ?" if glob else " AND instr(u.url, ?) > 0"), [*params, url]
    return where, params


def analysis_list(
    archive: ArchiveReader,
    commit: int,
    analyzer: str | None = None,
    column: str | None = None,
    url: str | None = None,
    page: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Cells of the commit per (page, analyzer), filtered and sorted, in the list shape (lists.page_of)."""
    if sort == "value" and not column:
        raise UsageError("sort 'value' needs parameter 'column' (the column whose value orders the rows)")
    where, params = _where(commit, analyzer, column, url, page)
    direction = "DESC" if order == "desc" else "ASC"
    # With a column each (page, analyzer) has at most one row (the table's unique key); without, one per cell.
    source = f"FROM analysis_cell c JOIN url u ON u.id = c.url_id WHERE {where}"
    keys = (
        f"SELECT c.url_id, c.analyzer, u.url, {_VALUE} AS value {source}"
        if column
        else f"SELECT DISTINCT c.url_id, c.analyzer, u.url {source}"
    )
    # rows without a value go last in either direction: a sort by value is about the values
    first = f"value IS NULL ASC, value {direction}" if sort == "value" else f"{sort} {direction}"
    clause = f" ORDER BY {first}, url ASC, analyzer ASC"
    total = archive.execute(f"SELECT COUNT(*) FROM ({keys})", params)[0][0]
    rows = archive.execute(f"SELECT * FROM ({keys}){clause} LIMIT ? OFFSET ?", [*params, limit, offset])
    cells = _cells_of(archive, commit, [(r["url_id"], r["analyzer"]) for r in rows], column)
    items = [
        {
            "url": r["url"],
            "analyzer": r["analyzer"],
            **cells.get((r["url_id"], r["analyzer"]), {"cells": {}, "notes": {}}),
        }
        for r in rows
    ]
    return page_of(items, total, limit, offset)


def _cells_of(
    archive: ArchiveReader, commit: int, keys: list[tuple[int, str]], column: str | None
) -> dict[tuple[int, str], dict[str, Any]]:
    if not keys:
        return {}
    ids = sorted({url_id for url_id, _ in keys})
    marks = ",".join("?" * len(ids))
    sql = (
        f'SELECT c.url_id, c.analyzer, c."column", c.value, c.note FROM analysis_cell c '
        f"WHERE c.commit_id = ? AND c.url_id IN ({marks})"
    )
    params: list[Any] = [commit, *ids]
    if column:
        sql, params = sql + ' AND c."column" = ?', [*params, column]
    else:
        sql += f" AND {COLUMNS_ONLY}"
    wanted = set(keys)
    grouped = group_cells(archive.execute(sql + ' ORDER BY c.analyzer, c."column"', params))
    return {key: value for key, value in grouped.items() if key in wanted}


def page_analysis(archive: ArchiveReader, commit: int, url_id: int) -> list[dict[str, Any]]:
    """One page's cells of every analyzer, for `page-detail`: ``[{"analyzer", "cells", "notes"}]``."""
    rows = archive.execute(
        'SELECT c.url_id, c.analyzer, c."column", c.value, c.note FROM analysis_cell c '
        f'WHERE c.commit_id = ? AND c.url_id = ? AND {COLUMNS_ONLY} ORDER BY c.analyzer, c."column"',
        [commit, url_id],
    )
    return [{"analyzer": analyzer, **entry} for (_, analyzer), entry in group_cells(rows).items()]


def url_cells(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    """One page's cells of every analyzer as ``{"analyzer/column": value}`` (``{}``: none analyzed it)."""
    rows = archive.execute(
        'SELECT c.analyzer, c."column", c.value FROM analysis_cell c JOIN url u ON u.id = c.url_id '
        f'WHERE c.commit_id = ? AND u.url = ? AND {COLUMNS_ONLY} ORDER BY c.analyzer, c."column"',
        [commit, url],
    )
    return {f"{analyzer}/{column}": decode_cell(value) for analyzer, column, value in rows}


def analysis_column_counts(
    archive: ArchiveReader, commit: int, analyzer: str | None = None
) -> dict[str, Any]:
    """The (analyzer, column) pairs that have cells in the commit, with how many pages have each."""
    sql = f'SELECT analyzer, "column", COUNT(*) AS pages FROM analysis_cell c WHERE commit_id = ? AND {COLUMNS_ONLY}'
    params: list[Any] = [commit]
    if analyzer:
        sql, params = sql + " AND analyzer = ?", [*params, analyzer]
    rows = archive.execute(sql + ' GROUP BY analyzer, "column" ORDER BY analyzer, "column"', params)
    return {"items": [{"analyzer": r[0], "column": r[1], "pages": r[2]} for r in rows]}
