"""The `text` analyzer: proofreads the visible text of each page (Japanese and English rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    PageInput,
    PageReport,
    Rule,
    UsageError,
    Violation,
    hookimpl,
)

from .rules import RULES, Checker, Options, Sentence, parse_dictionary, snippet
from .visible import sentences, visible_blocks

PLUGIN = "text"
DEFAULT_MAX_SENTENCE_LENGTH = 100
#: severity -> the one priority scale: an error is a plain typo a reader notices, a warning a matter of style
PRIORITY = {"error": "high", "warning": "medium", "info": "low"}
TITLES = {
    "mixed-style": "Mixed です・ます and である styles", "doubled-particle": "Doubled Japanese particles",
    "halfwidth-kana": "Half-width katakana", "mixed-width-alnum": "Full-width letters or digits",
    "long-sentence": "Long sentences", "repeated-word": "Repeated words", "double-space": "Double spaces",
    "dictionary": "Terms of the user dictionary",
}


def options_from(settings: Mapping[str, Any]) -> Options:
    """Validated options; a bad rule id, limit or dictionary is a UsageError (one line, before the run)."""
    disabled = frozenset(settings.get("disable") or ())
    unknown = sorted(disabled - set(RULES))
    if unknown:
        raise UsageError(f"text: unknown rule {', '.join(unknown)} in disable (known: {', '.join(RULES)})")
    limit = settings.get("max_sentence_length")
    limit = DEFAULT_MAX_SENTENCE_LENGTH if limit is None else limit
    if limit < 1:
        raise UsageError(f"text: max_sentence_length must be at least 1, got {limit}")
    try:
        dictionary = parse_dictionary(settings.get("dictionary") or ())
    except ValueError as exc:
        raise UsageError(f"text: {exc}") from None
    return Options(disabled, int(limit), dictionary)


class TextAnalyzer(Analyzer):
    name = "text"
    label = "Text proofreading"
    version = "1.0.0"
    columns = (
        Column("characters", "Characters"),
        Column("sentences", "Sentences"),
        Column("findings", "Text findings"),
        Column("style", "Writing style"),
    )
    order = 40
    # The rendered DOM: proofreading is about the text a reader sees, including what scripts inserted.
    reads = "rendered"

    def __init__(self) -> None:
        self.checker: Checker | None = None

    def rules(self) -> list[Rule]:
        return [Rule(rule, TITLES.get(rule, rule), PRIORITY[severity], description)
                for rule, (severity, description) in RULES.items()]

    def check(self, settings: Mapping[str, Any]) -> None:
        options_from(settings)  # the engine calls this before the run: a bad setting fails once, not per page

    def setup(self, settings: Mapping[str, Any]) -> None:
        from janome.tokenizer import Tokenizer  # its dictionary takes a while to load: once per worker

        self.checker = Checker(Tokenizer(), options_from(settings))

    def teardown(self) -> None:
        self.checker = None

    def each_page(self, page: PageInput) -> PageReport:
        if self.checker is None:  # called without setup (e.g. from a test): set up from the page's settings
            self.setup(page.settings)
        assert self.checker is not None
        found: list[Sentence] = []
        characters = 0
        for block in visible_blocks(page.document):
            characters += sum(1 for c in block.text if not c.isspace())
            for text in sentences(block.text):
                found.append(Sentence(len(found) + 1, text, block))
        findings, style = self.checker.check(found)
        violations = [
            Violation(f.rule, f"{f.message} (sentence {f.sentence.index})", RULES[f.rule][0], f.sentence.path,
                      snippet=snippet(f.sentence.text))
            for f in findings
        ]
        cells = {"characters": characters, "sentences": len(found), "findings": len(violations),
                 "style": Cell(style, "mixed: see the mixed-style findings" if style == "mixed" else "")}
        return PageReport(cells, violations)


@hookimpl
def register_settings(register: Any) -> None:
    register("disable", type="list", default=[],
             help=f"rule ids to switch off ({', '.join(RULES)})")
    register("max_sentence_length", type="int", default=DEFAULT_MAX_SENTENCE_LENGTH,
             help="sentences longer than this many characters are reported (long-sentence)")
    register("dictionary", type="list", default=[],
             help="forbidden terms: 'forbidden=preferred' items, or paths of UTF-8 files with one such "
                  "line each")


@hookimpl
def register_analyzers(register: Any) -> None:
    register(TextAnalyzer())
