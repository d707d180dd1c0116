"""Technology tags and JSON-LD: which pages carry a tag or a structured-data type, and how many do."""

from __future__ import annotations

from typing import Any

from nitpicker_core import Query, read
from nitpicker_core.archive import aggregates

from .common import PAGES_OF_COMMIT, PAGING, external_flag, order_by, page_of, paged, sorting

_PAGE_COLUMNS = {"url": "u.url", "title": "ps.title", "status": "ps.status"}


def _pages_by_tag(
    archive: Any,
    commit: int,
    provider: str,
    external_id: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    pages = (
        PAGES_OF_COMMIT
        if sort != "url"
        else "url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id"
    )
    sql = (
        "SELECT u.url, ps.status, ps.title, ps.is_external, t.provider, t.category, t.external_id, "
        f"t.version, t.confidence FROM {pages} JOIN tag t ON t.state_id = cp.state_id "
        "WHERE cp.commit_id = ? AND t.provider = ? COLLATE NOCASE"
    )
    params: list[Any] = [commit, provider]
    if external_id:
        sql, params = sql + " AND t.external_id = ?", [*params, external_id]
    wanted = _nocase(provider)
    total = sum(
        rows
        for name, tag_id, rows in aggregates.value(archive, commit, "tag_rows")
        if _nocase(name) == wanted and (not external_id or tag_id == external_id)
    )
    clause = order_by(_PAGE_COLUMNS, sort, order, tiebreak="u.url, t.ordinal")
    return paged(archive, sql, params, clause, limit, offset, external_flag, total)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _nocase(text: str) -> str:
    """SQLite's NOCASE collation: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


def _tag_counts(
    archive: Any, commit: int, category: str | None = None, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    counts = aggregates.value(archive, commit, "tag_counts")
    providers, items = counts["providers"], counts["items"]
    if category:
        providers = [p for p in providers if p["category"] == category]
        items = [i for i in items if i["category"] == category]
    return {"providers": providers, **page_of(items[offset : offset + limit], len(items), limit, offset)}


def _pages_by_jsonld_type(
    archive: Any,
    commit: int,
    type: str,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    pages = (
        PAGES_OF_COMMIT
        if sort != "url"
        else "url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id"
    )
    # A page appears once, with the number of its scripts whose @type includes the type.
    scripts = (
        "(SELECT COUNT(*) FROM jsonld j WHERE j.state_id = cp.state_id AND j.types != '[]' "
        "AND EXISTS (SELECT 1 FROM json_each(j.types) je WHERE je.value = ?1))"
    )
    sql = (
        f"SELECT u.url, ps.status, ps.title, ps.is_external, {scripts} AS scripts FROM {pages} "
        f"WHERE cp.commit_id = ?2 AND {scripts} > 0"
    )
    counts = aggregates.value(archive, commit, "jsonld_counts")["types"]
    total = next((t["pages"] for t in counts if t["type"] == type), 0)
    clause = order_by(_PAGE_COLUMNS, sort, order)
    return paged(archive, sql, [type, commit], clause, limit, offset, external_flag, total)


def _jsonld_counts(archive: Any, commit: int) -> dict[str, Any]:
    return aggregates.value(archive, commit, "jsonld_counts")


def _page_jsonld(archive: Any, commit: int, url: str) -> dict[str, Any]:
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
