"""The `markup` analyzer: html5lib parse errors and structural HTML rules on the HTML the server sent."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    load_translations,
)

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
    "obsolete-attribute": (
        "warning",
        "a presentational attribute the HTML Living Standard lists as obsolete",
    ),
    "label-without-control": ("warning", "a <label> whose for= matches no labelable control, or without one"),
}
PARSE_RULES = "parse-error, invalid-nesting"
#: severity -> nitpicker's one priority scale: an error breaks the page for someone (a screen reader, a
#: parser), a warning is worth fixing, info is a note
PRIORITY = {"error": "high", "warning": "medium", "info": "low"}
#: severity -> check type: an error is a defect to fix, a warning something to look at (it may be intended)
TYPE = {"error": "issue", "warning": "warning", "info": "warning"}
# rule id -> {language: {title, description}}, from messages/<lang>.json
TRANSLATIONS = load_translations(Path(__file__).with_name("messages"))
_SPEC = "https://html.spec.whatwg.org/multipage/"
# rule id -> (title, help URL, defect key shared with the other sources of the same defect: axe, the crawl)
CATALOGUE: dict[str, tuple[str, str, str]] = {
    "parse-error": ("HTML parse errors", _SPEC + "parsing.html#parse-errors", ""),
    "invalid-nesting": (
        "Misnested or misplaced tags",
        _SPEC + "parsing.html#an-introduction-to-error-handling-and-strange-cases-in-the-parser",
        "",
    ),
    "duplicate-id": ("Duplicate id attributes", _SPEC + "dom.html#the-id-attribute", "duplicate-id"),
    "img-alt-missing": ("Images without alt text", _SPEC + "images.html#alt", "image-alt"),
    "img-alt-empty": ("Images with an empty alt (decorative)", _SPEC + "images.html#alt", ""),
    "html-lang": ("Pages without a language (<html lang>)", _SPEC + "dom.html#attr-lang", "html-lang"),
    "heading-skip": (
        "Skipped heading levels",
        _SPEC + "sections.html#headings-and-outlines",
        "heading-order",
    ),
    "multiple-h1": (
        "Several h1 headings on a page",
        _SPEC + "sections.html#headings-and-outlines",
        "h1-multiple",
    ),
    "empty-link": (
        "Links without an accessible name",
        "https://www.w3.org/WAI/WCAG22/Understanding/link-purpose-in-context.html",
        "link-name",
    ),
    "empty-button": (
        "Buttons without an accessible name",
        "https://www.w3.org/WAI/WCAG22/Understanding/name-role-value.html",
        "button-name",
    ),
    "obsolete-element": ("Obsolete elements", _SPEC + "obsolete.html#non-conforming-features", ""),
    "obsolete-attribute": (
        "Obsolete presentational attributes",
        _SPEC + "obsolete.html#non-conforming-features",
        "",
    ),
    "label-without-control": ("Labels without a form control", _SPEC + "forms.html#the-label-element", ""),
}
# Measured on real documentation (docs/analyzers.md, "How the limits were set"): html5lib parses typical
# pages at about 1 MB/s of CPU (a 1.5 MB mdBook page in 1.3 s, the largest rustdoc page, 8.5 MB, in 11.5 s
# with a 224 MB peak), so 5 MB costs about 5 s. Size does not predict the slow cases (a 43 KB page of
# unclosed <b class=…> takes 31 s): DEFAULT_PARSE_TIMEOUT bounds those, below the analyzer's 60 s per page.
DEFAULT_MAX_SIZE = 5_000_000
DEFAULT_PARSE_TIMEOUT = 20.0


class Markup(Analyzer):
    name = "markup"
    label = "Markup: HTML parse errors and structure"
    version = "2.0.0"  # 2: reads the server's HTML; a page too large or too slow to parse is reported skipped
    columns = (Column("parse_errors", "Parse errors"), Column("violations", "Markup violations"))
    order = 20
    # Validators judge the HTML the server sent: the rendered DOM holds what scripts added (an id a
    # sidebar script repeats on every page) and none of the parse errors the browser already repaired.
    reads = "source"

    def rules(self) -> list[Rule]:
        return [
            Rule(
                rule,
                CATALOGUE[rule][0],
                PRIORITY[severity],
                description,
                CATALOGUE[rule][1],
                CATALOGUE[rule][2],
                type=TYPE[severity],
                i18n=TRANSLATIONS.get(rule, {}),
            )
            for rule, (severity, description) in RULES.items()
        ]

    def check(self, settings: Mapping[str, Any]) -> None:
        check_disabled(settings.get("disable"))  # in the main process, so a typo fails before any page
        limits(settings)

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.disabled = check_disabled(settings.get("disable"))
        self.max_size, parse_timeout = limits(settings)
        from .parse import ErrorCollector  # html5lib only in the workers that parse, not in every CLI start

        self.collector = ErrorCollector(parse_timeout)

    def each_page(self, page: PageInput) -> PageReport:
        if not hasattr(self, "collector"):  # called without setup (e.g. from a test)
            self.setup(page.settings)
        violations: list[Violation] = []
        skipped: dict[str, str] = {}
        parse_errors: int | None = None  # None: the parse-error pass did not run
        if {"parse-error", "invalid-nesting"} <= self.disabled:
            pass
        elif self.max_size and len(page.html) > self.max_size:
            skipped[PARSE_RULES] = (
                f"{len(page.html):,} characters exceed max_size {self.max_size:,} "
                "(raise --markup-max-size; 0: no limit)"
            )
        else:
            from .parse import ParseTooSlow  # loaded by setup() already: a dictionary lookup

            try:
                errors = list(self.collector.errors(page.html))
                parse_errors = len(errors)
            except ParseTooSlow as exc:
                errors = []
                skipped[PARSE_RULES] = (
                    f"{exc}, stopped after {exc.tokens:,} tokens "
                    "(raise --markup-parse-timeout to wait longer)"
                )
            for error in errors:
                rule = "invalid-nesting" if error.nesting else "parse-error"
                if rule not in self.disabled:
                    violations.append(
                        self._violation(
                            rule,
                            f"{error.message} ({error.code})",
                            f"{error.line}:{error.column}",
                            error.snippet,
                        )
                    )
        findings, selector = check(page.document)
        for finding in findings:
            if finding.rule not in self.disabled:
                violations.append(
                    self._violation(
                        finding.rule, finding.message, selector(finding.element), start_tag(finding.element)
                    )
                )
        by_rule = Counter(v.rule for v in violations)
        note = "\n".join(f"{rule}: {count}" for rule, count in sorted(by_rule.items()))
        return PageReport(
            cells={
                "parse_errors": parse_note(parse_errors, page, skipped.get(PARSE_RULES)),
                "violations": Cell(len(violations), note),
            },
            violations=violations,
            skipped=skipped,
        )

    @staticmethod
    def _violation(rule: str, message: str, location: str, snippet: str) -> Violation:
        return Violation(rule, message, RULES[rule][0], location, snippet=snippet)


def parse_note(count: int | None, page: PageInput, skipped: str | None) -> Any:
    """The parse-error count, with a note when it was not made on the server's HTML or not made at all."""
    if count is None:
        return Cell(
            None,
            f"not checked: {skipped}"
            if skipped
            else "not checked: parse-error and invalid-nesting are disabled",
        )
    if page.html_kind == "source":
        return count
    if page.settings.get("reads") == "rendered":
        return Cell(count, "in the rendered DOM (reads = rendered)")
    return Cell(count, "in the rendered DOM: the archive did not keep the HTML the server sent")


def check_disabled(value: Any) -> frozenset[str]:
    """The rule ids of the `disable` setting; an unknown id is a usage error naming the known ones."""
    names = [value] if isinstance(value, str) else list(value or [])
    if "parse-skipped" in names:
        raise UsageError(
            "markup disable (--markup-disable): parse-skipped can no longer be switched off: a page "
            "too large or too slow to parse is always reported (raise --markup-max-size or "
            "--markup-parse-timeout instead)"
        )
    unknown = sorted(set(names) - set(RULES))
    if unknown:
        raise UsageError(
            f"markup disable (--markup-disable): unknown rule {', '.join(unknown)} "
            f"(known: {', '.join(RULES)})"
        )
    return frozenset(names)


def limits(settings: Mapping[str, Any]) -> tuple[int, float]:
    """(max_size, parse_timeout) from the settings; a negative or zero-second limit is a usage error."""
    size = settings.get("max_size")
    size = DEFAULT_MAX_SIZE if size is None else int(size)
    seconds = settings.get("parse_timeout")
    seconds = DEFAULT_PARSE_TIMEOUT if seconds is None else float(seconds)
    if size < 0:
        raise UsageError(f"markup max_size (--markup-max-size) must be 0 (no limit) or more, got {size}")
    if seconds <= 0:
        raise UsageError(
            f"markup parse_timeout (--markup-parse-timeout) must be more than 0 s, got {seconds:g}"
        )
    return size, seconds


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "disable", type="list", default=[], help=f"markup rule ids to switch off (known: {', '.join(RULES)})"
    )
    register(
        "max_size",
        type="int",
        default=DEFAULT_MAX_SIZE,
        help="pages longer than this many characters skip the html5lib parse-error pass, reported as "
        "skipped (0: no limit)",
    )
    register(
        "parse_timeout",
        type="float",
        default=DEFAULT_PARSE_TIMEOUT,
        help="seconds the html5lib parse-error pass may take on one page; slower pages are reported as "
        "skipped",
    )
    register(
        "reads",
        default="source",
        help="the HTML to check: source (what the server sent, as validators do) or rendered (the DOM "
        "after the page's scripts ran)",
    )


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(Markup())
