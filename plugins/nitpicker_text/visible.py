"""The text a reader sees on a page, as blocks (paragraph, list item, cell…) with a CSS path each.

Code, keyboard input, sample output and variables (``code kbd samp var tt``) are seen but are not prose:
each stays in the block as one ``OPAQUE`` character, so the rules neither read it nor join the words on
either side of it ("the ``and`` and ``or`` operators" is no repeated word), and snippets show it again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .language import declared, primary

# Never rendered as text: gone without a trace ("the <script>…</script> the" reads "the the").
SKIP_TAGS = frozenset("script style noscript template head".split())
# Rendered, but not prose: a gap in the text (pre is a block of its own; the others sit in the line).
GAP_TAGS = frozenset("pre textarea select svg math iframe object canvas video audio".split())
# Rendered text that is not prose: kept as one OPAQUE character, shown again in snippets.
CODE_TAGS = frozenset("code kbd samp var tt".split())
# Inline elements that set words apart (italics, bold, a definition, a title): "the month <em>month</em>"
# is how Sphinx names a parameter, not a repeated word.
SET_APART_TAGS = frozenset("em i b strong dfn cite mark u q".split())
OPAQUE = "\ufffc"  # OBJECT REPLACEMENT CHARACTER: neither a letter nor a space, so no word runs across it
BLOCK_TAGS = frozenset(
    """
    address article aside blockquote body caption dd details dialog div dl dt fieldset figcaption figure
    footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav ol p section summary table
    tbody td tfoot th thead tr ul button label option pre
""".split()
)
DISPLAY_NONE = re.compile(r"(?:^|;)\s*display\s*:\s*none\b", re.IGNORECASE)
# HTML's collapsible white space only: no-break and ideographic spaces are rendered as they are.
COLLAPSIBLE = re.compile(r"[ \t\n\r\f]+")
SIMPLE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass
class Block:
    """One block of visible text; ``text`` has HTML white space collapsed, ``<br>`` kept as ``\\n``, and one
    ``OPAQUE`` character where each of ``opaque`` (the text of code, kbd…; "" for a gap) stands.
    ``lang`` is the language the markup declares for the block ("" when none)."""

    element: Any
    text: str
    opaque: list[str] = field(default_factory=list)
    lang: str = ""
    set_apart: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each em, b… in text

    def apart(self, start: int, end: int) -> frozenset[int]:
        """Which set-apart elements hold ``text[start:end]`` (by their index in ``set_apart``)."""
        return frozenset(i for i, (s, e) in enumerate(self.set_apart) if s <= start and end <= e)

    def shown(self, part: str, first: int) -> str:
        """``part`` of ``text`` as the reader sees it, its ``OPAQUE`` characters numbered from ``first``."""
        pieces = part.split(OPAQUE)
        out = [pieces[0]]
        for i, piece in enumerate(pieces[1:], first):
            out.append(self.opaque[i] if i < len(self.opaque) else "")
            out.append(piece)
        return re.sub(" {2,}", " ", "".join(out)).strip(" ")

    @cached_property
    def path(self) -> str:
        """Its CSS path, worked out only when a finding needs it."""
        return css_path(self.element)


def is_hidden(el: Any) -> bool:
    """Hidden in the markup itself: ``hidden``, ``aria-hidden="true"`` or an inline ``display: none``."""
    if el.get("hidden") is not None:
        return True
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(DISPLAY_NONE.search(el.get("style") or ""))


def skipped(el: Any) -> bool:
    tag = el.tag
    if not isinstance(tag, str):  # comments and processing instructions
        return True
    return tag.lower() in SKIP_TAGS or is_hidden(el)


def css_path(el: Any) -> str:
    """A selector for ``el``: from the nearest ancestor with a simple id, else from ``body``."""
    parts: list[str] = []
    while el is not None and isinstance(el.tag, str):
        tag = el.tag.lower()
        ident = el.get("id") or ""
        if SIMPLE_ID.match(ident) and tag not in ("html", "body"):
            parts.append(f"#{ident}")
            break
        if tag in ("html", "body"):
            parts.append(tag)
            break
        index = 1 + sum(1 for s in el.itersiblings(preceding=True) if s.tag == el.tag)
        alone = index == 1 and not any(s.tag == el.tag for s in el.itersiblings())
        parts.append(tag if alone else f"{tag}:nth-of-type({index})")
        el = el.getparent()
    return " > ".join(reversed(parts))


class _Collector:
    """Builds each block's text as it goes, white space already collapsed, so that offsets taken while
    walking (where an ``em`` starts and ends) are offsets in the final text."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.serial = 0  # counts flushes: a span that started in an earlier block is not this block's
        self._reset()

    def _reset(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.last = ""  # the last character so far ("" at the start of a block)
        self.opaque: list[str] = []
        self.set_apart: list[tuple[int, int]] = []
        self.owner: Any = None
        self.lang = ""

    def add(self, text: str | None, owner: Any, lang: str) -> None:
        if not text:
            return
        piece = COLLAPSIBLE.sub(" ", text)
        if self.last in ("", " ", "\n"):
            piece = piece.lstrip(" ")
        if piece:
            if not self.parts:
                self.owner, self.lang = owner, lang
            self.parts.append(piece)
            self.length += len(piece)
            self.last = piece[-1]

    def line_break(self) -> None:
        if not self.parts:
            return
        if self.last == " ":
            self.parts[-1] = self.parts[-1][:-1]
            self.length -= 1
        self.parts.append("\n")
        self.length += 1
        self.last = "\n"

    def add_opaque(self, text: str, owner: Any, lang: str) -> None:
        self.add(OPAQUE, owner, lang)
        self.opaque.append(COLLAPSIBLE.sub(" ", text).strip())

    def flush(self) -> None:
        if self.parts:
            text = "".join(self.parts).rstrip(" \n")
            if text.replace(OPAQUE, "").strip():
                spans = [(s, min(e, len(text))) for s, e in self.set_apart if s < len(text)]
                self.blocks.append(Block(self.owner, text, self.opaque, self.lang, spans))
        self.serial += 1
        self._reset()

    def walk(self, root: Any, lang: str) -> None:
        """Depth first without recursion: unclosed inline tags can nest thousands of levels deep."""
        # (element, block owning the text around it, entering?, language around it, language of that block,
        #  (block serial, offset) where a set-apart element started)
        stack: list[tuple[Any, Any, bool, str, str, tuple[int, int]]] = [
            (root, root, True, lang, lang, (-1, 0))
        ]
        while stack:
            el, outer, entering, around, outer_lang, began = stack.pop()
            tag = el.tag.lower() if isinstance(el.tag, str) else ""
            block = tag in BLOCK_TAGS
            if not entering:
                if block:
                    self.flush()
                elif began[0] == self.serial and self.length > began[1]:
                    self.set_apart.append((began[1], self.length))
                if el is not root:
                    self.add(el.tail, outer, outer_lang)
                continue
            mark = (self.serial, self.length) if tag in SET_APART_TAGS else (-1, 0)
            stack.append((el, outer, False, around, outer_lang, mark))
            if skipped(el):
                continue
            if block:
                self.flush()
            if tag in GAP_TAGS:
                self.add_opaque("", outer, outer_lang)
                continue
            if tag in CODE_TAGS:
                self.add_opaque(el.text_content(), outer, outer_lang)  # only shown in snippets
                continue
            own = el.get("lang")
            here = primary(own) if own is not None else around
            inner, inner_lang = (el, here) if block else (outer, outer_lang)
            if tag == "br":
                self.line_break()
            self.add(el.text, inner, inner_lang)
            stack.extend((child, inner, True, here, inner_lang, (-1, 0)) for child in reversed(el))


def visible_blocks(document: Any) -> list[Block]:
    """The visible text blocks of a parsed document (lxml), in document order."""
    body = document.find("body")
    root = body if body is not None else document
    collector = _Collector()
    parent = root.getparent()
    collector.walk(root, declared(parent) if parent is not None else "")
    collector.flush()
    return collector.blocks


SENTENCE = re.compile(r"[^\n]*?(?:[。！？]+|[.!?]+(?=[\s\"'”’)\]]|$))[」』）)\]”’\"']*|[^\n]+")
# What a period may follow without ending the sentence ("e.g. Python", "Dr. Smith", "Fig. 3").
ABBREVIATIONS = frozenset(
    "e.g i.e cf vs mr mrs ms dr prof st fig figs al approx incl resp jr sr esp viz ca".split()
)
BEFORE_NUMBER = frozenset("no nos vol vols p pp ch sec eq art".split())  # "see p. 12"
BEFORE_LOWER = frozenset({"etc"})  # "etc. and so on", but "…, etc. The next sentence"
LAST_WORD = re.compile(r"([^\s(\[\"'“‘]+)\.$")


def _continues(sentence: str, rest: str) -> bool:
    """Whether a period at the end of ``sentence`` is an abbreviation's, not the sentence's end.

    A lower-case word after a period does not by itself continue the sentence: docs start sentences with
    identifiers ("… the reference point. whence can be omitted")."""
    word = LAST_WORD.search(sentence)
    if word is None:
        return False
    token = word.group(1)
    lower = token.lower()
    following = rest.lstrip(" ")[:1]
    if lower in ABBREVIATIONS or len(token) == 1 and token.isupper():  # initials: "J. Smith"
        return True
    if lower in BEFORE_NUMBER:
        return following.isdigit()
    return (lower in BEFORE_LOWER or token.endswith("..")) and following.isalpha() and following.islower()


def sentences(text: str) -> Iterator[str]:
    """Sentences of one block: ended by 。！？, by . ! ? before a space or the end, or by a line break; a
    period after an abbreviation or an initial does not end one."""
    for _, sentence in sentence_spans(text):
        yield sentence


def sentence_spans(text: str) -> Iterator[tuple[int, str]]:
    """``sentences`` with the offset each one starts at in ``text``."""
    pending, begin = "", 0
    for match in SENTENCE.finditer(text):
        if not pending:
            begin = match.start()
        sentence = pending + match.group()
        end = match.end()
        if end < len(text) and text[end] != "\n" and _continues(sentence, text[end:]):
            pending = sentence
            continue
        pending = ""
        stripped = sentence.strip(" ")
        if stripped.strip():
            yield begin + len(sentence) - len(sentence.lstrip(" ")), stripped
    if pending.strip(" "):
        yield begin + len(pending) - len(pending.lstrip(" ")), pending.strip(" ")
