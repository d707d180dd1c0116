"""The `extract` analyzers: values named by the user (CSS, XPath or regex) pulled out of every page.

``--extract price=css:.price`` (or ``rules`` in ``[plugins.extract]``) makes a column ``price`` of the
analyzer ``extract`` (the rendered page) or ``extract-source`` (``raw:``, the HTML as sent); docs/extraction.md.
Values are stored per page like any analyzer cell, so ``nitpicker analyze`` re-extracts from a stored
commit without crawling, and ``history --field extract/price`` says when a value changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    PageInput,
    PageReport,
    Register,
    RegisterSetting,
    Rule,
    UsageError,
    Violation,
    hookimpl,
)

from .spec import Extractor, clashing, parse_all

if TYPE_CHECKING:
    from nitpicker_core import Config

PLUGIN = "extract"
DEFAULT_TIME_LIMIT = 2.0
TIMEOUT_RULE = "timeout"


def parse_settings(settings: Mapping[str, Any]) -> tuple[list[Extractor], float]:
    """(extractors, per-page regex time limit) from the settings; bad input is a one-line UsageError."""
    try:
        extractors = parse_all(list(settings.get("rules") or ()))
    except ValueError as exc:
        raise UsageError(f"extract: {exc}") from None
    limit = settings.get("time_limit")
    limit = DEFAULT_TIME_LIMIT if limit is None else float(limit)
    if not limit > 0:
        raise UsageError(f"extract: time-limit must be more than 0 seconds, not {limit}")
    return extractors, limit


class ExtractAnalyzer(Analyzer):
    """The extractors that read one kind of HTML; its columns are theirs (set by ``configure``)."""

    version = "1.0.0"
    order = 55

    def __init__(self, name: str, reads: str, label: str) -> None:
        self.name, self.reads, self.label = name, reads, label
        self.extractors: list[Extractor] = []
        self.time_limit = DEFAULT_TIME_LIMIT
        self.default = False

    @property
    def columns(self) -> tuple[Column, ...]:  # type: ignore[override]
        # the bare name: tables put the analyzer's label before it ("Custom extraction: price")
        return tuple(Column(e.name, e.name) for e in self.extractors)

    def reading(self, settings: Mapping[str, Any]) -> str:
        return self.reads  # each extractor names its HTML (raw: or not); no setting chooses it for all

    def rules(self) -> list[Rule]:
        return [
            Rule(
                TIMEOUT_RULE,
                "Extraction timed out",
                "medium",
                "A regular expression of an extractor took longer than the time limit on the page "
                "(catastrophic backtracking, or a very large page): its value is missing there.",
                type="warning",
                fix="Make the regular expression more specific (no nested repetition such as (a+)+), or "
                "raise --extract-time-limit, then analyze again.",
                i18n={
                    "ja": {
                        "title": "抽出がタイムアウトしました",
                        "description": "抽出ルールの正規表現がこのページで制限時間を超えました（破滅的バックトラック、"
                        "または非常に大きなページ）。このページの値は欠けています。",
                        "fix": "正規表現をより限定的にする（(a+)+ のような入れ子の繰り返しを避ける）か、"
                        "--extract-time-limit を引き上げてから、もう一度解析してください。",
                    }
                },
            )
        ]

    def _mine(self, settings: Mapping[str, Any]) -> tuple[list[Extractor], float]:
        extractors, limit = parse_settings(settings)
        return [e for e in extractors if e.html == self.reads], limit

    def check(self, settings: Mapping[str, Any], analyzers: Iterable[Analyzer] = ()) -> None:
        extractors, _ = parse_settings(settings)  # raises the one line
        clash = clashing(extractors, analyzers)
        if clash:
            raise UsageError(f"extract: {clash}")

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.extractors, self.time_limit = self._mine(settings)

    def each_page(self, page: PageInput) -> PageReport:
        if not self.extractors:
            self.setup(page.settings)
        report = PageReport()
        deadline = time.monotonic() + self.time_limit  # one budget for every regex on the page
        for ex in self.extractors:
            try:
                found = ex.values(page.document, page.html, max(deadline - time.monotonic(), 0.001))
            except TimeoutError:
                note = f"timed out after {self.time_limit:g} s"
                report.cells[ex.name] = Cell(None, note)
                report.violations.append(
                    Violation(TIMEOUT_RULE, f"extractor {ex.name!r}: regex:{ex.expr} {note}", "warning")
                )
                continue
            if ex.all:
                report.cells[ex.name] = found if found else Cell([], "no match")
            else:
                report.cells[ex.name] = found[0] if found else Cell(None, "no match")
        return report


_RENDERED = ExtractAnalyzer("extract", "rendered", "Custom extraction")
_SOURCE = ExtractAnalyzer("extract-source", "source", "Custom extraction (HTML as sent)")


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "rules",
        type="list",
        default=[],
        flag="extract",
        split=False,
        help="an extractor NAME=[all:][raw:]css:SELECTOR[::text|::html|@ATTR], NAME=xpath:EXPR or "
        "NAME=regex:PATTERN: a column NAME with the first match (all: every match) per page",
    )
    register(
        "time_limit",
        type="float",
        default=DEFAULT_TIME_LIMIT,
        help="seconds the extractors' regular expressions may take on one page; beyond, a finding",
    )


@hookimpl
def configure(config: Config) -> None:
    for analyzer in (_RENDERED, _SOURCE):
        try:  # the columns, for every command that shows them; bad settings fail in check, when analyzing
            analyzer.setup(config.settings_for(PLUGIN))
        except UsageError:
            analyzer.extractors = []
            analyzer.default = True  # a default run checks it and says what is wrong
        else:
            analyzer.default = bool(analyzer.extractors)  # nothing to extract: left out of default runs


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(_RENDERED)
    register(_SOURCE)
