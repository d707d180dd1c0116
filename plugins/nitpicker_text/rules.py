"""The proofreading rules: each finds problems in one sentence, or across the sentences of one page."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .visible import OPAQUE


@dataclass(frozen=True)
class TextRule:
    """One rule: ``language`` is the text it reads ("ja", "en", or "" for every language); ``severity``
    is its level on the core's scale (error → high, warning → medium, info → low)."""

    language: str
    severity: str
    type: str
    title: str
    description: str
    fix: str


# rule id → the rule; the order here is the order findings of one sentence are listed in
RULES: dict[str, TextRule] = {
    "mixed-style": TextRule(
        "ja",
        "warning",
        "warning",
        "Mixed です・ます and である styles",
        "です・ます and である styles mixed in one Japanese page (the less used one is reported)",
        "Rewrite the reported sentences in the style the rest of the page uses.",
    ),
    "doubled-particle": TextRule(
        "ja",
        "warning",
        "issue",
        "Doubled Japanese particles",
        "the same Japanese particle twice in a row (「のの」「をを」「がが」…): a typo",
        "Delete the extra particle.",
    ),
    "halfwidth-kana": TextRule(
        "ja",
        "warning",
        "issue",
        "Half-width katakana",
        "half-width katakana (ｶﾀｶﾅ) in Japanese text",
        "Write the katakana in full width (ｶﾀｶﾅ → カタカナ).",
    ),
    "mixed-width-alnum": TextRule(
        "ja",
        "info",
        "warning",
        "Full-width letters or digits",
        "full-width letters or digits (ＡＢＣ１２３) in Japanese text of a page that also uses half-width ones",
        "Use half-width letters and digits throughout the page (ＡＢＣ１２３ → ABC123).",
    ),
    "long-sentence": TextRule(
        "ja",
        "info",
        "warning",
        "Long Japanese sentences",
        "a Japanese sentence longer than max_sentence_length characters: hard to read",
        "Split the sentence in two, or cut what the reader does not need.",
    ),
    "long-sentence-words": TextRule(
        "en",
        "info",
        "warning",
        "Long English sentences",
        "an English sentence of more than max_sentence_words words: hard to read",
        "Split the sentence in two, or cut what the reader does not need.",
    ),
    "repeated-word": TextRule(
        "en",
        "warning",
        "issue",
        "Repeated words",
        "the same English word twice in a row (“the the”) in prose; code, keyboard input and sample output "
        "are not read, and “had had” and “that that” are not reported",
        "Delete the repeated word.",
    ),
    "double-space": TextRule(
        "",
        "info",
        "warning",
        "Double spaces",
        "two or more spaces in a row in the visible text (&nbsp;, full-width spaces), in any language",
        "Use one space; indent or align with CSS instead of spaces.",
    ),
    "dictionary": TextRule(
        "",
        "warning",
        "issue",
        "Terms of the user dictionary",
        "a term of the user dictionary (forbidden → preferred), in any language",
        "Replace the term with the preferred one the finding names.",
    ),
}
POLITE, PLAIN = "desu-masu", "de-aru"

JAPANESE = re.compile(r"[\u3041-\u309f\u30a0-\u30ff\u4e00-\u9fff]")
HALFWIDTH_KANA = re.compile(r"[\uff61-\uff9f]+")
FULLWIDTH_ALNUM = re.compile(r"[Ａ-Ｚａ-ｚ０-９]+")
HALFWIDTH_ALNUM = re.compile(r"[A-Za-z0-9]")
REPEATED_WORD = re.compile(r"(?<![\w'’-])([A-Za-z]+)\s+\1(?![\w'’-])", re.IGNORECASE)
# English doublings that are grammatical ("what he had had", "the fact that that happened", C's "long long")
DOUBLINGS = frozenset({"had", "that", "long"})
ENGLISH_WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*|" + OPAQUE)  # a piece of code counts as one word
SPACES = re.compile(r"[ \u00a0\u2000-\u200a\u202f\u205f\u3000]{2,}")
# only sentences with a repeated run of hiragana can hold a doubled particle: tokenize just those
REPEATED_KANA = re.compile(r"([\u3041-\u3096]{1,3})\1")
TRAILING = re.compile(r"[\s。．.！？!?」』）)\]”’\"'…]+$")
FINAL_PARTICLES = frozenset({"か", "ね", "よ", "な", "わ", "ぞ", "ぜ", "さ", "かな", "よね"})
_FINAL = "(?:か|ね|よ|な|わ|ぞ|ぜ|さ)*$"
# endings that are one style whatever precedes them; only だ/である endings need the tokenizer (まだ is no だ)
POLITE_END = re.compile(
    f"(?:です|でした|でしょう|ます|ました|ません|ませんでした|ましょう|ください|下さい){_FINAL}"
)
PLAIN_END = re.compile(f"(?:ではない|ではなかった){_FINAL}")
MAYBE_PLAIN_END = re.compile(f"(?:だ|だった|だろう|である|であった|であろう){_FINAL}")
SNIPPET_MAX = 300
STYLE_TAIL = 16  # characters tokenized to find how a sentence ends
PARTICLE_WINDOW = 6  # characters tokenized on each side of a repeated run of kana
CACHE_SIZE = 20_000  # sentences whose Japanese analysis is kept: menus and footers repeat on every page


@dataclass(frozen=True)
class Sentence:
    index: int  # 1-based, counted over the whole page
    text: str  # the prose: one OPAQUE character where code (or a gap) stands
    block: Any  # anything with a ``path`` (the CSS path of the block the sentence is in)
    language: str = ""  # "ja", "en", another primary language subtag, or "" (not known)
    shown: str = ""  # the sentence as the reader sees it, code included (``text`` when empty)
    start: int = 0  # where ``text`` starts in the block's text

    @property
    def seen(self) -> str:
        return self.shown or self.text

    @property
    def path(self) -> str:
        return str(self.block.path)


@dataclass
class Finding:
    rule: str
    message: str
    sentence: Sentence


@dataclass
class Options:
    disabled: frozenset[str] = frozenset()
    max_sentence_length: int = 100
    max_sentence_words: int = 40
    dictionary: list[tuple[str, str]] = field(default_factory=list)


# -- the user dictionary ------------------------------------------------------------------------------
def parse_dictionary(items: Iterable[str]) -> list[tuple[str, str]]:
    """``"forbidden=preferred"`` items; an item without ``=`` names a UTF-8 file of such lines."""
    entries: list[tuple[str, str]] = []
    for item in items:
        if "=" in item:
            entries.append(_entry(item, "dictionary entry"))
            continue
        path = Path(item).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read dictionary file {path.name}: {type(exc).__name__}") from None
        for number, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                entries.append(_entry(line, f"{path.name} line {number}"))
    return entries


def _entry(text: str, where: str) -> tuple[str, str]:
    forbidden, _, preferred = text.partition("=")
    forbidden, preferred = forbidden.strip(), preferred.strip()
    if not forbidden or "=" in preferred:
        raise ValueError(f"{where} {text.strip()!r}: expected 'forbidden=preferred'")
    return forbidden, preferred


def _term_pattern(term: str) -> re.Pattern[str]:
    """A literal, case-insensitive; ASCII word edges must not continue a longer word ("cat" ≠ "catalog")."""
    before = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", term) else ""
    after = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", term) else ""
    return re.compile(before + re.escape(term) + after, re.IGNORECASE)


# -- Japanese: particles and sentence style -----------------------------------------------------------
def doubled_particles(tokens: list[Any], start: int = 0, end: int | None = None) -> list[str]:
    """Surfaces of particles (助詞) that directly follow the same particle (the pair spanning start:end)."""
    found = []
    offset = 0
    for prev, token in zip(tokens, tokens[1:], strict=False):
        begin, offset = offset, offset + len(prev.surface)
        if (
            token.surface == prev.surface
            and token.part_of_speech.startswith("助詞")
            and prev.part_of_speech.startswith("助詞")
            and (end is None or (begin, offset + len(token.surface)) == (start, end))
        ):
            found.append(token.surface)
    return found


def sentence_style(tokens: list[Any]) -> str | None:
    """です・ます (polite), である/だ (plain) or neither, from the auxiliaries that end the sentence."""
    i = len(tokens) - 1
    while i >= 0 and (
        _pos(tokens[i]) == "記号" or _pos(tokens[i]) == "助詞" and tokens[i].surface in FINAL_PARTICLES
    ):
        i -= 1
    chain = []
    while i >= 0 and _pos(tokens[i]) == "助動詞":
        chain.append(tokens[i])
        i -= 1
    bases = {t.base_form for t in chain}
    if bases & {"です", "ます"}:
        return POLITE
    if "だ" in bases:  # だ, だった, だろう, である (で is だ's 連用形)
        return PLAIN
    if (
        chain
        and chain[-1].base_form == "ない"
        and i >= 1
        and tokens[i].surface == "は"
        and tokens[i - 1].surface == "で"
    ):
        return PLAIN  # ではない, ではなかった
    if not chain and i >= 0 and tokens[i].base_form == "くださる":
        return POLITE
    return None


def _pos(token: Any) -> str:
    return token.part_of_speech.split(",", 1)[0]


# -- running the rules --------------------------------------------------------------------------------
class Checker:
    """Applies the enabled rules to the sentences of a page; ``tokenizer`` is a janome Tokenizer."""

    def __init__(self, tokenizer: Any, options: Options) -> None:
        self.tokenizer = tokenizer
        self.options = options
        self.dictionary = [(p, _term_pattern(f), _term_pattern(p)) for f, p in options.dictionary]
        self.japanese = functools.lru_cache(maxsize=CACHE_SIZE)(self._japanese)

    def on(self, rule: str) -> bool:
        return rule not in self.options.disabled

    def check(self, sentences: list[Sentence]) -> tuple[list[Finding], str]:
        """Findings in sentence order (then rule order), and the page's style (polite, plain, mixed, "").

        Each sentence gets the rules of its language and the language-neutral ones."""
        findings: list[Finding] = []
        styles: dict[str, list[Sentence]] = {POLITE: [], PLAIN: []}
        for sentence in sentences:
            if sentence.language == "ja":
                style, particles = self.japanese(sentence.text)
                if style:
                    styles[style].append(sentence)
                findings += self._japanese_sentence(sentence, particles)
            elif sentence.language == "en":
                findings += self._english_sentence(sentence)
            findings += self._any_sentence(sentence)
        findings += self._mixed_style(styles)
        findings += self._mixed_width(sentences)
        order = list(RULES)
        findings.sort(key=lambda f: (f.sentence.index, order.index(f.rule)))
        page_style = (
            "mixed"
            if styles[POLITE] and styles[PLAIN]
            else POLITE
            if styles[POLITE]
            else PLAIN
            if styles[PLAIN]
            else ""
        )
        return findings, page_style

    def _japanese(self, text: str) -> tuple[str | None, tuple[str, ...]]:
        """(style, doubled particles) of one sentence; the tokenizer sees only the parts that matter."""
        if not JAPANESE.search(text):
            return None, ()
        style = None
        body = TRAILING.sub("", text)
        if POLITE_END.search(body):
            style = POLITE
        elif PLAIN_END.search(body):
            style = PLAIN
        elif MAYBE_PLAIN_END.search(body):
            style = sentence_style(list(self.tokenizer.tokenize(text[max(0, len(body) - STYLE_TAIL) :])))
        particles: list[str] = []
        if self.on("doubled-particle"):
            for m in REPEATED_KANA.finditer(text):
                left = max(0, m.start() - PARTICLE_WINDOW)
                tokens = list(self.tokenizer.tokenize(text[left : m.end() + PARTICLE_WINDOW]))
                particles += doubled_particles(tokens, m.start() - left, m.end() - left)
        return style, tuple(particles)

    def _japanese_sentence(self, sentence: Sentence, particles: tuple[str, ...]) -> list[Finding]:
        text, found = sentence.text, []
        if self.on("doubled-particle"):
            for particle in particles:
                found.append(
                    Finding(
                        "doubled-particle",
                        f"particle 「{particle}」 twice in a row: 「{particle}{particle}」",
                        sentence,
                    )
                )
        if self.on("halfwidth-kana"):
            for m in HALFWIDTH_KANA.finditer(text):
                full = unicodedata.normalize("NFKC", m.group())
                found.append(
                    Finding(
                        "halfwidth-kana", f"half-width katakana 「{m.group()}」: use 「{full}」", sentence
                    )
                )
        length = len(sentence.seen)  # code included: the reader reads it too
        if self.on("long-sentence") and length > self.options.max_sentence_length:
            found.append(
                Finding(
                    "long-sentence",
                    f"sentence of {length} characters (limit {self.options.max_sentence_length})",
                    sentence,
                )
            )
        return found

    def _english_sentence(self, sentence: Sentence) -> list[Finding]:
        text, found = sentence.text, []
        words = len(ENGLISH_WORD.findall(text))
        if self.on("long-sentence-words") and words > self.options.max_sentence_words:
            found.append(
                Finding(
                    "long-sentence-words",
                    f"sentence of {words} words (limit {self.options.max_sentence_words})",
                    sentence,
                )
            )
        if self.on("repeated-word"):
            for m in REPEATED_WORD.finditer(text):
                if m.group(1).lower() in DOUBLINGS or _set_apart(sentence, m):
                    continue
                message = f"word “{m.group(1).lower()}” repeated: “{m.group()}”"
                found.append(Finding("repeated-word", message, sentence))
        return found

    def _any_sentence(self, sentence: Sentence) -> list[Finding]:
        text, found = sentence.text, []
        if self.on("double-space"):
            for m in SPACES.finditer(text):
                names = " ".join("space" if c == " " else f"U+{ord(c):04X}" for c in m.group())
                found.append(Finding("double-space", f"{len(m.group())} spaces in a row ({names})", sentence))
        if self.on("dictionary"):
            for preferred, pattern, preferred_pattern in self.dictionary:
                allowed = [m.span() for m in preferred_pattern.finditer(text)] if preferred else []
                for m in pattern.finditer(text):
                    # "サーバ=サーバー": the forbidden term inside the preferred one is fine
                    if any(s <= m.start() and m.end() <= e for s, e in allowed):
                        continue
                    hint = f": use “{preferred}”" if preferred else ""
                    found.append(Finding("dictionary", f"“{m.group()}”{hint}", sentence))
        return found

    def _mixed_style(self, styles: dict[str, list[Sentence]]) -> list[Finding]:
        if not self.on("mixed-style") or not (styles[POLITE] and styles[PLAIN]):
            return []
        # the less used style is the odd one out; on a tie the plain sentences are reported
        odd, main = (POLITE, PLAIN) if len(styles[POLITE]) < len(styles[PLAIN]) else (PLAIN, POLITE)
        label = {POLITE: "です・ます", PLAIN: "である"}
        others = len(styles[main])
        message = f"{label[odd]} style; {others} other sentences of this page use {label[main]} style"
        return [Finding("mixed-style", message, s) for s in styles[odd]]

    def _mixed_width(self, sentences: list[Sentence]) -> list[Finding]:
        if not self.on("mixed-width-alnum"):
            return []
        if not any(HALFWIDTH_ALNUM.search(s.text) for s in sentences):
            return []
        found = []
        for sentence in sentences:
            if sentence.language != "ja":
                continue
            for m in FULLWIDTH_ALNUM.finditer(sentence.text):
                half = unicodedata.normalize("NFKC", m.group())
                message = (
                    f"full-width 「{m.group()}」 in a page that also uses half-width letters and "
                    f"digits: use “{half}”"
                )
                found.append(Finding("mixed-width-alnum", message, sentence))
        return found


def _set_apart(sentence: Sentence, match: re.Match[str]) -> bool:
    """One of the two words is in italics (bold, a definition…) and the other in none: "the month
    <em>month</em>" names a thing, it does not repeat a word."""
    apart = getattr(sentence.block, "apart", None)
    if apart is None:
        return False
    first = apart(sentence.start + match.start(1), sentence.start + match.end(1))
    second = apart(sentence.start + match.end() - len(match.group(1)), sentence.start + match.end())
    return first != second and not (first and second)


def snippet(text: str) -> str:
    return text if len(text) <= SNIPPET_MAX else text[: SNIPPET_MAX - 1] + "…"
