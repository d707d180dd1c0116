"""`analyzer-errors`: what went wrong in analyzers, per page, with the traceback for the plugin's author."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

from .common import PAGING, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_COLUMNS = read.ANALYZER_ERROR_SORTS


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
    return read.analyzer_errors(archive, commit, analyzer, url, sort, order, limit, offset)


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
