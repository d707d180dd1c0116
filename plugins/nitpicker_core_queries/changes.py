"""The `issue-changes` query: the new, fixed, gone (with their page) and regressed findings against a base, by check, with their URLs.

What an update changed, named: the terminal summary, `nitpicker issues --base` and the viewer's home list it
from here. Built on the `issues` and `issue-urls` answers, so its counts are theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, Query

from .issues import _BASE, _issue_urls, _issues

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, NitpickerPluginManager

CHANGES = ("new", "fixed", "gone", "regressed")  # gone: vanished with their page (an error now)
# A check's URLs are read in full up to here to see whether it sits on the same pages as a check listed
# before it (ten security headers missing on the same two added pages are one story, not ten)
SAME_PAGES_UP_TO = 200
SCAN = 10_000  # regressed findings are a subset of the new ones: looked for among this many


def _findings(
    archive: ArchiveReader,
    commit: int,
    pm: NitpickerPluginManager,
    check: str,
    base: str | None,
    change: str,
    wanted: int,
) -> tuple[list[dict[str, Any]], bool]:
    """Up to ``wanted`` findings of ``check`` in ``change`` (regressed: the new ones that came back), and
    whether they are all of them."""
    state = "new" if change == "regressed" else change
    limit = SCAN if change == "regressed" else max(wanted, 1)
    answer = _issue_urls(archive, commit, pm, check=check, base=base, state=state, limit=limit)
    found = answer["items"]
    if change == "regressed":
        found = [item for item in found if item["regressed"]]
    return found[:wanted], answer["total"] <= limit and len(found) <= wanted


def _listed(
    archive: ArchiveReader,
    commit: int,
    pm: NitpickerPluginManager,
    row: dict[str, Any],
    base: str | None,
    change: str,
    urls: int,
) -> dict[str, Any]:
    count = row[change] or 0
    found, whole = _findings(
        archive, commit, pm, row["id"], base, change, SAME_PAGES_UP_TO if count <= SAME_PAGES_UP_TO else urls
    )
    shown = [
        {"url": f["url"], "detail": f["detail"], "regressed": bool(f["regressed"])} for f in found[:urls]
    ]
    return {
        "check": row["id"],
        "title": row["title"],
        "priority": row["priority"],
        "category": row["category"],
        "count": count,
        "urls": shown,
        "more": max(count - len(shown), 0),
        "pages": sorted({f["url"] for f in found}) if whole else None,
    }


def _same_pages(items: list[dict[str, Any]]) -> None:
    """``same_as``: the first check listed before this one whose findings are on exactly the same pages."""
    seen: dict[tuple[str, ...], str] = {}
    for item in items:
        pages = item.pop("pages")
        key = tuple(pages) if pages else None
        item["same_as"] = seen.get(key) if key else None
        if key and key not in seen:
            seen[key] = item["check"]


def issue_changes(
    archive: ArchiveReader,
    commit: int,
    pm: NitpickerPluginManager,
    base: str | None = None,
    urls: int = 3,
    limit: int = 10,
    priority: str | None = None,
) -> dict[str, Any]:
    answer = _issues(archive, commit, pm, base=base, priority=priority)
    compared = answer["base"] if answer["base"] is not None and answer["base"] != commit else None
    out: dict[str, Any] = {"commit": commit, "base": answer["base"], "base_note": answer["base_note"]}
    for change in CHANGES:
        rows = [r for r in answer["items"] if r.get(change)]
        # the most severe checks first, then the ones with more findings: one broken link before ten headers
        rows.sort(key=lambda r: (PRIORITIES.index(r["priority"]), -r[change], r["id"]))
        items = (
            [_listed(archive, commit, pm, r, base, change, urls) for r in rows[:limit]] if compared else []
        )
        _same_pages(items)
        out[change] = {
            "findings": sum(r[change] for r in rows),
            "checks": len(rows),
            "items": items,
            "more_checks": len(rows) - len(items),
        }
    return out


QUERIES = [
    Query(
        "issue-changes",
        "What changed against the base, named: the new, fixed, gone (vanished with their page: an error "
        "status now, or no longer crawled) and regressed findings by check (most severe "
        "first, then most findings), each check with its count, its first `urls` findings (URL and detail) "
        "and how many more; `same_as` names an earlier check found on exactly the same pages. On a commit "
        "without a base nothing is listed (every finding is new).",
        issue_changes,
        {
            **_BASE,
            "urls": {
                "type": "integer",
                "default": 3,
                "minimum": 0,
                "maximum": 100,
                "description": "findings listed per check",
            },
            "limit": {
                "type": "integer",
                "default": 10,
                "minimum": 1,
                "maximum": 1000,
                "description": "checks listed per change (new, fixed, regressed)",
            },
            "priority": {
                "type": "string",
                "enum": list(PRIORITIES),
                "description": "only checks of this priority or more severe",
            },
        },
        order=22,
    ),
]
