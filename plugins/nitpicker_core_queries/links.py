"""Link queries: broken and external links, isolated pages and clusters, and the link graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

from .common import PAGING, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_BROKEN_SORTS = read.BROKEN_SORTS
_TARGET_SORTS = read.BROKEN_TARGET_SORTS
_SOURCE_SORTS = read.BROKEN_SOURCE_SORTS
_EXTERNAL_SORTS = read.EXTERNAL_SORTS
_ISOLATED_SORTS = read.ISOLATED_SORTS
_GRAPH_SORTS = read.GRAPH_SORTS


def _broken_links(
    archive: ArchiveReader,
    commit: int,
    limit: int,
    offset: int,
    sort: str | None,
    order: str,
    group: str = "target",
    per_group: int = 20,
) -> dict[str, Any]:
    return read.broken_link_list(archive, commit, limit, offset, sort, order, group, per_group)


def _external_links(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str
) -> dict[str, Any]:
    return read.external_link_list(archive, commit, limit, offset, sort, order)


def _isolated_pages(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str, include_roots: bool
) -> dict[str, Any]:
    return read.isolated_page_list(archive, commit, limit, offset, sort, order, include_roots)


def _isolated_clusters(
    archive: ArchiveReader, commit: int, limit: int, offset: int, singletons: bool, rooted: bool
) -> dict[str, Any]:
    return read.isolated_cluster_list(archive, commit, limit, offset, singletons, rooted)


def _link_graph(
    archive: ArchiveReader, commit: int, limit: int, offset: int, sort: str, order: str, all_nodes: bool
) -> dict[str, Any]:
    return read.link_graph(archive, commit, limit, offset, sort, order, all_nodes)


QUERIES = [
    Query(
        "broken-links",
        "Links whose destination, followed through redirects, answered 404. group=target "
        "(default): one row per broken URL with its status, the number of referring pages and anchors, the "
        "referring pages and the anchors (`links`); group=source: one row per page with its broken targets "
        "and anchors; group=anchor: one row per anchor. Every anchor carries the href exactly as written "
        "(relative, with its fragment; older archives: the absolute URL and fragment) and its line and col "
        "in the server's HTML where recorded.",
        _broken_links,
        {
            **PAGING,
            "group": {
                "type": "string",
                "enum": ["target", "source", "anchor"],
                "default": "target",
                "description": "one row per broken target, per source page or per anchor",
            },
            "sort": {
                "type": "string",
                "enum": sorted({*_BROKEN_SORTS, *_TARGET_SORTS, *_SOURCE_SORTS}),
                "default": None,
                "description": "column to sort by (target: url, pages, anchors; source: "
                "source, targets, anchors; anchor: source, href, url); default: the group's URL",
            },
            "order": {
                "type": "string",
                "enum": ["asc", "desc"],
                "default": "asc",
                "description": "sort direction",
            },
            "per_group": {
                "type": "integer",
                "default": 20,
                "minimum": 1,
                "maximum": 1000,
                "description": "anchors (and pages) listed in each group; the counts cover them all",
            },
        },
        order=20,
    ),
    Query(
        "external-links",
        "Links to external URLs grouped by resolved destination, with its status, error "
        "kind, outcome (answered, failed, skipped or not_checked: never requested, as with "
        "--no-fetch-external) and the number of distinct referring pages.",
        _external_links,
        {**PAGING, **sorting(_EXTERNAL_SORTS, "url")},
        order=21,
    ),
    Query(
        "isolated-pages",
        "Internal HTML pages that no anchor of another page reaches (redirects followed). "
        "Roots are entry points: they are listed with root=true unless include_roots is false.",
        _isolated_pages,
        {
            **PAGING,
            **sorting(_ISOLATED_SORTS, "url"),
            "include_roots": {"type": "boolean", "default": True, "description": "also list unlinked roots"},
        },
        order=22,
    ),
    Query(
        "isolated-clusters",
        "Weakly connected components of internal HTML pages (resolved anchors) that "
        "contain no root, largest first; singletons are counted, listed only with `singletons`.",
        _isolated_clusters,
        {
            **PAGING,
            "singletons": {
                "type": "boolean",
                "default": False,
                "description": "also list one-page components",
            },
            "rooted": {
                "type": "boolean",
                "default": False,
                "description": "also list components with a root",
            },
        },
        order=23,
    ),
    Query(
        "link-graph",
        "Internal pages and the resolved, deduplicated links between them (anchor counts), "
        "paginated by edges; nodes are the endpoints of the returned edges unless all_nodes.",
        _link_graph,
        {
            **PAGING,
            **sorting(_GRAPH_SORTS, "source"),
            "all_nodes": {"type": "boolean", "default": False, "description": "list every internal page"},
        },
        order=24,
    ),
]
