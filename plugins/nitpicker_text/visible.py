"""The text a reader sees on a page, as blocks (paragraph, list item, cell…) with a CSS path each."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

# Never rendered as text, or not prose (pre/textarea keep their source whitespace, which is not a typo).
SKIP_TAGS = frozenset("script style noscript template head svg math iframe object canvas video audio pre "
                      "textarea select".split())
BLOCK_TAGS = frozenset("""
    address article aside blockquote body caption dd details dialog div dl dt fieldset figcaption figure
    footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav ol p section summary table
    tbody td tfoot th thead tr ul button label option
""".split())
DISPLAY_NONE = re.compile(r"(?:^|;)\s*display\s*:\s*none\b", re.IGNORECASE)
# HTML's collapsible white space only: no-break and ideographic spaces are rendered as they are.
COLLAPSIBLE = re.compile(r"[ \t\n\r\f]+")
SIMPLE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass
class Block:
    """One block of visible text; ``text`` has HTML white space collapsed, ``<br>`` kept as ``\\n``."""

    element: Any
    text: str

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
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.owner: Any = None

    def add(self, text: str | None, owner: Any) -> None:
        if text:
            if not self.parts:
                self.owner = owner
            self.parts.append(COLLAPSIBLE.sub(" ", text))

    def flush(self) -> None:
        if self.parts:
            text = re.sub(" *\n *", "\n", re.sub(" {2,}", " ", "".join(self.parts))).strip(" \n")
            if text.strip():
                self.blocks.append(Block(self.owner, text))
        self.parts = []
        self.owner = None

    def walk(self, root: Any) -> None:
        """Depth first without recursion: unclosed inline tags can nest thousands of levels deep."""
        stack = [(root, root, True)]  # (element, block owning the text around it, entering?)
        while stack:
            el, outer, entering = stack.pop()
            block = isinstance(el.tag, str) and el.tag.lower() in BLOCK_TAGS
            if not entering:
                if block:
                    self.flush()
                if el is not root:
                    self.add(el.tail, outer)
                continue
            stack.append((el, outer, False))
            if skipped(el):
                continue
            inner = el if block else outer
            if block:
                self.flush()
            if el.tag.lower() == "br":
                self.parts.append("\n")
            self.add(el.text, inner)
            stack.extend((child, inner, True) for child in reversed(el))


def visible_blocks(document: Any) -> list[Block]:
    """The visible text blocks of a parsed document (lxml), in document order."""
    body = document.find("body")
    root = body if body is not None else document
    collector = _Collector()
    collector.walk(root)
    collector.flush()
    return collector.blocks


SENTENCE = re.compile(
    r"[^\n]*?(?:[。！？]+|[.!?]+(?=[\s\"'”’)\]]|$))[」』）)\]”’\"']*|[^\n]+"
)


def sentences(text: str) -> Iterator[str]:
    """Sentences of one block: ended by 。！？, by . ! ? before a space or the end, or by a line break."""
    for match in SENTENCE.finditer(text):
        sentence = match.group().strip(" ")
        if sentence.strip():
            yield sentence
