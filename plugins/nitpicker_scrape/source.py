"""The HTML the server sent: decoded as the browser decoded it, and where each anchor stands in it."""

from __future__ import annotations

import codecs
from collections import defaultdict
from html.parser import HTMLParser

from nitpicker_core import Anchor

# Bigger bodies are not kept (Chromium does not keep much more of a body for the DevTools protocol either).
MAX_SOURCE_BYTES = 10 * 1024 * 1024

# Content the browser does not parse into elements (raw text, other namespaces, inert templates, or
# noscript with scripting on): an <a> written there is not one of the page's anchors.
OPAQUE = frozenset(
    {"noscript", "template", "svg", "math", "textarea", "title", "iframe", "noembed", "noframes", "xmp"}
)


def decode(body: bytes, encoding: str | None) -> str:
    """``body`` as text: UTF-8 when it is that, else the encoding the browser chose (``document.characterSet``).

    Chromium hands a text document's body over already decoded (Playwright re-encodes it as UTF-8); raw
    bytes in another encoding come only when it could not, and then the browser's choice is the right one.
    """
    try:
        return body.decode("utf-8-sig")  # the browser drops a byte order mark; so do we
    except UnicodeDecodeError:
        pass
    try:
        codec = codecs.lookup((encoding or "utf-8").strip()).name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


# Labels a browser decodes as windows-1252 (the WHATWG Encoding Standard), by Python's codec names: a page
# labelled ISO-8859-1 with a byte 0x80 shows a euro sign, not a control character
_AS_WINDOWS_1252 = frozenset({"ascii", "iso8859-1"})


def decode_sent(body: bytes, encoding: str | None) -> str:
    """The bytes the server sent, as a browser decodes them: in ``encoding``, the one it picks (a byte order
    mark, the Content-Type charset, a meta charset: ``parse.encoding_of``), even where the bytes would read as
    UTF-8 (UTF-8 labelled windows-1252 shows as mojibake in a browser, and so here); with none declared, as
    ``decode`` reads them (UTF-8 when they are that). Unlike ``decode``'s, these bytes were never re-encoded
    by a browser: what was declared is what they are in."""
    if encoding is None:
        return decode(body, None)
    try:
        codec = codecs.lookup(encoding.strip()).name
    except LookupError:
        return decode(body, None)
    if codec in _AS_WINDOWS_1252:
        codec = "cp1252"
    if codec == "utf-8":
        return body.decode("utf-8-sig", errors="replace")  # the browser drops a byte order mark; so do we
    return body.decode(codec, errors="replace")


class _Positions(HTMLParser):
    """Start-tag positions of every <a>/<area> with an href, by href as written, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._opaque = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in OPAQUE:
            self._opaque += 1
            return
        if self._opaque or tag not in ("a", "area"):
            return
        href = next((value or "" for name, value in attrs if name == "href"), None)
        if href is not None:
            line, offset = self.getpos()
            self.found[href].append((line, offset + 1))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in OPAQUE:  # <svg/> opens nothing
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in OPAQUE and self._opaque:
            self._opaque -= 1


def _newlines(text: str) -> str:
    # The HTML tokenizer reads CR LF and lone CR as LF; validators count lines the same way
    return text.replace("\r\n", "\n").replace("\r", "\n")


def place_anchors(source: str, anchors: list[Anchor]) -> None:
    """Give each rendered anchor the line and column of its <a>/<area> in ``source``.

    The n-th rendered anchor with a given href as written is the n-th such tag in the source; an anchor
    beyond what the source holds was made by script and keeps no position.
    """
    parser = _Positions()
    try:
        parser.feed(_newlines(source))
        parser.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient; a position is a nicety, never a failure
        return
    seen: dict[str, int] = defaultdict(int)
    for anchor in anchors:
        if anchor.raw_href is None:
            continue
        key = _newlines(anchor.raw_href)
        spots = parser.found.get(key, [])
        n = seen[key]
        seen[key] = n + 1
        if n < len(spots):
            anchor.line, anchor.col = spots[n]
