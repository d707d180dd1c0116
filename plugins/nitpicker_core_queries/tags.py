"""Technology tags and JSON-LD: which pages carry a tag or a structured-data type, and how many do."""

from __future__ import annotations

import json
from typing import Any

from nitpicker_core import Query, UsageError

from .common import PAGES_OF_COMMIT, PAGING, external_flag, order_by, paged, sorting

_PAGE_COLUMNS = {"url": "u.url", "title": "ps.title", "status": "ps.status"}


def _pages_by_tag(archive: Any, commit: int, provider: str, external_id: str | None = None,
                  sort: str = "url", order: str = "asc", limit: int = 100, offset: int = 0) -> dict[str, Any]:
    sql = (
        "SELECT u.url, ps.status, ps.title, ps.is_external, t.provider, t.category, t.external_id, "
        f"t.version, t.confidence FROM {PAGES_OF_COMMIT} JOIN tag t ON t.state_id = cp.state_id "
        "WHERE cp.commit_id = ? AND t.provider = ? COLLATE NOCASE"
    )
    params: list[Any] = [commit, provider]
    if external_id:
        sql, params = sql + " AND t.external_id = ?", [*params, external_id]
    clause = order_by(_PAGE_COLUMNS, sort, order, tiebreak="u.url, t.ordinal")
    return paged(archive, sql, params, clause, limit, offset, external_flag)


def _tag_counts(archive: Any, commit: int, category: str | None = None, limit: int = 100,
                offset: int = 0) -> dict[str, Any]:
    source = "FROM commit_page cp JOIN tag t ON t.state_id = cp.state_id WHERE cp.commit_id = ?"
    params: list[Any] = [commit]
    if category:
        source, params = source + " AND t.category = ?", [*params, category]
    providers = archive.execute(
        f"SELECT t.provider, t.category, COUNT(DISTINCT cp.url_id) AS pages {source} "
        "GROUP BY t.provider, t.category ORDER BY pages DESC, t.provider", params)
    sql = (
        "SELECT t.provider, t.category, t.external_id, COUNT(DISTINCT cp.url_id) AS pages, "
        f"group_concat(DISTINCT nullif(t.version, '')) AS versions {source} "
        "GROUP BY t.provider, t.category, t.external_id"
    )
    result = paged(archive, sql, params, " ORDER BY pages DESC, t.provider, t.external_id",
                   limit, offset, external_flag)
    for item in result["items"]:
        item["versions"] = sorted(item["versions"].split(",")) if item["versions"] else []
    return {"providers": [dict(r) for r in providers], **result}


# The JSON-LD scripts of the commit's pages; `types` holds the normalised @type values as a JSON array.
_JSONLD = f"FROM {PAGES_OF_COMMIT} JOIN jsonld j ON j.state_id = cp.state_id WHERE cp.commit_id = ?"


def _pages_by_jsonld_type(archive: Any, commit: int, type: str, sort: str = "url", order: str = "asc",
                          limit: int = 100, offset: int = 0) -> dict[str, Any]:
    sql = (
        f"SELECT u.url, ps.status, ps.title, ps.is_external, COUNT(*) AS scripts {_JSONLD} "
        "AND j.types != '[]' AND EXISTS (SELECT 1 FROM json_each(j.types) je WHERE je.value = ?) "
        "GROUP BY cp.url_id"
    )
    clause = order_by(_PAGE_COLUMNS, sort, order)
    return paged(archive, sql, [commit, type], clause, limit, offset, external_flag)


def _jsonld_counts(archive: Any, commit: int) -> dict[str, Any]:
    types = archive.execute(
        "SELECT je.value AS type, COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages "
        "FROM commit_page cp JOIN jsonld j ON j.state_id = cp.state_id JOIN json_each(j.types) je "
        "WHERE cp.commit_id = ? AND j.types != '[]' GROUP BY je.value ORDER BY pages DESC, type", [commit])
    kinds = archive.execute(
        "SELECT j.kind, COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages, "
        "SUM(j.error != '') AS errors FROM commit_page cp JOIN jsonld j ON j.state_id = cp.state_id "
        "WHERE cp.commit_id = ? GROUP BY j.kind ORDER BY j.kind", [commit])
    errors = archive.execute(
        "SELECT COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages FROM commit_page cp "
        "JOIN jsonld j ON j.state_id = cp.state_id WHERE cp.commit_id = ? AND j.error != ''", [commit])[0]
    return {"types": [dict(r) for r in types], "kinds": [dict(r) for r in kinds],
            "parse_errors": errors["scripts"], "pages_with_parse_errors": errors["pages"]}


def _page_jsonld(archive: Any, commit: int, url: str) -> dict[str, Any]:
    page = archive.execute("SELECT cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id "
                           "WHERE cp.commit_id = ? AND u.url = ?", [commit, url])
    if not page:
        raise UsageError(f"no page {url} in commit {commit}")
    rows = archive.execute("SELECT ordinal, kind, raw, parsed, types, error FROM jsonld WHERE state_id = ? "
                           "ORDER BY ordinal", [page[0]["state_id"]])
    items = []
    for row in rows:
        item = dict(row)
        item["parsed"] = json.loads(item["parsed"]) if item["parsed"] is not None else None
        item["types"] = json.loads(item["types"] or "[]")
        items.append(item)
    return {"url": url, "total": len(items), "items": items}


_URL = {"type": "string", "description": "the page URL, exactly as crawled"}

QUERIES = [
    Query(
        "pages-by-tag",
        "Pages carrying a technology tag (GTM container, GA4 property, generator, …): one row per page and "
        "matching tag.",
        _pages_by_tag,
        {"provider": {"type": "string", "description": "tag provider, e.g. Google Tag Manager (any case)"},
         "external_id": {"type": "string", "description": "only this id, e.g. GTM-ABC1234"},
         **sorting(_PAGE_COLUMNS, "url"), **PAGING},
        required=("provider",), order=60),
    Query(
        "tag-counts",
        "Technology tags with the number of pages carrying them: per provider and category, and per "
        "provider, category and external id (with the versions seen).",
        _tag_counts,
        {"category": {"type": "string", "description": "only this category (analytics, generator, …)"},
         **PAGING},
        order=61),
    Query(
        "pages-by-jsonld-type",
        "Pages with a JSON-LD script whose normalised @type includes the given type, with the number of such "
        "scripts.",
        _pages_by_jsonld_type,
        {"type": {"type": "string", "description": "a normalised @type, e.g. Article (case-sensitive)"},
         **sorting(_PAGE_COLUMNS, "url"), **PAGING},
        required=("type",), order=62),
    Query(
        "jsonld-counts",
        "Structured data of the commit: scripts and pages per normalised @type, per kind (jsonld, "
        "speculationrules), and how many scripts failed to parse.",
        _jsonld_counts, {}, order=63),
    Query("page-jsonld", "The JSON-LD and speculation-rules scripts of one page: raw, parsed, types, error.",
          _page_jsonld, {"url": _URL}, required=("url",), order=64),
]
