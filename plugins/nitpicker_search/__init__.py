"""The `search` analyzer: counts keywords (plain or /regex/flags) in the visible text of a scope per page.

The `custom-search` analyzer: named patterns that pages must contain or must not, each a check of the
catalogue with the priority the user gives (custom.py; docs/extraction.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
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

from .custom import Search, parse_searches
from .keywords import Keyword, parse_keywords, visible_text

if TYPE_CHECKING:
    from nitpicker_core import Config

PLUGIN = "search"
DEFAULT_SCOPE = "body"
DEFAULT_TIME_LIMIT = 2.0
TIMEOUT_RULE = "timeout"
TOTAL = Column("total", "Search total")


def parse_settings(settings: Mapping[str, Any]) -> tuple[list[Keyword], str, Any]:
    """(keywords, scope, compiled selector) from the settings; bad input is a one-line UsageError."""
    from lxml.cssselect import CSSSelector, SelectorError

    try:
        keywords = parse_keywords(list(settings.get("keywords") or ()))
    except ValueError as exc:
        raise UsageError(f"search: {exc}") from None
    scope = (settings.get("scope") or DEFAULT_SCOPE).strip() or DEFAULT_SCOPE
    try:
        selector = CSSSelector(scope)
    except (SelectorError, ValueError) as exc:
        raise UsageError(f"search: invalid scope selector {scope!r}: {exc}") from None
    return keywords, scope, selector


class SearchAnalyzer(Analyzer):
    """Its columns depend on the settings: ``configure`` (in every process) sets them before they are read.

    Bad settings leave it without columns there (other commands must not fail over them); ``check``, which
    the engine calls before an analyze run, reports them.
    """

    name = "search"
    label = "Keyword search"
    version = "1.0.0"
    order = 50
    # The rendered DOM: keywords count in the text visitors (and rendering search engines) see.
    reads = "rendered"

    def __init__(self) -> None:
        self.keywords: list[Keyword] = []
        self.scope = DEFAULT_SCOPE
        self.selector: Any = None
        self._said = False

    # The base declares a plain attribute; here the columns follow the configured keywords.
    @property
    def columns(self) -> tuple[Column, ...]:  # type: ignore[override]
        if not self.keywords:
            return ()
        return (*(Column(k.key, k.label) for k in self.keywords), TOTAL)

    def check(self, settings: Mapping[str, Any]) -> None:
        if not parse_settings(settings)[0] and not self._said:  # chosen by name or --all: say why it is empty
            self._said = True  # once a run: the engine checks again before analyzing
            logging.getLogger("nitpicker").warning(
                "search: no keywords to count: give --search-keywords WORD or keywords in [plugins.search]"
            )

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.keywords, self.scope, self.selector = parse_settings(settings)

    def each_page(self, page: PageInput) -> PageReport:
        if self.selector is None:  # called without setup (e.g. from a test)
            self.setup(page.settings)
        if not self.keywords:
            return PageReport()
        matched = self.selector(page.document)
        if not matched:
            note = f"scope {self.scope!r} not found"
            cells: dict[str, Any] = {k.key: Cell(None, note) for k in self.keywords}
            cells[TOTAL.key] = Cell(None, note)
            return PageReport(cells)
        # a match inside another match is already part of that one's text
        chosen = set(matched)
        roots = [el for el in matched if not any(a in chosen for a in el.iterancestors())]
        text = "\n".join(visible_text(el) for el in roots)
        counts = {k.key: k.count(text) for k in self.keywords}
        return PageReport({**counts, TOTAL.key: sum(counts.values())})


def _scoped_text(selector: Any, document: Any) -> str | None:
    """The visible text of what ``selector`` matches (a match inside another counted once); None: no match."""
    matched = selector(document)
    if not matched:
        return None
    chosen = set(matched)
    roots = [el for el in matched if not any(a in chosen for a in el.iterancestors())]
    return "\n".join(visible_text(el) for el in roots)


def parse_custom(settings: Mapping[str, Any]) -> tuple[list[Search], float]:
    """(searches, per-page time limit) from the settings; bad input is a one-line UsageError."""
    try:
        searches = parse_searches(settings)
    except ValueError as exc:
        raise UsageError(f"search: {exc}") from None
    limit = settings.get("time-limit")
    limit = DEFAULT_TIME_LIMIT if limit is None else float(limit)
    if not limit > 0:
        raise UsageError(f"search: time-limit must be more than 0 seconds, not {limit}")
    return searches, limit


class CustomSearchAnalyzer(Analyzer):
    """One check per named search, a column per search with its match count (set by ``configure``)."""

    name = "custom-search"
    label = "Custom search"
    version = "1.0.0"
    order = 51
    reads = "rendered"

    def __init__(self) -> None:
        self.searches: list[Search] = []
        self.time_limit = DEFAULT_TIME_LIMIT
        self.scope: Any = None
        self.default = False

    @property
    def columns(self) -> tuple[Column, ...]:  # type: ignore[override]
        return tuple(Column(s.name, f"Custom search: {s.name}") for s in self.searches)

    def reading(self, settings: Mapping[str, Any]) -> str:
        return self.reads

    def rules(self) -> list[Rule]:
        rules = [
            Rule(
                s.name,
                f"{'Contains' if s.mode == 'contains' else 'Missing'} {s.keyword.text!r}",
                s.priority,
                f"Pages whose text {'contains' if s.mode == 'contains' else 'lacks'} {s.keyword.text!r}"
                + (f" inside {s.within!r}" if s.within else "")
                + f" (--search-{s.mode}).",
                fix="Change the pages named, or the search if they are right.",
                i18n={
                    "ja": {
                        "title": f"{s.keyword.text!r} を{'含む' if s.mode == 'contains' else '含まない'}ページ",
                        "description": f"本文に {s.keyword.text!r} を"
                        f"{'含む' if s.mode == 'contains' else '含まない'}ページです（カスタム検索）。",
                        "fix": "指摘されたページを修正するか、ページが正しければ検索条件を見直してください。",
                    }
                },
            )
            for s in self.searches
        ]
        rules.append(
            Rule(
                TIMEOUT_RULE,
                "Custom search timed out",
                "medium",
                "A regular expression of a custom search took longer than the time limit on the page "
                "(catastrophic backtracking, or a very large page): the page was not searched for it.",
                type="warning",
                fix="Make the regular expression more specific (no nested repetition such as (a+)+), or "
                "raise --search-time-limit, then analyze again.",
                i18n={
                    "ja": {
                        "title": "カスタム検索がタイムアウトしました",
                        "description": "カスタム検索の正規表現がこのページで制限時間を超えました（破滅的バックトラック、"
                        "または非常に大きなページ）。このページは検索されていません。",
                        "fix": "正規表現をより限定的にする（(a+)+ のような入れ子の繰り返しを避ける）か、"
                        "--search-time-limit を引き上げてから、もう一度解析してください。",
                    }
                },
            )
        )
        return rules

    def check(self, settings: Mapping[str, Any]) -> None:
        parse_custom(settings)

    def setup(self, settings: Mapping[str, Any]) -> None:
        from lxml.cssselect import CSSSelector, SelectorError

        self.searches, self.time_limit = parse_custom(settings)
        scope = (settings.get("scope") or DEFAULT_SCOPE).strip() or DEFAULT_SCOPE
        try:
            self.scope = CSSSelector(scope)
        except (SelectorError, ValueError, SyntaxError) as exc:  # the message the search analyzer gives
            raise UsageError(f"search: invalid scope selector {scope!r}: {exc}") from None

    def each_page(self, page: PageInput) -> PageReport:
        if self.scope is None:
            self.setup(page.settings)
        report = PageReport()
        texts: dict[str, str | None] = {}
        deadline = time.monotonic() + self.time_limit  # one budget for every search on the page
        for s in self.searches:
            if s.within not in texts:
                texts[s.within] = _scoped_text(s.selector if s.within else self.scope, page.document)
            text = texts[s.within]
            if text is None:
                report.cells[s.name] = Cell(None, f"{s.within or 'scope'!r} not found")
                if s.mode == "missing":
                    report.violations.append(Violation(s.name, f"no {s.within!r} on the page", "warning"))
                continue
            try:
                count = s.keyword.count(text, max(deadline - time.monotonic(), 0.001))
            except TimeoutError:
                note = f"timed out after {self.time_limit:g} s"
                report.cells[s.name] = Cell(None, note)
                report.violations.append(
                    Violation(TIMEOUT_RULE, f"search {s.name!r}: {s.keyword.text} {note}", "warning")
                )
                continue
            report.cells[s.name] = count
            if s.mode == "contains" and count:
                report.violations.append(
                    Violation(s.name, f"{s.keyword.text!r} found {count} times", "warning")
                )
            elif s.mode == "missing" and not count:
                report.violations.append(Violation(s.name, f"{s.keyword.text!r} not found", "warning"))
        return report


_ANALYZER = SearchAnalyzer()
_CUSTOM = CustomSearchAnalyzer()


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "keywords",
        type="list",
        default=[],
        help="keywords to count: plain text (case-insensitive) or /regex/flags (flags i, m, s, x)",
    )
    register(
        "scope",
        type="str",
        default=DEFAULT_SCOPE,
        help="CSS selector of the part of the page searched (visible text only, attributes not counted)",
    )
    register(
        "contains",
        type="list",
        default=[],
        split=False,
        help="a check NAME=PATTERN (text, or /regex/flags) finding the pages whose text contains PATTERN",
    )
    register(
        "missing",
        type="list",
        default=[],
        split=False,
        help="a check NAME=PATTERN (text, or /regex/flags) finding the pages whose text lacks PATTERN",
    )
    register(
        "priority",
        type="list",
        default=[],
        help="NAME=PRIORITY of a --search-contains/--search-missing check: critical, high, medium (the "
        "default), low or info",
    )
    register(
        "within",
        type="list",
        default=[],
        split=False,
        help="NAME=SELECTOR: a custom search looks only inside the elements the CSS selector matches",
    )
    register(
        "time-limit",
        type="float",
        default=DEFAULT_TIME_LIMIT,
        help="seconds the custom searches may take on one page; beyond, a finding on the page",
    )


@hookimpl
def configure(config: Config) -> None:
    _ANALYZER._said = False  # a new run (in this process or not) says again why it counts nothing
    try:  # the columns, for every command that shows them; bad settings fail in check, when analyzing
        _ANALYZER.setup(config.settings_for(PLUGIN))
        # without keywords it would count nothing: a run of the default analyzers leaves it out
        _ANALYZER.default = bool(_ANALYZER.keywords)
    except UsageError:
        _ANALYZER.keywords, _ANALYZER.scope, _ANALYZER.selector = [], DEFAULT_SCOPE, None
        _ANALYZER.default = True  # bad settings: a default run checks it, and says what is wrong
    try:
        _CUSTOM.setup(config.settings_for(PLUGIN))
        _CUSTOM.default = bool(_CUSTOM.searches)  # no search named: left out of default runs
    except UsageError:
        _CUSTOM.searches, _CUSTOM.scope, _CUSTOM.default = [], None, True


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(_ANALYZER)
    register(_CUSTOM)
