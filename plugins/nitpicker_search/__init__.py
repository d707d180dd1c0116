"""The `search` analyzer: counts keywords (plain or /regex/flags) in the visible text of a scope per page."""

from __future__ import annotations

import logging
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
    UsageError,
    hookimpl,
)

from .keywords import Keyword, parse_keywords, visible_text

if TYPE_CHECKING:
    from nitpicker_core import Config

PLUGIN = "search"
DEFAULT_SCOPE = "body"
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


_ANALYZER = SearchAnalyzer()


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


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(_ANALYZER)
