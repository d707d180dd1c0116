"""The Issue URLs sheet: every finding of every check with findings, one row each, from `issue-urls`.

Complete lists: each check's findings stream through the query a batch at a time (memory holds a batch per
state, never a check's whole list). Checks come most severe first, then by id; a check's rows by URL.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, Sheet

from .cells import NO_TEXT
from .issues import NOT_COMPARED, compared

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

HEADER = (
    "Check",
    "Title",
    "Priority",
    "Type",
    "State",
    "URL",
    "Detail",
    "Source Page",
    "Anchor Text",
)
# the commit's own findings, as `issues` counts them; each state is one stream in URL order, merged
STATES = ("new", "persisting")


def reported_checks(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `issues` rows whose findings the sheet lists: analysed, with findings; by priority, then id."""
    rows = [r for r in answer["items"] if r["state"] == "ok" and r["findings"]]
    return sorted(rows, key=lambda r: (PRIORITIES.index(r["priority"]), r["id"]))


def state_of(item: Mapping[str, Any], comparable: bool) -> str:
    """new, regressed (new again: fixed before the base) or persisting; "not compared" when the check's
    analyzer did not run on the base (its findings then come back as persisting, which says nothing)."""
    if not comparable:
        return NOT_COMPARED
    if item["state"] == "new" and item.get("regressed"):
        return "regressed"
    return str(item["state"])


def finding_cells(item: Mapping[str, Any]) -> list[Any]:
    """URL, Detail, Source Page, Anchor Text. A link finding is on the page carrying the link: its URL is
    the link's target, its detail the target's answer (``404``, ``301 → 404``, ``dns``), the page and the
    anchor's text beside them. Other findings: their URL and detail, the last two cells empty."""
    if "target" not in item:  # issue-urls completes link checks' rows only
        return [item["url"], item["detail"], "", ""]
    text = item.get("text")
    anchor = "" if text is None else text if text.strip() else NO_TEXT
    return [item["target"] or item["detail"], item.get("answer") or item["detail"], item["url"], anchor]


def _findings(report: ReportContext, check: str, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every current finding of one check in (URL, detail) order: its new and persisting ones merged."""
    # the sheet shows no line: no page is read for one
    streams = [report.stream("issue-urls", check=check, state=state, lines=False, **base) for state in STATES]
    return heapq.merge(*streams, key=lambda item: (item["url"], item["detail"]))


def issue_url_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    base = compared(report)
    answer = report.query("issues", **base)
    for row in reported_checks(answer):
        # analysed now but not on the base: `issues` shows no new/fixed; each finding is "not compared"
        comparable = row["new"] is not None or answer["base"] is None
        for item in _findings(report, row["id"], base):
            yield [
                row["id"],
                row["title"],
                row["priority"],
                row.get("type") or "issue",
                state_of(item, comparable),
                *finding_cells(item),
            ]


SHEETS = (
    Sheet(
        "Issue URLs",
        HEADER,
        issue_url_rows,
        order=1,
        uses_report=True,
        freeze=(1, 1),
        links=("URL", "Source Page"),
        description="every finding of every check with findings, with its state since the compared commit: "
        "the complete lists behind the Issues sheet's counts",
        widths={
            "Check": 220,
            "Title": 260,
            "URL": 380,
            "Detail": 260,
            "Source Page": 320,
            "Anchor Text": 200,
        },
    ),
)
