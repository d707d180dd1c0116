"""The `markup` analyzer: html5lib parse errors and structural HTML rules on each rendered page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from nitpicker_core import Analyzer, Cell, Column, PageInput, PageReport, UsageError, Violation, hookimpl

from .parse import ErrorCollector
from .rules import check, start_tag

# rule id -> (severity, what it checks); every rule can be switched off with `disable`.
RULES: dict[str, tuple[str, str]] = {
    "parse-error": ("error", "an HTML parse error reported by html5lib (WHATWG parsing algorithm)"),
    "invalid-nesting": ("error", "a misnested or misplaced tag the parser had to repair"),
    "duplicate-id": ("error", "an id already used by an earlier element"),
    "img-alt-missing": ("error", "an <img> or image button without alt text"),
    "img-alt-empty": ("warning", "an <img> with an empty alt (decorative): check it carries no information"),
    "html-lang": ("error", "<html> without a lang attribute"),
    "heading-skip": ("warning", "a heading more than one level below the previous heading"),
    "multiple-h1": ("warning", "a second (third, …) h1 on the page"),
    "empty-link": ("error", "a link without text, aria-label, aria-labelledby, title or image alt"),
    "empty-button": ("error", "a button without text, aria-label, aria-labelledby, title or image alt"),
    "obsolete-element": ("warning", "an element the HTML Living Standard lists as obsolete (center, font…)"),
    "obsolete-attribute": ("warning", "a presentational attribute the HTML Living Standard lists as obsolete"),
    "label-without-control": ("warning", "a <label> whose for= matches no labelable control, or without one"),
    "parse-skipped": ("info", "the page is larger than max_size, so html5lib did not parse it"),
}
DEFAULT_MAX_SIZE = 300_000


class Markup(Analyzer):
    name = "markup"
    label = "Markup: HTML parse errors and structure"
    version = "1.0.0"
    columns = (Column("parse_errors", "Parse errors"), Column("violations", "Markup violations"))
    order = 20

    def check(self, settings: Mapping[str, Any]) -> None:
        check_disabled(settings.get("disable"))  # in the main process, so a typo fails before any page

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.disabled = check_disabled(settings.get("disable"))
        self.max_size = int(settings.get("max_size") or DEFAULT_MAX_SIZE)
        self.collector = ErrorCollector()

    def each_page(self, page: PageInput) -> PageReport:
        violations: list[Violation] = []
        parse_errors = 0
        if len(page.html) > self.max_size:
            if "parse-skipped" not in self.disabled:
                violations.append(self._violation(
                    "parse-skipped", f"{len(page.html)} characters exceed max_size {self.max_size}: "
                    "parse errors were not checked (html5lib slows down sharply on large pages)", "", ""))
        elif not {"parse-error", "invalid-nesting"} <= self.disabled:
            for error in self.collector.errors(page.html):
                rule = "invalid-nesting" if error.nesting else "parse-error"
                parse_errors += 1
                if rule not in self.disabled:
                    violations.append(self._violation(rule, f"{error.message} ({error.code})",
                                                      f"{error.line}:{error.column}", error.snippet))
        findings, selector = check(page.document)
        for finding in findings:
            if finding.rule not in self.disabled:
                violations.append(self._violation(finding.rule, finding.message, selector(finding.element),
                                                  start_tag(finding.element)))
        by_rule = Counter(v.rule for v in violations)
        note = "\n".join(f"{rule}: {count}" for rule, count in sorted(by_rule.items()))
        return PageReport(cells={"parse_errors": parse_errors, "violations": Cell(len(violations), note)},
                          violations=violations)

    @staticmethod
    def _violation(rule: str, message: str, location: str, snippet: str) -> Violation:
        return Violation(rule, message, RULES[rule][0], location, snippet=snippet)


def check_disabled(value: Any) -> frozenset[str]:
    """The rule ids of the `disable` setting; an unknown id is a usage error naming the known ones."""
    names = [value] if isinstance(value, str) else list(value or [])
    unknown = sorted(set(names) - set(RULES))
    if unknown:
        raise UsageError(f"markup disable (--markup-disable): unknown rule {', '.join(unknown)} "
                         f"(known: {', '.join(RULES)})")
    return frozenset(names)


@hookimpl
def register_settings(register: Any) -> None:
    register("disable", type="list", default=[],
             help=f"markup rule ids to switch off (known: {', '.join(RULES)})")
    register("max_size", type="int", default=DEFAULT_MAX_SIZE,
             help="pages longer than this many characters skip the html5lib parse-error pass")


@hookimpl
def register_analyzers(register: Any) -> None:
    register(Markup())
