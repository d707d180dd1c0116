"""Queries about the archive itself: its info, its commits and what changed between two."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError
from nitpicker_core.archive import aggregates, digest, pagediff, tools_line

from .common import PAGING

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader


def _info(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    info = archive.info()
    info["commit"] = commit
    info["live_pid"] = archive.live_pid
    return info


def _commits(archive: ArchiveReader, commit: int, limit: int, offset: int) -> dict[str, Any]:
    rows = archive.commits()
    head = archive.head()
    for row in rows:
        row["head"] = row["id"] == head
        row["tools"] = tools_line(row)  # environment and analyzers hold the whole manifest
    return {"total": len(rows), "items": rows[offset : offset + limit]}


def _diff(
    archive: ArchiveReader, commit: int, base: int | None, limit: int, explain: int = 100
) -> dict[str, Any]:
    if base is None:
        changes = aggregates.value(archive, commit, "diff_parent")
        if changes["base"] is None:
            return {
                "base": None,
                "commit": commit,
                "added": [],
                "removed": [],
                "gone": [],
                "modified": [],
                "changes": {},
                "resources": {"added": [], "removed": [], "modified": []},
                "note": "this commit has no parent to compare with",
            }
        base = changes["base"]
    else:
        base = archive.resolve(base)
        changes = digest.diff_urls(archive.execute, base, commit)
    result: dict[str, Any] = {"base": base, "commit": commit}
    # a page that answered at the base and answers an error now is gone, not modified
    changes = pagediff.split_gone(changes, archive.gone(base, commit))
    for key in ("added", "removed", "gone", "modified"):
        urls = sorted(changes[key])
        result[key] = urls[:limit]
        result[f"{key}_total"] = len(urls)
    resources = archive.diff(base, commit)["resources"]
    result["resources"] = {key: urls[:limit] for key, urls in resources.items()}
    old, new = pagediff.Side(archive, base), pagediff.Side(archive, commit)
    # what changed in each gone and modified page (the first ``explain`` of them): fields, links, images, resources…
    result["changes"] = pagediff.explain(old, new, (result["gone"] + result["modified"])[:explain])
    return result


def _page_diff(
    archive: ArchiveReader,
    commit: int,
    url: str,
    base: int | None = None,
    html: bool = False,
    normalize: list[str] | None = None,
) -> dict[str, Any]:
    new = pagediff.Side(archive, commit)
    old = pagediff.side(archive, base) if base is not None else pagediff.parent_side(new)
    if old is None:
        raise UsageError(f"commit {commit} has no parent; give the base commit to compare with")
    result = pagediff.page_diff(old, new, url)
    if html:
        compiled = pagediff.patterns(normalize or ())
        modified = result["status"] in ("modified", "gone")
        result["html_diff"] = pagediff.html_diff(old, new, url, compiled) if modified else None
    return result


_BASE = {"type": "integer", "default": None, "description": "commit id to compare against (default: parent)"}

QUERIES = [
    Query("info", "Format version, roots and crawl options of the archive.", _info, order=1),
    Query(
        "commits",
        "Every commit (crawl generation) with status, times, stats and the environment manifest "
        "(tools, plugins, analyzer runs), newest first.",
        _commits,
        PAGING,
        order=2,
    ),
    Query(
        "diff",
        "URLs added, removed, gone (answered on the base, an error status or a failed fetch now: a deleted "
        "page) and modified between a base commit (default: the parent) and the commit, "
        "with what changed in each modified page (fields old and new; links, images, resources, JSON-LD, "
        "tags and headings added and removed) and the resources added, removed and modified.",
        _diff,
        {
            "base": _BASE,
            "limit": {"type": "integer", "default": 1000, "minimum": 1, "description": "URLs per list"},
            "explain": {
                "type": "integer",
                "default": 100,
                "minimum": 0,
                "description": "how many modified pages get their changes explained",
            },
        },
        order=3,
    ),
    Query(
        "page-diff",
        "What changed in one page between a base commit (default: the parent) and the commit: "
        "fields old and new, headers, links, images, resources, JSON-LD, tags and headings added and removed, "
        "analyzer cells that changed (analysis: an extracted price); "
        "with html, a unified diff of the rendered HTML after normalisation (nonces, CSRF tokens, cache-busting "
        "query strings, timestamps).",
        _page_diff,
        {
            "url": {"type": "string", "description": "the page's URL"},
            "base": _BASE,
            "html": {
                "type": "boolean",
                "default": False,
                "description": "add html_diff, the rendered HTML's line diff",
            },
            "normalize": {
                "type": "array",
                "items": {"type": "string"},
                "format": "regex",
                "default": None,
                "description": "more regular expressions whose matches (or groups) the HTML diff ignores",
            },
        },
        required=("url",),
        order=4,
    ),
]
