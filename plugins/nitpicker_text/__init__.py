"""The `text` analyzer: proofreads the visible text of each page, each block by the rules of its language."""

from __future__ import annotations

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
    priority_of,
)

from .language import GUESS_CHARS, block_language, guess
from .rules import RULES, Checker, Options, Sentence, parse_dictionary, snippet
from .visible import OPAQUE, sentence_spans, visible_blocks

PLUGIN = "text"
DEFAULT_MAX_SENTENCE_LENGTH = 100
DEFAULT_MAX_SENTENCE_WORDS = 40
TRANSLATIONS = load_translations(Path(__file__).parent / "messages")


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
    words = settings.get("max_sentence_words")
    words = DEFAULT_MAX_SENTENCE_WORDS if words is None else words
    if words < 1:
        raise UsageError(f"text: max_sentence_words must be at least 1, got {words}")
    try:
        dictionary = parse_dictionary(settings.get("dictionary") or ())
    except ValueError as exc:
        raise UsageError(f"text: {exc}") from None
    return Options(disabled, int(limit), int(words), dictionary)


class TextAnalyzer(Analyzer):
    name = "text"
    label = "Text proofreading"
    # 2: rules by language (Japanese rules on Japanese text only, English ones on English), code not read
    version = "2.0.0"
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
        return [
            Rule(
                rule,
                r.title,
                priority_of(r.severity),
                r.description,
                type=r.type,
                fix=r.fix,
                i18n=TRANSLATIONS.get(rule, {}),
            )
            for rule, r in RULES.items()
        ]

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
        blocks = visible_blocks(page.document)
        page_language = guess(" ".join(b.text for b in blocks)[:GUESS_CHARS])
        found: list[Sentence] = []
        characters = 0
        for block in blocks:
            prose = block.text.replace(OPAQUE, "")
            characters += len("".join(prose.split()))
            language = block_language(prose, block.lang, page_language)
            first = 0  # the block's OPAQUE characters before this sentence
            for start, text in sentence_spans(block.text):
                shown = block.shown(text, first)
                first += text.count(OPAQUE)
                if text.replace(OPAQUE, "").strip():
                    found.append(Sentence(len(found) + 1, text, block, language, shown, start))
        findings, style = self.checker.check(found)
        violations = [
            Violation(
                f.rule,
                f"{f.message} (sentence {f.sentence.index})",
                RULES[f.rule].severity,
                f.sentence.path,
                snippet=snippet(f.sentence.seen),
            )
            for f in findings
        ]
        cells = {
            "characters": characters,
            "sentences": len(found),
            "findings": len(violations),
            "style": Cell(style, "mixed: see the mixed-style findings" if style == "mixed" else ""),
        }
        return PageReport(cells, violations)


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register("disable", type="list", default=[], help=f"rule ids to switch off ({', '.join(RULES)})")
    register(
        "max_sentence_length",
        type="int",
        default=DEFAULT_MAX_SENTENCE_LENGTH,
        help="Japanese sentences longer than this many characters are reported (long-sentence)",
    )
    register(
        "max_sentence_words",
        type="int",
        default=DEFAULT_MAX_SENTENCE_WORDS,
        help="English sentences of more words than this are reported (long-sentence-words)",
    )
    register(
        "dictionary",
        type="list",
        default=[],
        help="forbidden terms: 'forbidden=preferred' items, or paths of UTF-8 files with one such line each",
    )


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(TextAnalyzer())
