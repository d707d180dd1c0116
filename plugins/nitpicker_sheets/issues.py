"""The Issues sheet: one row per check of the `issues` query, most severe first, new and fixed since the base."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from nitpicker_core import ROW_STYLES, Cell, Sheet

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

COUNTS = ("urls", "share", "findings", "new", "fixed", "persisting")
NOT_ANALYSED = "not analysed"
NOT_COMPARED = "not compared"
FIRST_CRAWL = "no earlier commit: every finding is new"
COMPARE_OPTION = "compare"  # the report's option naming the commit to compare with (default: the parent)


def compared(report: ReportContext) -> dict[str, Any]:
    """The ``base`` parameter of `issues` and `issue-urls`: the commit the report compares with, if one
    was given (``options["compare"]``); without it the queries compare with the previous complete commit."""
    base = report.options.get(COMPARE_OPTION)
    return {} if base in (None, "") else {"base": str(base)}


HEADER = (
    "Check",
    "Title",
    "Priority",
    "Type",
    "Category",
    "URLs",
    "% of URLs",
    "Findings",
    "New",
    "Fixed",
    "Persisting",
    "Description",
    "How to Fix",
    "Help",
    "Note",
)


def _counts(row: dict[str, Any]) -> list[Any]:
    """URLs … Persisting: numbers, or words saying why there is none (never a 0 that was not counted)."""
    if row["state"] == "not_analysed":
        return [NOT_ANALYSED] * len(COUNTS)
    if row["state"] == "error":
        return ["error"] * len(COUNTS)
    # analysed now but not on the base: the findings are counted, the comparison is not possible
    cells = [NOT_COMPARED if row[key] is None else row[key] for key in COUNTS]
    share = row.get("share")
    cells[COUNTS.index("share")] = (
        None if share is None else round(share / 100, 4)
    )  # a percent-formatted cell
    return cells


def _note(row: dict[str, Any], first_crawl: bool) -> str:
    notes = [row.get("error") or "", row.get("base_note") or ""]
    if row["state"] == "not_analysed":
        analyzers = sorted({s.split("/", 1)[0] for s in row["sources"] if "/" in s})
        notes.append(f"{', '.join(analyzers) or 'its analyzer'} did not run on this commit")
    elif first_crawl:
        notes.append(FIRST_CRAWL)
    if row.get("regressed"):
        notes.append(f"{row['regressed']} of the new ones were fixed before the base (regressed)")
    return "; ".join(n for n in notes if n)


def _check(row: dict[str, Any]) -> Any:
    """The row id; a defect found by several checks lists them (and their URL counts) as the note."""
    if len(row["sources"]) < 2:
        return row["id"]
    counts = row.get("source_counts") or {}
    lines = []
    for source in row["sources"]:
        urls = (counts.get(source) or {}).get("urls")
        lines.append(f"{source}: {NOT_ANALYSED if urls is None else f'{urls} URL(s)'}")
    return Cell(row["id"], "found by\n" + "\n".join(lines))


def _rank(row: dict[str, Any]) -> int:
    """What an auditor reads first: checks with findings (or fixed ones), then clean ones, then unknown ones."""
    if row["state"] == "ok":
        return 0 if row["findings"] or row["fixed"] else 1
    return 2 if row["state"] == "error" else 3


def issue_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    answer = report.query("issues", **compared(report))
    first_crawl = answer["base"] is None
    # sorted() is stable: within each rank the query's order holds (priority, then most findings)
    for row in sorted(answer["items"], key=_rank):
        help_ = row.get("help") or {}
        yield [
            _check(row),
            row["title"],
            row["priority"],
            row.get("type") or "issue",
            row["category"],
            *_counts(row),
            help_.get("description") or "",
            help_.get("fix") or "",
            help_.get("help_url") or "",
            _note(row, first_crawl),
        ]


def found_something(row: list[Any]) -> str | None:
    """An Issues row's colour: its priority when the check found something (never for 0 or a word)."""
    findings = row[HEADER.index("Findings")]
    priority = row[HEADER.index("Priority")]
    if isinstance(findings, bool) or not isinstance(findings, int) or findings <= 0:
        return None
    return priority if priority in ROW_STYLES else None


SHEETS = (
    Sheet(
        "Issues",
        HEADER,
        issue_rows,
        order=0,
        uses_report=True,
        freeze=(1, 1),
        links=("Help",),
        row_style=found_something,
        description="every check, most severe first: affected URLs (and their share of the internal URLs), "
        "findings, new, fixed and persisting since the previous commit; a row with findings coloured by "
        "its priority",
        number_formats={"% of URLs": "percent"},
        widths={"Check": 220, "Title": 300, "Description": 420, "How to Fix": 420, "Help": 300, "Note": 300},
    ),
)
