"""Keyword parsing (plain or /regex/flags) and the visible text of the scope they are counted in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import regex  # as re, plus a time limit per search (catastrophic backtracking ends in TimeoutError)

# /body/flags with Python's flag letters; JavaScript's "g" is accepted and ignored (every match counts)
REGEX = re.compile(r"^/(?P<body>.+)/(?P<flags>[a-z]*)$", re.DOTALL)
FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE, "g": 0}
SKIP_TAGS = frozenset("script style noscript template head svg math iframe object textarea".split())
BLOCK_TAGS = frozenset(
    """
    address article aside blockquote body br caption dd details dialog div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav ol option p pre
    section summary table tbody td tfoot th thead tr ul button label
""".split()
)
DISPLAY_NONE = re.compile(r"(?:^|;)\s*display\s*:\s*none\b", re.IGNORECASE)
WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Keyword:
    """One configured keyword: its column key and label, and the pattern it counts."""

    text: str
    pattern: Any  # a compiled ``regex`` pattern

    @property
    def key(self) -> str:
        return f"keyword:{self.text}"

    @property
    def label(self) -> str:
        return f"Search keyword: {self.text}"

    def count(self, text: str, timeout: float | None = None) -> int:
        """Matches in ``text``; ``TimeoutError`` when they take longer than ``timeout`` seconds."""
        return sum(1 for _ in self.pattern.finditer(text, timeout=timeout))


def parse_keyword(text: str) -> Keyword:
    """``/body/flags`` is a regular expression; anything else a case-insensitive literal.

    A literal's runs of white space match one space (the text's white space is collapsed). Raises
    ValueError with a one-line reason.
    """
    if not text.strip():
        raise ValueError("empty keyword")
    match = REGEX.match(text)
    if match is None:
        words = [regex.escape(w) for w in text.split()]
        return Keyword(text, regex.compile(" ".join(words), regex.IGNORECASE))
    flags = 0
    for letter in match["flags"]:
        if letter not in FLAGS:
            raise ValueError(f"keyword {text!r}: unknown regex flag {letter!r} (use i, m, s, x)")
        flags |= FLAGS[letter]
    try:
        pattern = regex.compile(match["body"], flags)
    except regex.error as exc:
        raise ValueError(f"keyword {text!r}: invalid regular expression: {exc}") from None
    if pattern.search(""):
        raise ValueError(f"keyword {text!r}: the regular expression matches the empty string")
    return Keyword(text, pattern)


def parse_keywords(items: list[str]) -> list[Keyword]:
    """Keywords in the given order; a repeated keyword counts once (one column per keyword)."""
    seen: dict[str, Keyword] = {}
    for item in items:
        if item not in seen:
            seen[item] = parse_keyword(item)
    return list(seen.values())


def _hidden(el: Any) -> bool:
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions
        return True
    if tag.lower() in SKIP_TAGS or el.get("hidden") is not None:
        return True
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(DISPLAY_NONE.search(el.get("style") or ""))


def visible_text(root: Any) -> str:
    """The text a reader sees in ``root``: blocks on their own lines, white space collapsed per line."""
    parts: list[str] = []
    stack = [(root, True)]  # depth first without recursion: unclosed tags can nest very deep
    while stack:
        el, entering = stack.pop()
        block = isinstance(el.tag, str) and el.tag.lower() in BLOCK_TAGS
        if not entering:
            if block:
                parts.append("\n")
            if el is not root:
                parts.append(WHITESPACE.sub(" ", el.tail or ""))
            continue
        stack.append((el, False))
        if _hidden(el):
            continue
        if block:
            parts.append("\n")
        parts.append(WHITESPACE.sub(" ", el.text or ""))
        stack.extend((child, True) for child in reversed(el))
    lines = (re.sub(" {2,}", " ", line).strip() for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)
