"""Which language a block of text is in: its ``lang``, checked against the script it is written in.

Only two answers matter to the rules: Japanese (kana and kanji: the script decides) and English (Latin
text with English function words). Anything else is returned as declared, or "" when nothing is known.
"""

from __future__ import annotations

import re
from typing import Any

KANA = re.compile(r"[\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")
LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
# Words that are English and (nearly) nothing else written in Latin letters: "a", "in", "on", "an" are
# left out, since French, German, Italian or Dutch use them too.
ENGLISH = frozenset(
    """
    the and of to is that it for with as was are be this by not or from at which have has had can will
    you your if we they their but all when there been were would should these than its into also more
    other each only how what who use used such may must does do any some most our it's don't isn't
""".split()
)
JAPANESE_SHARE = 0.2  # kana and kanji among the letters: below it, Japanese words quoted in other prose
ENGLISH_SHARE = 0.2  # English function words among the Latin words (running English: 30-50 %)
ENGLISH_MIN_WORDS = 5  # fewer words (headings, menu items) say nothing about the language
GUESS_CHARS = 20_000  # a page's language is guessed from this much of its text


def primary(tag: str | None) -> str:
    """The primary subtag of a BCP 47 language tag, lower case ("en-US" → "en"); "" when there is none."""
    return (tag or "").strip().split("-", 1)[0].split("_", 1)[0].lower()


def declared(el: Any) -> str:
    """The language ``el`` is declared in: ``lang`` (or ``xml:lang``) on it or its nearest ancestor."""
    while el is not None:
        if isinstance(el.tag, str):
            value = el.get("lang")
            if value is None:
                value = el.get("xml:lang")
            if value is not None:
                return primary(value)
        el = el.getparent()
    return ""


def looks_japanese(text: str) -> bool:
    """Japanese prose always has kana (particles, endings); kanji alone may as well be Chinese."""
    if not KANA.search(text):
        return False
    japanese = len(KANA.findall(text)) + len(HAN.findall(text))
    return japanese >= JAPANESE_SHARE * (japanese + len(LATIN_LETTER.findall(text)))


def looks_english(text: str) -> bool:
    words = LATIN_WORD.findall(text)
    if len(words) < ENGLISH_MIN_WORDS:
        return False
    return sum(1 for w in words if w.lower() in ENGLISH) >= ENGLISH_SHARE * len(words)


def guess(text: str) -> str:
    """ "ja", "en" or "" (unknown) from the text alone."""
    if looks_japanese(text):
        return "ja"
    return "en" if looks_english(text) else ""


def block_language(text: str, lang: str, page: str) -> str:
    """The language the rules treat ``text`` as: ``lang`` is what the markup declares ("" for nothing),
    ``page`` the page's guessed language (used when nothing is declared and the text itself is too short).

    The script overrides a declaration it contradicts: text that reads as Japanese is Japanese (templates
    often say ``lang="en"`` on Japanese pages), and text declared Japanese without a single kana or kanji
    is some other language quoted on a Japanese page.
    """
    if looks_japanese(text):
        return "ja"
    if lang == "ja":
        if KANA.search(text) or HAN.search(text):
            return "ja"
        return "en" if looks_english(text) else ""
    if lang:
        return lang
    return guess(text) or page
