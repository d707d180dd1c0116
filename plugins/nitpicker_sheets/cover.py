"""The Cover (site, scope, date, commit, totals, changes) and the Appendix (settings, tool versions) sheets."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_core import PRIORITIES, Cell, Sheet, read

from .issues import compared

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

# The environment manifest's keys a reader knows by these names, in this order (the rest follow as stored).
TOOLS = {
    "nitpicker": "nitpicker",
    "chromium": "Chromium",
    "playwright": "Playwright",
    "python": "Python",
    "os": "Operating system",
}
CLASSES = ("2xx", "3xx", "4xx", "5xx")


def _value(value: Any) -> Any:
    """A cell value: numbers and text as they are, lists and mappings as compact JSON."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _commit(reader: ArchiveReader, commit: int) -> dict[str, Any]:
    return next((c for c in reader.commits() if c["id"] == commit), {"id": commit})


def _site(roots: list[str]) -> Iterator[list[Any]]:
    hosts = list(dict.fromkeys(urlsplit(r).netloc for r in roots))
    yield ["Site", "Site", ", ".join(hosts)]
    for root in roots:  # a row each: a filter finds them, and no cell needs wrapping to show them all
        yield ["Site", "Start URL", root]


def _report(row: Mapping[str, Any], answer: Mapping[str, Any]) -> Iterator[list[Any]]:
    yield ["Report", "Date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]
    yield ["Report", "Commit", row["id"]]
    if row.get("finished_at") is not None:
        yield ["Report", "Crawled", row["finished_at"]]
    base = answer.get("base")
    yield ["Report", "Compared with", NOTHING_COMPARED if base is None or base == row["id"] else base]


def _commit_details(row: Mapping[str, Any]) -> Iterator[list[Any]]:
    for key, item in (
        ("kind", "Kind"),
        ("status", "Status"),
        ("started_at", "Started"),
        ("finished_at", "Crawled"),
    ):
        if row.get(key) is not None:
            yield ["Commit", item, row[key]]


def _settings(reader: ArchiveReader, commit: int, row: Mapping[str, Any]) -> Iterator[list[Any]]:
    for key, value in sorted((row.get("options") or {}).items()):
        if key == "roots":
            continue  # on the Cover, as the start URLs
        yield ["Settings", key, _value(value)]
    for analyzer, settings in read.analyzer_settings(reader, commit):
        yield ["Analyzer settings", analyzer, settings or "{}"]


def _tools(row: Mapping[str, Any]) -> Iterator[list[Any]]:
    env = dict(row.get("environment") or {})
    for internal in ("plugins", "state_hash", "later_runs"):
        # plugins: dozens of entry points (`nitpicker log` lists them); the rest says nothing to a reader
        env.pop(internal, None)
    for key, name in TOOLS.items():
        if env.get(key) is not None:
            yield ["Tools", name, _value(env.pop(key))]
    for key, value in sorted(env.items()):
        if value is not None:
            yield ["Tools", key, _value(value)]
    for run in row.get("analyzers") or ():
        rules = f" ({run['rule_set']})" if run.get("rule_set") else ""
        yield ["Tools", run["analyzer"], f"{run['version']}{rules}, {run['status']}"]


def _totals(report: ReportContext, answer: Mapping[str, Any]) -> Iterator[list[Any]]:
    totals = report.query("summary")["totals"]  # the counts every front door shows, by their one definition
    for key, item in (
        ("pages", "Pages"),
        ("internal_urls", "Internal URLs"),
        ("external_urls", "External URLs"),
        *((c, c) for c in CLASSES),
        ("failed", "Failed"),
        ("skipped", "Skipped"),
    ):
        yield ["Totals", item, totals[key]]
    # the server refused the crawler (401, 403, 429, 999, a bot challenge): apart from the broken, by status
    yield ["Totals", "Blocked", Cell(totals["blocked"], blocked_note(totals))]
    checks = [r for r in answer["items"] if r["state"] == "ok"]
    yield ["Totals", "Checks with findings", sum(1 for r in checks if r["findings"])]
    yield ["Totals", "Findings", sum(r["findings"] or 0 for r in checks)]
    for priority in PRIORITIES:
        found = [r for r in checks if r["priority"] == priority and r["findings"]]
        yield ["Findings by priority", priority, sum(r["findings"] for r in found)]
    for priority in PRIORITIES:
        found = [r for r in checks if r["priority"] == priority and r["findings"]]
        yield ["Checks with findings by priority", priority, len(found)]


def blocked_note(totals: Mapping[str, Any]) -> str:
    """The blocked URLs by status and side, as the crawl's summary says them: "1 × 403, 2 × 429 (3 internal)"."""
    if not totals.get("blocked"):
        return ""
    by = ", ".join(f"{row['count']} × {row['status']}" for row in totals.get("blocked_by_status") or [])
    sides = ", ".join(
        f"{totals[side]['blocked']} {side}"
        for side in ("internal", "external")
        if totals[side].get("blocked")
    )
    return f"{by} ({sides}): the server refused the crawler, not a broken page"


def _changes(answer: Mapping[str, Any]) -> Iterator[list[Any]]:
    """New, fixed, regressed and persisting findings against the compared commit (its checks only)."""
    base = answer.get("base")
    if base is None or base == answer.get("commit"):
        yield ["Changes", "Compared with", NOTHING_COMPARED]
        return
    section = f"Changes since commit {base}"
    compared = [r for r in answer["items"] if r["state"] == "ok" and r["new"] is not None]
    for key, item in (
        ("new", "New"),
        ("fixed", "Fixed"),
        ("regressed", "Regressed"),
        ("persisting", "Persisting"),
    ):
        yield [section, item, sum(r[key] or 0 for r in compared)]
    for key, item in (("new", "Checks with new findings"), ("fixed", "Checks with fixed findings")):
        yield [section, item, sum(1 for r in compared if r[key])]
    skipped = sorted(
        r["id"] for r in answer["items"] if r["state"] == "ok" and r["new"] is None and r["findings"]
    )
    if skipped:
        yield [section, "Not compared", Cell(len(skipped), "\n".join(skipped))]


# The counts the Appendix explains, once for the whole report (the Issues sheet's "% of URLs" included).
DEFINED = (
    ("pages", "Pages"),
    ("internal_urls", "Internal URLs"),
    ("external_urls", "External URLs"),
    ("status_class", "2xx, 3xx, 4xx, 5xx"),
    ("failed", "Failed"),
    ("blocked", "Blocked"),
    ("skipped", "Skipped"),
    ("findings", "Findings"),
    ("share", "% of URLs"),
)
NOTHING_COMPARED = "nothing: no earlier commit"


def cover_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    """What a client reads first: the site and its scope, the date and commit, totals and changes."""
    answer = report.query("issues", **compared(report))
    yield from _site(list(reader.info().get("roots") or []))
    yield from _report(_commit(reader, commit), answer)
    yield from _totals(report, answer)
    yield from _changes(answer)


def appendix_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    """The details behind the Cover: the commit, the crawl's and analyzers' settings, tools, definitions."""
    row = _commit(reader, commit)
    yield from _commit_details(row)
    yield from _settings(reader, commit, row)
    yield from _tools(row)
    definitions = report.query("summary")["definitions"]
    for key, item in DEFINED:
        yield ["What the numbers mean", item, definitions[key]]


SHEETS = (
    Sheet(
        "Cover",
        ("Section", "Item", "Value"),
        cover_rows,
        order=-10,
        uses_report=True,
        description="site, start URLs, date, commit, totals by priority and changes since the compared commit",
        widths={"Section": 220, "Item": 200, "Value": 520},
    ),
    Sheet(
        "Appendix",
        ("Section", "Item", "Value"),
        appendix_rows,
        order=10_000,
        uses_report=True,
        description="the commit, the crawl's and analyzers' settings, tool versions, what the numbers mean",
        widths={"Section": 160, "Item": 200, "Value": 520},
    ),
)
