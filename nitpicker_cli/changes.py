"""What changed against a base, named for people: the new, fixed and regressed findings by check with their URLs.

Renders an `issue-changes` answer (the terminal summary after an update, `nitpicker issues` as text): most
severe checks first, a few URLs each, then how many more and the command that lists them all.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

HEADINGS = {
    "new": "New",
    "fixed": "Fixed",
    "gone": "Gone with their pages (an error now, or no longer crawled)",
    "regressed": "Regressed (fixed before, back now)",
}
DETAIL_CHARS = 80


def _detail(item: dict[str, Any], title: str) -> str:
    """A finding's detail after its URL: a link target as "→ target", else in brackets; left out when the
    check's title already says it (the header a page lacks)."""
    detail = " ".join(str(item.get("detail") or "").split())
    if not detail or detail.lower() in title.lower():
        return ""
    if len(detail) > DETAIL_CHARS:
        detail = detail[: DETAIL_CHARS - 1] + "…"
    return f" → {detail}" if detail.startswith(("http://", "https://")) else f" ({detail})"


def _where(item: dict[str, Any]) -> str:
    urls = ", ".join(
        u["url"] + _detail(u, item["title"]) + (" [regressed]" if u.get("regressed") else "")
        for u in item["urls"]
    )
    more = f" and {item['more']} more" if item["more"] else ""
    return (urls + more) if urls else f"{item['count']} findings"


def _command(archive: str, name: str, *args: str, commit: Any = None, base: Any = None) -> str:
    where = [
        *(["--commit", str(commit)] if commit is not None else []),
        *(["--base", str(base)] if base is not None else []),
    ]
    return shlex.join(["nitpicker", "query", archive, name, *args, *where])


def change_lines(
    changes: dict[str, Any] | None,
    archive: str | Path,
    commit: int | str | None = None,
    base: int | str | None = None,
) -> list[str]:
    """The lines naming what changed, one per check (checks on the same pages share a line); nothing when
    there is no base to compare with. ``commit`` and ``base`` as the user gave them go into the commands."""
    if not changes or changes.get("base") is None or changes["base"] == changes["commit"]:
        return []
    name = str(archive)
    lines: list[str] = []
    for change in ("new", "fixed", "gone", "regressed"):
        part = changes.get(change) or {}
        if not part.get("findings"):
            continue
        lines.append(
            f"{HEADINGS[change]} since commit {changes['base']}: {part['findings']} findings of "
            f"{part['checks']} checks"
        )
        state = change if change in ("fixed", "gone") else "new"
        rows: list[dict[str, Any]] = []  # one per line: its checks, priority and where
        lines_of: dict[tuple[str, str], dict[str, Any]] = {}  # (the check whose pages, priority) → its line
        for item in part["items"]:
            # on the same pages as a check above, and nothing of its own to say about them (a link's target)
            same = None if any(_detail(u, item["title"]) for u in item["urls"]) else item["same_as"]
            key = (same or item["check"], item["priority"])
            if key in lines_of:  # the same pages at the same priority: one line
                lines_of[key]["checks"].append(item)
                continue
            row = {
                "priority": item["priority"],
                "checks": [item],
                "where": f"the same pages as {same}" if same else _where(item),
                "all": not same,
            }
            rows.append(row)
            lines_of[key] = row
        width = max((len(r["priority"]) for r in rows), default=0)
        for row in rows:
            checks, lead = row["checks"], row["checks"][0]
            if len(checks) == 1:
                count = str(lead["count"])
            elif len({c["count"] for c in checks}) == 1:
                count = f"{lead['count']} each"
            else:
                count = "/".join(str(c["count"]) for c in checks)
            ids = ", ".join(c["check"] for c in checks)
            lines.append(f"  {row['priority'].ljust(width)}  {ids} ({count}): {row['where']}")
            if lead["more"] and row["all"]:
                lines.append(
                    "  "
                    + " " * width
                    + "  all: "
                    + _command(
                        name,
                        "issue-urls",
                        "--check",
                        lead["check"],
                        "--state",
                        state,
                        commit=commit,
                        base=base,
                    )
                )
        if part.get("more_checks"):
            lines.append(
                f"  and {part['more_checks']} more checks: "
                + _command(name, "issues", "--state", change, commit=commit, base=base)
            )
    return lines
