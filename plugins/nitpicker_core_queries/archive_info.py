"""Queries about the archive itself: its info, its commits and what changed between two."""

from __future__ import annotations

from typing import Any

from nitpicker_core import Query
from nitpicker_core.archive import aggregates, digest

from .common import PAGING


def _info(archive: Any, commit: int) -> dict[str, Any]:
    info = archive.info()
    info["commit"] = commit
    info["live_pid"] = archive.live_pid
    return info


def _commits(archive: Any, commit: int, limit: int, offset: int) -> dict[str, Any]:
    rows = archive.commits()
    head = archive.head()
    for row in rows:
        row["head"] = row["id"] == head
    return {"total": len(rows), "items": rows[offset:offset + limit]}


def _diff(archive: Any, commit: int, base: int | None, limit: int) -> dict[str, Any]:
    if base is None:
        changes = aggregates.value(archive, commit, "diff_parent")
        if changes["base"] is None:
            return {"base": None, "commit": commit, "added": [], "removed": [], "modified": [],
                    "note": "this commit has no parent to compare with"}
        base = changes["base"]
    else:
        base = archive.resolve(base)
        changes = digest.diff_urls(archive.execute, base, commit)
    result: dict[str, Any] = {"base": base, "commit": commit}
    for key in ("added", "removed", "modified"):
        urls = sorted(changes[key])
        result[key] = urls[:limit]
        result[f"{key}_total"] = len(urls)
    return result


QUERIES = [
    Query("info", "Format version, roots and crawl options of the archive.", _info, order=1),
    Query("commits", "Every commit (crawl generation) with status, times and stats, newest first.",
                   _commits, PAGING, order=2),
    Query(
        "diff", "URLs added, removed and modified between a base commit (default: the parent) and the commit.",
        _diff,
        {"base": {"type": "integer", "default": None, "description": "commit id to compare against (default: parent)"},
         "limit": {"type": "integer", "default": 1000, "minimum": 1, "description": "URLs per list"}},
        order=3),
]
