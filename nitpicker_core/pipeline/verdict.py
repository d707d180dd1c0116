"""Quality gates (`--fail-on violations>0`, `--fail-on new:high`): the only thing besides an approval that may
stop a run."""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker_core.checks import CHECK_ID_RE, PRIORITIES
from nitpicker_core.errors import UsageError
from nitpicker_core.query import run_query
from nitpicker_core.registries import check_registry

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader
    from nitpicker_core.plugins import NitpickerPluginManager

OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
METRICS = {
    "violations": "findings of the analyzers on the commit (`violations:NAME` counts one analyzer)",
    "analyzer-errors": "pages an analyzer failed on",
    "broken-links": "anchors whose destination, followed through redirects, answered 404",
    "crawl-errors": "in-scope URLs that failed to crawl",
}
# The exit code of a failed gate, apart from errors and bad arguments (1) and the crawl's warning outcome (2).
EXIT_GATE_FAILED = 3
_EXPR = re.compile(r"^\s*([a-z-]+)(?::([\w.-]+))?\s*(>=|<=|==|!=|>|<)\s*(\d+)\s*$")


@dataclass(frozen=True)
class Threshold:
    text: str
    metric: str
    analyzer: str | None
    op: str
    limit: int

    def fails(self, value: int) -> bool:
        return OPS[self.op](value, self.limit)


ISSUE_FORMS = (
    f"new:PRIORITY, PRIORITY, CHECK-ID or new:CHECK-ID (PRIORITY one of {', '.join(PRIORITIES)}; "
    "e.g. new:high, broken-link)"
)


@dataclass(frozen=True)
class IssueSpec:
    """A gate on the ``issues`` query: findings (only new ones with ``new:``) of a priority or worse, or of
    one check."""

    text: str
    new: bool
    priority: str | None
    check: str | None


def parse(text: str) -> Threshold | IssueSpec:
    match = _EXPR.match(text)
    if match and match.group(1) in METRICS and not (match.group(2) and match.group(1) != "violations"):
        metric, analyzer, op, limit = match.groups()
        return Threshold(text.strip(), metric, analyzer, op, int(limit))
    stripped = text.strip()
    new, rest = stripped.startswith("new:"), stripped.removeprefix("new:")
    if not any(op in text for op in OPS) and CHECK_ID_RE.match(rest):
        priority = rest if rest in PRIORITIES else None
        return IssueSpec(stripped, bool(new), priority, None if priority else rest)
    raise UsageError(
        f"--fail-on must be METRIC OP NUMBER with METRIC one of {', '.join(METRICS)} (e.g. violations>0), "
        f"or {ISSUE_FORMS}, got {text!r}"
    )


def check_known(specs: list[Threshold | IssueSpec], known: list[str]) -> None:
    """UsageError naming the closest ids for a spec whose check id is not in ``known`` (ids and defect keys)."""
    for spec in specs:
        if isinstance(spec, IssueSpec) and spec.check and spec.check not in known:
            close = difflib.get_close_matches(spec.check, known, n=3, cutoff=0.5)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise UsageError(f"--fail-on {spec.text}: no check {spec.check!r}{hint}")


def known_checks(pm: NitpickerPluginManager) -> list[str]:
    """Every id an issue spec may name: registered check ids and shared defect keys."""
    checks = list(check_registry(pm))
    return sorted({c.id for c in checks} | {c.defect for c in checks if c.defect})


def issue_failures(spec: IssueSpec, answer: dict[str, Any]) -> tuple[int, list[str]]:
    """How many findings of the ``issues`` answer ``spec`` counts, and the checks they belong to."""
    key = "new" if spec.new else "findings"
    if spec.check:  # a misspelt id must fail loudly, never pass as "no findings"
        check_known([spec], sorted({i for row in answer["items"] for i in (row["id"], *row["sources"])}))
    value, failing = 0, []
    for row in answer["items"]:
        if spec.check:
            if spec.check == row["id"]:
                counts = row
            elif spec.check in row["sources"] and row.get("source_counts"):
                counts = row["source_counts"][spec.check]
            elif spec.check in row["sources"]:
                counts = row
            else:
                continue
        elif spec.priority and PRIORITIES.index(row["priority"]) <= PRIORITIES.index(spec.priority):
            counts = row
        else:
            continue
        count = int(counts.get(key) or 0)  # None: not analysed, or nothing to compare with
        if count:
            value += count
            failing.append(spec.check or row["id"])
    return value, failing


def measure(threshold: Threshold, reader: ArchiveReader, commit: int, queries: Any) -> int:
    """The metric's value on ``commit``, read through the registered queries and the archive reader."""
    if threshold.metric == "violations":
        params = {"limit": 1, **({"analyzer": threshold.analyzer} if threshold.analyzer else {})}
        return int(run_query(queries, reader, "violations", params, commit)["total"])
    if threshold.metric == "broken-links":
        # the gate counts anchors (as documented), not the broken URLs the query groups by default
        return int(
            run_query(queries, reader, "broken-links", {"limit": 1, "group": "anchor"}, commit)["total"]
        )
    if threshold.metric == "analyzer-errors":
        return len(reader.analyzer_errors(commit))
    kinds = run_query(queries, reader, "error-kinds", {"examples": 0}, commit)["items"]
    return sum(int(k.get("internal") or 0) for k in kinds)  # failed in-scope URLs, resumed sessions included


def evaluate(
    thresholds: list[Threshold | IssueSpec],
    reader: ArchiveReader,
    commit: int,
    queries: Any,
    base: Any = None,
    answer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every threshold's value and whether it failed; issue specs name the ``failing`` checks.

    ``answer`` is the ``issues`` query's answer when the caller has it already (`nitpicker issues`).
    """
    checks = []
    for t in thresholds:
        if isinstance(t, IssueSpec):
            if answer is None:  # one issues query serves every issue spec
                answer = run_query(queries, reader, "issues", {"base": base}, commit)
            value, failing = issue_failures(t, answer)
            checks.append({"check": t.text, "value": value, "failed": value > 0, "failing": failing})
            continue
        value = measure(t, reader, commit, queries)
        checks.append({"check": t.text, "value": value, "failed": t.fails(value)})
    return {"passed": not any(c["failed"] for c in checks), "checks": checks}
