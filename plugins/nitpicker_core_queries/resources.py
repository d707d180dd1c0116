"""Queries about sub-resources and images: the resource list, who referenced what, unused files, images."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

from .common import PAGING, sorting, status_class_param

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_RESOURCE_COLUMNS = read.RESOURCE_SORTS
_IMAGE_COLUMNS = read.IMAGE_SORTS


def _resources(
    archive: ArchiveReader,
    commit: int,
    url: str | None = None,
    status: int | None = None,
    content_type: str | None = None,
    external: bool | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
    status_class: str | None = None,
) -> dict[str, Any]:
    return read.resource_list(
        archive, commit, url, status, content_type, external, sort, order, limit, offset, status_class
    )


def _resource_referrers(
    archive: ArchiveReader, commit: int, url: str, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    return read.resource_referrer_list(archive, commit, url, limit, offset)


def _unused_resources(
    archive: ArchiveReader,
    commit: int,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    return read.unused_resource_list(archive, commit, sort, order, limit, offset)


def _images(
    archive: ArchiveReader,
    commit: int,
    url: str | None = None,
    missing_alt: bool = False,
    missing_size: bool = False,
    oversized: bool = False,
    lazy: bool | None = None,
    viewport_width: int | None = None,
    sort: str = "page",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    return read.image_list(
        archive,
        commit,
        url,
        missing_alt,
        missing_size,
        oversized,
        lazy,
        viewport_width,
        sort,
        order,
        limit,
        offset,
    )


_FILTER = {"url": {"type": "string", "description": "only URLs containing this text"}}

QUERIES = [
    Query(
        "resources",
        "Sub-resources the pages loaded (images, scripts, styles, fonts, …) with status, content type, size, "
        "compression, CDN and the number of pages that referenced each.",
        _resources,
        {
            **_FILTER,
            "status": {"type": "integer", "description": "only this HTTP status"},
            **status_class_param("no status: the resource never answered"),
            "content_type": {
                "type": "string",
                "description": "only content types starting with this (image/)",
            },
            "external": {
                "type": "boolean",
                "description": "only external (true) or internal (false) resources",
            },
            **sorting(_RESOURCE_COLUMNS, "url"),
            **PAGING,
        },
        order=40,
    ),
    Query(
        "resource-referrers",
        "The pages that referenced one resource in the commit.",
        _resource_referrers,
        {
            "url": {"type": "string", "description": "the resource URL, exactly as listed by `resources`"},
            **PAGING,
        },
        required=("url",),
        order=41,
    ),
    Query(
        "unused-resources",
        "Resources of the commit that no page of the commit referenced while rendering and that no anchor "
        "of the commit links to (for example left over after the pages using them changed).",
        _unused_resources,
        {**sorting(_RESOURCE_COLUMNS, "url"), **PAGING},
        order=42,
    ),
    Query(
        "images",
        "Images of internal pages, one row per page, image and device viewport. Filters: missing alt (no alt "
        'attribute; alt="" marks a decorative image and is not missing), missing size (no width/height '
        "attribute), oversized (natural size over twice the displayed size, or over "
        "--image-file-size-threshold).",
        _images,
        {
            "url": {"type": "string", "description": "only pages whose URL contains this text"},
            "missing_alt": {"type": "boolean", "default": False, "description": "only images without alt"},
            "missing_size": {
                "type": "boolean",
                "default": False,
                "description": "only images without width/height attributes",
            },
            "oversized": {"type": "boolean", "default": False, "description": "only oversized images"},
            "lazy": {"type": "boolean", "description": "only lazy (true) or eager (false) images"},
            "viewport_width": {"type": "integer", "description": "only this device viewport width"},
            **sorting(_IMAGE_COLUMNS, "page"),
            **PAGING,
        },
        order=43,
    ),
]
