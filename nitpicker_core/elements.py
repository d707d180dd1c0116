"""Where the elements findings are about stand in a stored HTML document: the line:col of their start tags.

A crawl check's finding names a page and a detail; the element it is about (the <title>, the canonical
<link>, an <h1>) is found again when an issue list asks for that page, in the HTML the finding was made from
(the rendered one, or the HTML as sent). A check says how (``Check.element``: a ``Where`` per finding).

``scan`` is one pass of a regular expression that stops only at the tags findings are about and at those
that change what counts as an element (comments, raw text such as <script> and <noscript>, <svg>, <math>
and <template> content, the end of <head>): a page costs a fraction of a millisecond, not a parse, so a page
of 100 rows of an issue list reads 100 pages in a few milliseconds. Lines and columns are counted as the
anchors' are (``ScrapeResult`` anchors, the HTML tokenizer and validators): CR LF and a lone CR end a line,
both 1-based, a column in characters. A tag written inside an attribute value of another tag would be taken
for one: markup no page of a site writes on purpose.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from nitpicker_core.urls import join, normalize

__all__ = ["RENDERED", "SENT", "PageElements", "Tag", "Where", "scan"]

#: ``Where.html``: the HTML after the browser ran the page's scripts (what the scrape read), or as sent.
RENDERED = "rendered"
SENT = "sent"

# The elements findings are about, and the body elements that end an unclosed <head>.
_WANTED = frozenset(
    ("html", "head", "body", "title", "meta", "link", "base", "h1", "img", "script", "iframe", "source")
    + ("video", "audio", "embed")
)
_BODY_ONLY = frozenset(("h1", "img", "iframe", "source", "video", "audio", "embed", "svg", "math"))
# Raw text (and escapable raw text): no element inside, up to the matching end tag. noscript is raw text
# in a browser with scripting on, as a crawling browser has it (the anchors' positions skip it the same way).
_RAW = frozenset(("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"))
# Content of another namespace (an SVG icon's <title>) or inert (a template's): no element of the page.
_NESTED = frozenset(("svg", "math", "template"))
_NAMES = frozenset(_WANTED | _RAW | _NESTED)


def _trie(words: Iterable[str]) -> str:
    """A pattern of ``words`` that branches one character at a time: an attempt at a "<" that starts no
    name of interest fails at its first letter, not after trying every name (five times faster on a page of
    thousands of <div>s, <a>s and <span>s)."""
    heads: dict[str, list[str]] = {}
    for word in words:
        heads.setdefault(word[0], []).append(word[1:])
    parts = []
    for first, rests in sorted(heads.items()):
        longer = [rest for rest in rests if rest]
        if not longer:
            parts.append(re.escape(first))
        else:
            parts.append(f"{re.escape(first)}(?:{_trie(longer)})" + ("?" if "" in rests else ""))
    return "|".join(parts)


# One literal "<" first: the engine goes from "<" to "<" at C speed. Matched in the document lowered (the
# same offsets when lowering keeps its length, as it does but for a few letters such as "İ"): IGNORECASE makes
# every attempt slower.
_TAG = r"<(?:!--|(/?)(" + _trie(_NAMES) + r")(?=[\s/>])((?:[^>\"']|\"[^\"]*\"|'[^']*')*)(>?))"
_TOKEN = re.compile(_TAG)
_TOKEN_ANY_CASE = re.compile(_TAG, re.IGNORECASE)
_ATTR = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")
_ENDS = {name: re.compile(f"</{name}(?=[\\s/>])", re.IGNORECASE) for name in _RAW}


class Tag(NamedTuple):
    """One start tag: its name (lower case), attributes (names lower-cased, the first of a name wins, values
    unescaped), where it starts (1-based line and column), whether it is in <head>, and the text of a
    <script> or <title> (empty for the others)."""

    name: str
    attrs: dict[str, str]
    line: int
    col: int
    in_head: bool
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)

    def rels(self) -> list[str]:
        return (self.attrs.get("rel") or "").lower().split()


class PageElements:
    """The start tags ``scan`` found in one document, in document order, with a few ways to pick them.

    ``complete`` is False for a scan that stopped where the head ends (``scan(head_only=True)``): its tags are
    those up to and including the first element of the body.
    """

    def __init__(self, tags: list[Tag], complete: bool = True) -> None:
        self.tags = tags
        self.complete = complete

    def named(self, name: str) -> list[Tag]:
        return [t for t in self.tags if t.name == name]

    def first(self, name: str) -> list[Tag]:
        """The first ``name`` element (a browser reads the first <title>, <head>, <body>), or none."""
        return next(([t] for t in self.tags if t.name == name), [])

    def meta(self, value: str, attr: str = "name") -> list[Tag]:
        """The <meta> whose ``attr`` (name, property) is ``value``, any case, first first."""
        value = value.lower()
        return [t for t in self.tags if t.name == "meta" and (t.get(attr) or "").strip().lower() == value]

    def links(self, rel: str) -> list[Tag]:
        """The <link>s with ``rel`` among their rel tokens."""
        return [t for t in self.tags if t.name == "link" and rel in t.rels()]

    def base(self, url: str) -> str:
        """What relative URLs of the document resolve against: its first <base href>, else ``url``."""
        for tag in self.tags:
            if tag.name == "base" and tag.get("href"):
                try:
                    return join(url, str(tag.get("href")).strip())
                except ValueError:
                    return url
        return url

    def pointing_to(self, tags: Sequence[Tag], url: str, target: str, attr: str = "href") -> list[Tag]:
        """Those of ``tags`` whose ``attr``, resolved against the document, is ``target`` (fragments off)."""
        base = self.base(url)
        wanted = _comparable(target)
        found = []
        for tag in tags:
            value = tag.get(attr)
            if value is None:
                continue
            try:
                resolved = join(base, value.strip())
            except ValueError:
                resolved = value.strip()
            if resolved.split("#", 1)[0] == target.split("#", 1)[0] or _comparable(resolved) == wanted:
                found.append(tag)
        return found


def _comparable(url: str) -> str:
    """A URL as the crawl normalises it (fragment off), or as it is when that fails."""
    bare = url.split("#", 1)[0]
    try:
        return normalize(bare)
    except ValueError:
        return bare


class Where(NamedTuple):
    """Where a finding's element is: in which HTML (``RENDERED`` or ``SENT``), and how to pick it (the
    elements in document order; the first gives the finding its line, none: no line). ``head``: the element
    belongs in <head> (or is the <html>, the <head>, the <body>), so ``find`` is asked of the head's tags
    first, and of the whole document only when they hold none: the body, most of a page, is not scanned."""

    html: str
    find: Callable[[PageElements], Sequence[Tag]]
    head: bool = False


def _attrs(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in _ATTR.finditer(text):
        name = match.group(1).lower()
        if name not in found:
            value = match.group(2) if match.group(2) is not None else match.group(3)
            if value is None:
                value = match.group(4) or ""
            found[name] = html.unescape(value)
    return found


def _tokens(text: str) -> Iterator[tuple[int, int, str, str, bool]]:
    """(start, end, name, attribute text, closing) of each token of interest; raw text and comments skipped."""
    low = text.lower()
    lowered = len(low) == len(text)
    hay, token = (low, _TOKEN) if lowered else (text, _TOKEN_ANY_CASE)
    pos = 0
    while True:
        match = token.search(hay, pos)
        if match is None:
            return
        start = match.start()
        if match.group(2) is None:  # a comment
            if hay.startswith("<!-->", start):
                pos = start + 5
            elif hay.startswith("<!--->", start):
                pos = start + 6
            else:
                end = hay.find("-->", start + 4)
                pos = len(hay) if end < 0 else end + 3
            continue
        closing, name = match.group(1) == "/", match.group(2).lower()
        pos = match.end()
        yield start, pos, name, text[match.start(3) : match.end(3)], closing
        if not closing and name in _RAW:
            pos = _raw_end(hay, name, pos, lowered)


def _raw_end(hay: str, name: str, pos: int, lowered: bool) -> int:
    """Where the raw text of a ``name`` element opened before ``pos`` ends: at its end tag, else the end."""
    if not lowered:
        found = _ENDS[name].search(hay, pos)
        return len(hay) if found is None else found.start()
    close = "</" + name
    at = hay.find(close, pos)
    while at >= 0 and hay[at + len(close) : at + len(close) + 1] not in (" ", "\t", "\n", "\f", "/", ">"):
        at = hay.find(close, at + 1)
    return len(hay) if at < 0 else at


def scan(document: str, head_only: bool = False) -> PageElements:
    """The start tags of ``document`` that findings are about (see ``_WANTED``), with their positions; with
    ``head_only``, up to the element that ends the head (the <body>, or a body element before it)."""
    text = document.replace("\r\n", "\n").replace("\r", "\n") if "\r" in document else document
    tags: list[Tag] = []
    line, counted = 1, 0  # the line of offset ``counted``
    line_start = 0
    in_head = True  # a <head> is implied before the first body element
    nested: list[str] = []
    for start, end, name, attr_text, closing in _tokens(text):
        if closing:
            if nested and name == nested[-1]:
                nested.pop()
            elif not nested and name == "head":
                in_head = False
            continue
        if nested:
            if name in _NESTED and not attr_text.rstrip().endswith("/"):
                nested.append(name)
            continue
        if name in _NESTED:
            if name != "template":
                in_head = False
            if not attr_text.rstrip().endswith("/"):
                nested.append(name)
        else:
            if name == "body" or name in _BODY_ONLY:
                in_head = False
            if name in _WANTED:
                newlines = text.count("\n", counted, start)
                if newlines:
                    line += newlines
                    line_start = text.rfind("\n", counted, start) + 1
                counted = start
                inner = ""
                if name in ("script", "title"):
                    close = _ENDS[name].search(text, end)
                    inner = text[end : close.start() if close else len(text)]
                tags.append(Tag(name, _attrs(attr_text), line, start - line_start + 1, in_head, inner))
        if head_only and not in_head:
            return PageElements(tags, complete=False)
    return PageElements(tags)
