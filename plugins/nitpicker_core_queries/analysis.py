"""`analysis` and `analysis-columns`: analyzers' table cells per page and analyzer, and the columns they fill."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

from .common import PAGING

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

SORTS = read.ANALYSIS_SORTS
page_analysis = read.page_analysis


def _analysis(
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
    return read.analysis_list(archive, commit, analyzer, column, url, page, sort, order, limit, offset)


def _columns(archive: ArchiveReader, commit: int, analyzer: str | None = None) -> dict[str, Any]:
    return read.analysis_column_counts(archive, commit, analyzer)


QUERIES = [
    Query(
        "analysis",
        "Analyzers' table cells (keyword counts, main-content metrics, Lighthouse scores…): one row per page and "
        "analyzer with `cells` (column → value as the analyzer gave it) and `notes` (column → note, where one "
        "was given). Filter by analyzer, column and URL; `sort=value` orders by the value of `column` (rows "
        "without a value last).",
        _analysis,
        {
            "analyzer": {"type": "string", "description": "only this analyzer"},
            "column": {
                "type": "string",
                "description": "only pages with a cell in this column, and only that cell",
            },
            "url": {
                "type": "string",
                "format": "glob",
                "description": "case-sensitive substring of the URL; a pattern with * ? or [ is a GLOB over the "
                "whole URL",
            },
            "page": {"type": "string", "description": "only this URL, exactly as crawled"},
            "sort": {
                "type": "string",
                "enum": list(SORTS),
                "default": "url",
                "description": "url, analyzer, or value (the value of `column`)",
            },
            "order": {
                "type": "string",
                "enum": ["asc", "desc"],
                "default": "asc",
                "description": "sort direction",
            },
            **PAGING,
        },
        order=57,
    ),
    Query(
        "analysis-columns",
        "The analyzer table columns that have cells in the commit, with the number of pages that have each.",
        _columns,
        {"analyzer": {"type": "string", "description": "only this analyzer"}},
        order=58,
    ),
]
