"""The Cover sheet: what a client reads first (site, roots, commit, dates, settings, tools, totals)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_core import Sheet, read

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
        yield ["Site", "Root", root]


def _dates(row: Mapping[str, Any]) -> Iterator[list[Any]]:
    yield ["Commit", "Commit", row["id"]]
    for key, item in (
        ("kind", "Kind"),
        ("status", "Status"),
        ("started_at", "Started"),
        ("finished_at", "Crawled"),
    ):
        if row.get(key) is not None:
            yield ["Commit", item, row[key]]
    yield ["Commit", "Report written", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]


def _settings(reader: ArchiveReader, commit: int, row: Mapping[str, Any]) -> Iterator[list[Any]]:
    for key, value in sorted((row.get("options") or {}).items()):
        if key == "roots":
            continue  # under Site
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


def _totals(report: ReportContext) -> Iterator[list[Any]]:
    summary = report.query("summary")
    totals = summary["totals"]  # the counts every front door shows, by their one definition
    for key, item in (
        ("pages", "Pages"),
        ("internal_urls", "Internal URLs"),
        ("external_urls", "External URLs"),
        *((c, c) for c in CLASSES),
        ("failed", "Failed"),
        ("skipped", "Skipped"),
    ):
        yield ["Totals", item, totals[key]]
    checks = [r for r in report.query("issues")["items"] if r["state"] == "ok"]
    yield ["Totals", "Checks with findings", sum(1 for r in checks if r["findings"])]
    for key, item in (("findings", "Findings"), ("new", "New"), ("fixed", "Fixed")):
        yield ["Totals", item, sum(r[key] or 0 for r in checks)]
    for key, item in DEFINED:
        yield ["What the numbers mean", item, summary["definitions"][key]]


# The counts the Cover explains, once for the whole report (the Issues sheet's "% of URLs" included).
DEFINED = (
    ("pages", "Pages"),
    ("internal_urls", "Internal URLs"),
    ("external_urls", "External URLs"),
    ("status_class", "2xx, 3xx, 4xx, 5xx"),
    ("failed", "Failed"),
    ("skipped", "Skipped"),
    ("findings", "Findings"),
    ("share", "% of URLs"),
)


def cover_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    row = _commit(reader, commit)
    yield from _site(list(reader.info().get("roots") or []))
    yield from _dates(row)
    yield from _settings(reader, commit, row)
    yield from _tools(row)
    yield from _totals(report)


SHEETS = (
    Sheet(
        "Cover",
        ("Section", "Item", "Value"),
        cover_rows,
        order=-10,
        uses_report=True,
        description="site, roots, commit and dates, settings, tool versions and totals: what the report is of",
        widths={"Section": 160, "Item": 200, "Value": 520},
    ),
)
