"""Sitemap queries: the sitemaps a commit read, each with how it was found, what it listed and its problems."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query

from .common import PAGING, page_of, paged

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_SITEMAPS = (
    "SELECT u.url, s.source, p.url AS parent, s.scope, s.kind, s.status, s.entries, s.problems "
    "FROM sitemap s JOIN url u ON u.id = s.url_id LEFT JOIN url p ON p.id = s.parent_url_id WHERE s.commit_id = ?"
)


def _shape(row: dict[str, Any]) -> dict[str, Any]:
    row["problems"] = [{"kind": k, "detail": d} for k, d in json.loads(row["problems"] or "[]")]
    return row


def _sitemaps(archive: ArchiveReader, commit: int, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    stored = archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sitemap'")
    if not stored:  # an archive written before sitemaps were stored (format 3 and older)
        return page_of([], 0, limit, offset)
    return paged(archive, _SITEMAPS, [commit], " ORDER BY s.id", limit, offset, _shape)


QUERIES = [
    Query(
        "sitemaps",
        "The sitemaps the crawl read, in reading order: URL, how it was found (given, robots.txt, default, "
        "index), the index listing it, the URL prefix its URLs must start with, its kind (urlset, index, "
        "text), HTTP status, number of entries and problems (unreachable, invalid, over-limit, with details).",
        _sitemaps,
        dict(PAGING),
        order=56,
    ),
]
