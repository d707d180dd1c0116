"""Quality gates (`--fail-on violations>0`): the only thing besides an approval that may stop a run."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nitpicker_core.errors import UsageError

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


def parse(text: str) -> Threshold:
    match = _EXPR.match(text)
    if not match or match.group(1) not in METRICS or (match.group(2) and match.group(1) != "violations"):
        raise UsageError(
            f"--fail-on must be METRIC OP NUMBER with METRIC one of {', '.join(METRICS)} "
            f"(e.g. violations>0, broken-links>10), got {text!r}"
        )
    metric, analyzer, op, limit = match.groups()
    return Threshold(text.strip(), metric, analyzer, op, int(limit))


def measure(threshold: Threshold, reader: Any, commit: int, queries: Any) -> int:
    """The metric's value on ``commit``, read through the registered queries and the archive reader."""
    from nitpicker_core.query import run_query

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


def evaluate(thresholds: list[Threshold], reader: Any, commit: int, queries: Any) -> dict[str, Any]:
    checks = []
    for t in thresholds:
        value = measure(t, reader, commit, queries)
        checks.append({"check": t.text, "value": value, "failed": t.fails(value)})
    return {"passed": not any(c["failed"] for c in checks), "checks": checks}
