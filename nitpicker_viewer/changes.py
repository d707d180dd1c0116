"""What changed against the base, named, for the Issues overview: an `issue-changes` answer with its links."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nitpicker_viewer.app import query

CHANGES = ("new", "fixed", "regressed")
URLS_PER_CHECK = 3  # the list of each check links to the rest
CHECKS_PER_CHANGE = 10  # and "and N more checks" to the overview showing them all


def named_changes(base: str | None, priority: str | None, link: Callable[..., str]) -> dict[str, Any] | None:
    """The new, fixed and regressed findings by check with their first URLs; each check links to its list
    filtered by state, each "and N more checks" to the overview showing them. None without a base."""
    answer = query(
        "issue-changes", base=base, priority=priority, urls=URLS_PER_CHECK, limit=CHECKS_PER_CHANGE
    )
    if answer["base"] is None or answer["base"] == answer["commit"]:
        return None
    for change in CHANGES:
        part = answer[change]
        state = "fixed" if change == "fixed" else "new"  # regressed findings are new ones that came back
        for item in part["items"]:
            item["href"] = link("issues.detail", check=item["check"], state=state)
            for found in item["urls"]:
                detail = " ".join(str(found["detail"] or "").split())
                # the header a page lacks is in the check's title already
                found["note"] = "" if detail.lower() in item["title"].lower() else detail
                found["target"] = detail.startswith(
                    ("http://", "https://")
                )  # the link's target: "page → target"
            # "on the same pages as" an earlier check only when its own findings have nothing more to say
            item["same_pages"] = None if any(found["note"] for found in item["urls"]) else item["same_as"]
        part["more_href"] = link("issues.overview", show=change, priority=priority)
    return answer
