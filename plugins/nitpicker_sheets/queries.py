"""Keyset-paginated queries the report sheets stream from: one call reads one batch after a URL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

SCOPES = read.REPORT_SCOPES


def _page_rows(
    archive: ArchiveReader, commit: int, scope: str = "targets", after: str = "", limit: int = 500
) -> dict[str, Any]:
    return read.report_pages(archive, commit, scope, after, limit)


def _referrers(archive: ArchiveReader, commit: int, after: str = "", limit: int = 500) -> dict[str, Any]:
    return read.report_referrers(archive, commit, after, limit)


def _link_texts(archive: ArchiveReader, commit: int, after: str = "", limit: int = 500) -> dict[str, Any]:
    return read.report_link_texts(archive, commit, after, limit)


def _resource_rows(archive: ArchiveReader, commit: int, after: str = "", limit: int = 500) -> dict[str, Any]:
    return read.report_resources(archive, commit, after, limit)


def _resource_referrers(
    archive: ArchiveReader, commit: int, after: str = "", limit: int = 500
) -> dict[str, Any]:
    return read.report_resource_referrers(archive, commit, after, limit)


_AFTER = {
    "after": {"type": "string", "default": "", "description": "continue after this URL (keyset paging)"}
}


def _limit(what: str) -> dict[str, Any]:
    return {"limit": {"type": "integer", "default": 500, "minimum": 1, "maximum": 5000, "description": what}}


QUERIES = [
    Query(
        "report-pages",
        "Page rows for reports, in URL order, keyset-paginated (`after`, `next_after`): "
        "metadata, link counts with the bad links (href as written), redirect sources, inbound anchors of other "
        "pages (`referrers`) and the page's links to itself (`self_links`), analyzer cells, and how the page was "
        "read (`render_rendered`, `render_reason`: --render auto's decision; `unrendered`: why no browser rendered "
        "it; `has_html`). "
        "scope: targets (internal HTML in scope), rows (every URL but redirect sources), html.",
        _page_rows,
        {
            "scope": {
                "type": "string",
                "enum": sorted(SCOPES),
                "default": "targets",
                "description": "which rows",
            },
            **_AFTER,
            **_limit("pages per call"),
        },
        order=90,
    ),
    Query(
        "report-referrers",
        "One row per (page, anchor of this commit pointing at it, through a redirect "
        "or not), pages in URL order, keyset-paginated by page.",
        _referrers,
        {**_AFTER, **_limit("pages per call")},
        order=91,
    ),
    Query(
        "report-link-texts",
        "Anchors of internal HTML pages whose text and the title of the internal HTML "
        "page they lead to (redirects followed) do not contain one another, keyset-paginated by source page.",
        _link_texts,
        {**_AFTER, **_limit("source pages per call")},
        order=92,
    ),
    Query(
        "report-resources",
        "Resources with status, content type, size and referring pages (count and the "
        "first URLs), in URL order, keyset-paginated.",
        _resource_rows,
        {**_AFTER, **_limit("resources per call")},
        order=93,
    ),
    Query(
        "report-resource-referrers",
        "One row per (page, resource it loaded), pages in URL order, keyset-paginated by page.",
        _resource_referrers,
        {**_AFTER, **_limit("pages per call")},
        order=94,
    ),
]


def _analysis_columns(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    return read.analysis_columns(archive, commit)


QUERIES.append(
    Query(
        "report-analysis-columns",
        "The analyzer table columns that have cells in the commit.",
        _analysis_columns,
        order=95,
    )
)
