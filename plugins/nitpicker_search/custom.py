"""The `custom-search` plugin: ``--search-contains NAME=PATTERN`` / ``--search-missing NAME=PATTERN`` as checks.

A plugin of its own (entry point ``custom-search``, settings ``[plugins.custom-search]``) in the search
package, whose keyword parsing it shares: the `search` analyzer's settings, and so its cached results, stay
its own.

Each named pattern (text or /regex/flags, parsed as the keyword counter parses keywords) is a check
``custom-search/NAME`` of the priority ``--search-priority NAME=PRIORITY`` gives (medium by default): a
``contains`` check finds the pages whose text has the pattern, a ``missing`` one the pages whose text lacks it,
in the page's body or the selector ``--search-within NAME=SELECTOR`` names.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
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

from .keywords import Keyword, parse_keyword, visible_text

if TYPE_CHECKING:
    from nitpicker_core import Config

PLUGIN = "custom-search"
BODY = "body"
DEFAULT_TIME_LIMIT = 2.0
TIMEOUT_RULE = "timeout"

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # a check id's second part
PRIORITIES = ("critical", "high", "medium", "low", "info")
DEFAULT_PRIORITY = "medium"
RESERVED = frozenset({"other", "skipped", "timeout"})  # the checks this analyzer has anyway


@dataclass(frozen=True)
class Search:
    """One named search: the pattern, whether a page is at fault when it ``contains`` it or misses it."""

    name: str
    mode: str  # "contains" or "missing"
    keyword: Keyword
    priority: str = DEFAULT_PRIORITY
    within: str = ""  # a CSS selector, "" for the search analyzer's scope
    selector: Any = None


def _pairs(items: Any, what: str) -> list[tuple[str, str]]:
    out = []
    for item in items or ():
        name, sep, value = str(item).partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise ValueError(f"{what} {item!r}: expected NAME=VALUE")
        out.append((name, value.strip() if what != "pattern" else value))
    return out


def parse_searches(settings: Mapping[str, Any]) -> list[Search]:
    """The named searches of the settings, in order; a one-line ``ValueError`` naming the search otherwise."""
    from lxml.cssselect import CSSSelector, SelectorError

    found: dict[str, tuple[str, Keyword]] = {}
    for mode in ("contains", "missing"):
        for name, pattern in _pairs(settings.get(mode), f"search-{mode}"):
            if not NAME.match(name) or name in RESERVED:
                raise ValueError(f"search {name!r}: a name is lower-case letters, digits and single hyphens")
            if name in found:
                raise ValueError(f"search {name!r}: named twice")
            try:
                found[name] = (mode, parse_keyword(pattern))
            except ValueError as exc:
                raise ValueError(f"search {name!r}: {exc}") from None
    priorities = dict(_pairs(settings.get("priority"), "search-priority"))
    within = dict(_pairs(settings.get("within"), "search-within"))
    for option, names in (("priority", priorities), ("within", within)):
        unknown = sorted(set(names) - set(found))
        if unknown:
            raise ValueError(f"search {unknown[0]!r}: --search-{option} names no --search-contains/-missing")
    out = []
    for name, (mode, keyword) in found.items():
        priority = priorities.get(name, DEFAULT_PRIORITY).lower()
        if priority not in PRIORITIES:
            raise ValueError(f"search {name!r}: priority {priority!r} is not one of {', '.join(PRIORITIES)}")
        scope, selector = within.get(name, ""), None
        if scope:
            try:
                selector = CSSSelector(scope)
            except (SelectorError, ValueError, SyntaxError) as exc:
                raise ValueError(f"search {name!r}: invalid selector {scope!r}: {exc}") from None
        out.append(Search(name, mode, keyword, priority, scope, selector))
    return out


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
        raise UsageError(f"custom-search: {exc}") from None
    limit = settings.get("time_limit")
    limit = DEFAULT_TIME_LIMIT if limit is None else float(limit)
    if not limit > 0:
        raise UsageError(f"custom-search: time_limit must be more than 0 seconds, not {limit}")
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
        from lxml.cssselect import CSSSelector

        self.searches, self.time_limit = parse_custom(settings)
        self.scope = CSSSelector(BODY)

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
                report.cells[s.name] = Cell(None, f"{s.within or BODY!r} not found")
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


_CUSTOM = CustomSearchAnalyzer()


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "contains",
        type="list",
        default=[],
        flag="search-contains",
        split=False,
        help="a check NAME=PATTERN (text, or /regex/flags) finding the pages whose text contains PATTERN",
    )
    register(
        "missing",
        type="list",
        default=[],
        flag="search-missing",
        split=False,
        help="a check NAME=PATTERN (text, or /regex/flags) finding the pages whose text lacks PATTERN",
    )
    register(
        "priority",
        type="list",
        default=[],
        flag="search-priority",
        help="NAME=PRIORITY of a --search-contains/--search-missing check: critical, high, medium (the "
        "default), low or info",
    )
    register(
        "within",
        type="list",
        default=[],
        flag="search-within",
        split=False,
        help="NAME=SELECTOR: a custom search looks only inside the elements the CSS selector matches",
    )
    register(
        "time_limit",
        type="float",
        default=DEFAULT_TIME_LIMIT,
        flag="search-time-limit",
        help="seconds the custom searches may take on one page; beyond, a finding on the page",
    )


@hookimpl
def configure(config: Config) -> None:
    try:  # the columns and checks, for every command that shows them; bad settings fail in check
        _CUSTOM.setup(config.settings_for(PLUGIN))
        _CUSTOM.default = bool(_CUSTOM.searches)  # no search named: left out of default runs
    except UsageError:
        _CUSTOM.searches, _CUSTOM.scope, _CUSTOM.default = [], None, True


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(_CUSTOM)
