"""`analyzer-errors`: what went wrong in analyzers, per page, with the traceback for the plugin's author."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query

from .common import PAGING, order_by, page_of, paged, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_COLUMNS = {"url": "u.url", "analyzer": "e.analyzer"}


def _columns(archive: ArchiveReader, table: str) -> set[str]:
    return {row[1] for row in archive.execute(f"PRAGMA table_info({table})")}


def _analyzer_errors(
    archive: ArchiveReader,
    commit: int,
    analyzer: str | None = None,
    url: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    have = _columns(archive, "analyzer_error")
    if not have:  # an archive from before analyzers kept their errors
        return page_of([], 0, limit, offset)
    # archives written before tracebacks were kept have no such column: their rows say null
    traceback = "e.traceback" if "traceback" in have else "NULL"
    params: list[Any]
    where, params = "e.commit_id = ?", [commit]
    if analyzer:
        where, params = where + " AND e.analyzer = ?", [*params, analyzer]
    if url:
        where, params = where + " AND instr(u.url, ?) > 0", [*params, url]
    sql = (
        f"SELECT e.analyzer, u.url, e.message AS error, {traceback} AS traceback "
        f"FROM analyzer_error e LEFT JOIN url u ON u.id = e.url_id WHERE {where}"
    )
    return paged(
        archive,
        sql,
        params,
        order_by(_COLUMNS, sort, order, tiebreak="e.analyzer, u.url, e.rowid"),
        limit,
        offset,
    )


QUERIES = [
    Query(
        "analyzer-errors",
        "What analyzers failed on in the commit, one row per analyzer and URL: the error (an exception, a "
        "time limit, a wrong return type naming the plugin) and its traceback where there is one. The URL is "
        "null for an error of the whole analyzer.",
        _analyzer_errors,
        {
            "analyzer": {"type": "string", "description": "only this analyzer"},
            "url": {"type": "string", "description": "only URLs containing this text"},
            **sorting(_COLUMNS, "url"),
            **PAGING,
        },
        order=56,
    ),
]
