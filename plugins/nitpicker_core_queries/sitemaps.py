"""Sitemap queries: the sitemaps a commit read, each with how it was found, what it listed and its problems."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

from .common import PAGING

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader


def _sitemaps(archive: ArchiveReader, commit: int, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    return read.sitemap_list(archive, commit, limit, offset)  # empty on archives older than format 4


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
