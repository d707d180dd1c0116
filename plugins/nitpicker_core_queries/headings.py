"""Headings h1–h6 kept per page: list them, and find pages with no h1 or more than one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError

from .common import PAGING, paged

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# A state whose headings were looked for: format 2 kept its sent HTML, said why not, or kept headings.
# (A format-1 state has none of these: its headings are unknown, not absent.)
_HEADINGS_READ = (
    "(ps.source_sha256 IS NOT NULL OR json_extract(ps.extra, '$.source_omitted') IS NOT NULL "
    "OR EXISTS (SELECT 1 FROM heading h WHERE h.state_id = ps.id))"
)
# Internal HTML pages the crawl rendered (light scrapes of external pages are not audited)
_RENDERED = (
    "cp.commit_id = ? AND ps.html_sha256 IS NOT NULL AND ps.is_external = 0 AND ps.is_skipped = 0 "
    "AND ps.scraped = 1"
)
_PAGES = "commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id"


def _require_headings(archive: ArchiveReader) -> None:
    if not getattr(archive, "has_headings", False):
        raise UsageError(
            f"{archive.name} was written before headings were kept (archive format "
            f"{archive.format_version}); crawl again to keep them"
        )


def _headings(
    archive: ArchiveReader,
    commit: int,
    url: str | None = None,
    level: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    _require_headings(archive)
    sql = (
        f"SELECT u.url, h.ordinal, h.level, h.text FROM {_PAGES} JOIN heading h ON h.state_id = cp.state_id "
        "WHERE cp.commit_id = ?"
    )
    params: list[Any] = [commit]
    if url is not None:
        if not archive.execute(
            "SELECT 1 FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "WHERE cp.commit_id = ? AND u.url = ?",
            [commit, url],
        ):
            raise UsageError(f"no page {url} in commit {commit}")
        sql, params = sql + " AND u.url = ?", [*params, url]
    if level is not None:
        sql, params = sql + " AND h.level = ?", [*params, level]
    return paged(archive, sql, params, " ORDER BY u.url, h.ordinal", limit, offset)


def _h1_problems(
    archive: ArchiveReader, commit: int, problem: str = "any", limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    _require_headings(archive)
    h1s = "(SELECT COUNT(*) FROM heading h WHERE h.state_id = ps.id AND h.level = 1)"
    texts = (
        "(SELECT json_group_array(text) FROM (SELECT h.text FROM heading h WHERE h.state_id = ps.id "
        "AND h.level = 1 ORDER BY h.ordinal))"
    )
    condition = {"missing": "= 0", "multiple": "> 1", "any": "<> 1"}[problem]
    sql = (
        f"SELECT u.url, ps.title, {h1s} AS h1_count, {texts} AS h1 FROM {_PAGES} "
        f"WHERE {_RENDERED} AND {_HEADINGS_READ} AND {h1s} {condition}"
    )
    result = paged(archive, sql, [commit], " ORDER BY u.url", limit, offset)
    for item in result["items"]:
        item["h1"] = json.loads(item["h1"] or "[]")
        item["problem"] = "missing" if item["h1_count"] == 0 else "multiple"
    unknown = archive.execute(
        f"SELECT COUNT(*) FROM {_PAGES} WHERE {_RENDERED} AND NOT {_HEADINGS_READ}", [commit]
    )[0][0]
    # pages crawled before headings were kept (an upgraded older archive): neither good nor bad
    return {**result, "not_recorded": unknown}


QUERIES = [
    Query(
        "headings",
        "Headings h1–h6 kept per page (text, level, order in the page): one page's with --url, or the whole "
        "commit's, optionally one level.",
        _headings,
        {
            "url": {"type": "string", "description": "only this page (the URL exactly as crawled)"},
            "level": {
                "type": "integer",
                "minimum": 1,
                "maximum": 6,
                "description": "only this level (1 for h1)",
            },
            **PAGING,
        },
        order=66,
    ),
    Query(
        "h1-problems",
        "Rendered internal pages without an h1 or with more than one, with their h1 texts; not_recorded counts "
        "pages crawled before headings were kept.",
        _h1_problems,
        {
            "problem": {
                "type": "string",
                "enum": ["any", "missing", "multiple"],
                "default": "any",
                "description": "missing (no h1), multiple (more than one) or any",
            },
            **PAGING,
        },
        order=67,
    ),
]
