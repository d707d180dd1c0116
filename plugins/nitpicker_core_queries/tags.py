"""Technology tags and JSON-LD: which pages carry a tag or a structured-data type, and how many do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read
from nitpicker_core.archive import aggregates

from .common import PAGING, page_of, sorting

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_PAGE_COLUMNS = read.TAGGED_SORTS


def _pages_by_tag(
    archive: ArchiveReader,
    commit: int,
    provider: str,
    external_id: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    return read.pages_by_tag(archive, commit, provider, external_id, sort, order, limit, offset)


def _tag_counts(
    archive: ArchiveReader, commit: int, category: str | None = None, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    counts = aggregates.value(archive, commit, "tag_counts")
    providers, items = counts["providers"], counts["items"]
    if category:
        providers = [p for p in providers if p["category"] == category]
        items = [i for i in items if i["category"] == category]
    return {"providers": providers, **page_of(items[offset : offset + limit], len(items), limit, offset)}


def _pages_by_jsonld_type(
    archive: ArchiveReader,
    commit: int,
    type: str,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    return read.pages_by_jsonld_type(archive, commit, type, sort, order, limit, offset)


def _jsonld_counts(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    return aggregates.value(archive, commit, "jsonld_counts")


def _page_jsonld(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    items = read.page_jsonld(archive, commit, url)
    return {"url": url, "total": len(items), "items": items}


_URL = {"type": "string", "description": "the page URL, exactly as crawled"}

QUERIES = [
    Query(
        "pages-by-tag",
        "Pages carrying a technology tag (GTM container, GA4 property, generator, …): one row per page and "
        "matching tag.",
        _pages_by_tag,
        {
            "provider": {"type": "string", "description": "tag provider, e.g. Google Tag Manager (any case)"},
            "external_id": {"type": "string", "description": "only this id, e.g. GTM-ABC1234"},
            **sorting(_PAGE_COLUMNS, "url"),
            **PAGING,
        },
        required=("provider",),
        order=60,
    ),
    Query(
        "tag-counts",
        "Technology tags with the number of pages carrying them: per provider and category, and per "
        "provider, category and external id (with the versions seen).",
        _tag_counts,
        {
            "category": {"type": "string", "description": "only this category (analytics, generator, …)"},
            **PAGING,
        },
        order=61,
    ),
    Query(
        "pages-by-jsonld-type",
        "Pages with a JSON-LD script whose normalised @type includes the given type, with the number of such "
        "scripts.",
        _pages_by_jsonld_type,
        {
            "type": {"type": "string", "description": "a normalised @type, e.g. Article (case-sensitive)"},
            **sorting(_PAGE_COLUMNS, "url"),
            **PAGING,
        },
        required=("type",),
        order=62,
    ),
    Query(
        "jsonld-counts",
        "Structured data of the commit: scripts and pages per normalised @type, per kind (jsonld, "
        "speculationrules), and how many scripts failed to parse.",
        _jsonld_counts,
        {},
        order=63,
    ),
    Query(
        "page-jsonld",
        "The JSON-LD and speculation-rules scripts of one page: raw, parsed, types, error.",
        _page_jsonld,
        {"url": _URL},
        required=("url",),
        order=64,
    ),
]
