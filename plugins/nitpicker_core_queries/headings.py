"""Headings h1–h6 kept per page: list them, and find pages with no h1 or more than one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError, read

from .common import PAGING

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader


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
    return read.headings(archive, commit, url, level, limit, offset)


def _h1_problems(
    archive: ArchiveReader, commit: int, problem: str = "any", limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    _require_headings(archive)
    condition = {"missing": "= 0", "multiple": "> 1", "any": "<> 1"}[problem]
    result = read.h1_problems(archive, commit, condition, limit, offset)
    for item in result["items"]:
        item["h1"] = json.loads(item["h1"] or "[]")
        item["problem"] = "missing" if item["h1_count"] == 0 else "multiple"
    # not_recorded: pages crawled before headings were kept (an upgraded older archive): neither good nor bad
    return result


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
