"""The findings CI outputs report: each issues row's current findings with state and line:col, and the gate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, check_registry, run_query
from nitpicker_core.pipeline import verdict

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, NitpickerPluginManager

# What fails in JUnit without --fail-on: what SARIF calls an error, findings of priority high or worse.
DEFAULT_GATE = "high"
_PAGE = 10000  # issue-urls' largest page


@dataclass
class Item:
    """One current finding of an issues row, as the CI formats show it."""

    check: str  # the check that found it: the row's id, or one source of a merged defect
    url: str
    detail: str
    state: str  # new, persisting or regressed
    fingerprint: str
    line: int | None = None
    col: int | None = None
    html: str | None = None  # the stored HTML the line is in (an element's: "rendered" or "sent")

    def where(self) -> str:
        return f"{self.url}:{self.line}:{self.col}" if self.line else self.url


@dataclass
class Findings:
    """The issues answer, the current findings of each row with findings, and each check's type."""

    answer: dict[str, Any]
    items: dict[str, list[Item]]
    types: dict[str, str]

    @property
    def compared(self) -> bool:
        """Whether there was a base: only then are new, persisting and regressed told apart."""
        return self.answer["base"] is not None

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [row for row in self.answer["items"] if self.items.get(row["id"])]

    def type_of(self, row: dict[str, Any]) -> str:
        return str(
            row.get("type") or self.types.get(row["id"]) or self.types.get(row["sources"][0]) or "issue"
        )


def collect(
    pm: NitpickerPluginManager,
    reader: ArchiveReader,
    queries: Any,
    answer: dict[str, Any],
    base: str | None = None,
) -> Findings:
    """Every current finding of the rows of ``answer`` (the issues query's), read through issue-urls."""
    commit = answer["commit"]
    items: dict[str, list[Item]] = {}
    for row in answer["items"]:
        if row["state"] != "ok" or not row["findings"]:
            continue
        found: list[Item] = []
        offset: int | None = 0
        while offset is not None:
            page = run_query(
                queries,
                reader,
                "issue-urls",
                {"check": row["id"], "base": base, "limit": _PAGE, "offset": offset},
                commit,
            )
            for entry in page["items"]:
                if entry["state"] in ("fixed", "gone"):  # no longer on the site: nothing to report
                    continue
                # link checks' rows carry their anchor's line:col (issue-urls), element checks' the element's
                line, col = entry.get("line"), entry.get("col")
                found.append(
                    Item(
                        entry["check"],
                        entry["url"],
                        entry["detail"],
                        "regressed" if entry.get("regressed") else entry["state"],
                        entry["fingerprint"],
                        line,
                        col,
                        entry.get("html"),
                    )
                )
            offset = page.get("next_offset")
        items[row["id"]] = found
    return Findings(answer, items, {check.id: check.type for check in check_registry(pm)})


def gate(fail_on: list[str] | tuple[str, ...]) -> list[verdict.IssueSpec]:
    """The issue specs deciding which findings fail: those of --fail-on, else ``DEFAULT_GATE``."""
    specs = [verdict.parse(text) for text in fail_on] or [verdict.parse(DEFAULT_GATE)]
    return [spec for spec in specs if isinstance(spec, verdict.IssueSpec)]


def gated(specs: list[verdict.IssueSpec], row: dict[str, Any], item: Item) -> bool:
    """Whether a finding is one a spec counts (as `verdict.issue_failures` counts its row)."""
    for spec in specs:
        if spec.new and item.state == "persisting":
            continue
        if spec.check and spec.check not in (row["id"], item.check):
            continue
        if spec.priority and PRIORITIES.index(row["priority"]) > PRIORITIES.index(spec.priority):
            continue
        return True
    return False
