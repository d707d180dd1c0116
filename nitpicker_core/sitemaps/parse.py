"""A streaming sitemap reader: XML urlsets and indexes, text sitemaps, gzip, within the protocol's limits.

Bytes go in as they arrive (``feed``), so the limits hold while reading: at most ``MAX_BYTES``
uncompressed (a gzip bomb stops there), at most ``MAX_ENTRIES`` ``<loc>``s, and the XML parser never
resolves entities, loads a DTD or touches the network.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import lxml.etree

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "SITEMAP_NS", "XHTML_NS", "Parsed", "SitemapParser", "parse_sitemap"]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
# <xhtml:link rel="alternate" hreflang="…" href="…"/> inside a <url>: the page's language versions (Google's
# sitemap form of hreflang); a <link> of another namespace is no such annotation
XHTML_NS = "http://www.w3.org/1999/xhtml"
MAX_ENTRIES = 50_000  # sitemaps.org: a sitemap or an index lists at most 50,000 URLs
MAX_BYTES = 50 * 1024 * 1024  # sitemaps.org: at most 50 MB (52,428,800 bytes) uncompressed
_STEP = 256 * 1024  # uncompressed bytes inflated at a time: a bomb never expands further than this per step
_POSITIONS = re.compile(r",?\s*line \d+(,?\s*column \d+)?|\s*\(<string>, line \d+\)")
_ROOTS = {"urlset": "urlset", "sitemapindex": "index"}


@dataclass
class Parsed:
    """What one sitemap file said: its kind, its ``(loc, lastmod)`` entries and what was wrong with it.

    ``kind`` is "urlset", "index", "text" or "" (nothing readable). ``problems`` holds
    ``(kind, detail)`` pairs, kind "invalid" or "over-limit"; what was read before a problem is kept.
    ``alternates`` are the ``(loc, hreflang, href)`` of each ``<xhtml:link rel="alternate" hreflang>`` of a
    ``<url>`` whose loc was kept, values as written (stripped).
    """

    kind: str = ""
    entries: list[tuple[str, str | None]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    alternates: list[tuple[str, str, str]] = field(default_factory=list)


class SitemapParser:
    """Feed a sitemap's bytes (gzipped or not, XML or text) in chunks; ``close()`` gives the ``Parsed``."""

    def __init__(self) -> None:
        self.result = Parsed()
        self._inflate: zlib._Decompress | None = None
        self._started = False
        self._format = ""  # "xml" or "text", from the first non-blank byte
        self._size = 0
        self._done = False
        self._text_tail = b""
        self._xml: lxml.etree.XMLPullParser | None = None
        self._entry: dict[str, str] = {}
        self._links: list[tuple[str, str]] = []  # the current <url>'s (hreflang, href) alternates

    @property
    def done(self) -> bool:
        """True once a limit or an error ended reading: the caller stops fetching."""
        return self._done

    def feed(self, chunk: bytes) -> bool:
        """Take the next bytes; False when nothing more will be read (a limit or a fatal error)."""
        if self._done or not chunk:
            return not self._done
        if not self._started:
            self._started = True
            if chunk[:2] == b"\x1f\x8b":  # gzip by its magic bytes, whatever the name or headers say
                self._inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        if self._inflate is None:
            self._take(chunk)
            return not self._done
        data = chunk
        while data and not self._done:
            try:
                out = self._inflate.decompress(data, _STEP)
            except zlib.error as exc:
                self._stop("invalid", f"broken gzip data: {exc}")
                break
            data = self._inflate.unconsumed_tail
            self._take(out)
        return not self._done

    def _take(self, data: bytes) -> None:
        """Uncompressed bytes, counted against ``MAX_BYTES`` and handed to the XML or text reader."""
        if not data:
            return
        room = MAX_BYTES - self._size
        self._size += len(data)
        over = len(data) > room
        if over:
            data = data[: max(room, 0)]
        if not self._format:
            stripped = data.lstrip(b" \t\r\n\xef\xbb\xbf")
            if not stripped:
                if over:
                    self._stop(
                        "over-limit", f"larger than {MAX_BYTES:,} bytes uncompressed (the rest was not read)"
                    )
                return
            self._format = "xml" if stripped.startswith(b"<") else "text"
            if self._format == "xml":
                self._xml = lxml.etree.XMLPullParser(
                    events=("start", "end"),
                    resolve_entities=False,
                    no_network=True,
                    load_dtd=False,
                    huge_tree=False,
                    remove_blank_text=True,
                    remove_comments=True,
                    remove_pis=True,
                )
        if self._format == "text":
            self._text(data)
        else:
            self._xml_feed(data)
        if over and not self._done:
            self._stop("over-limit", f"larger than {MAX_BYTES:,} bytes uncompressed (the rest was not read)")

    def _stop(self, kind: str, detail: str) -> None:
        self.result.problems.append((kind, detail))
        self._done = True

    def _add(self, loc: str, lastmod: str | None) -> bool:
        loc = loc.strip()
        if not loc:
            return False
        if len(self.result.entries) >= MAX_ENTRIES:
            self._stop("over-limit", f"more than {MAX_ENTRIES:,} URLs (the rest was not read)")
            return False
        self.result.entries.append((loc, (lastmod or "").strip()[:64] or None))
        return True

    # -- text sitemaps: one URL a line, UTF-8 ------------------------------------------------------------
    def _text(self, data: bytes) -> None:
        lines = (self._text_tail + data).split(b"\n")
        self._text_tail = lines.pop()
        if len(self._text_tail) > 64 * 1024:  # no URL is that long: a binary file, not a text sitemap
            self._stop("invalid", "not a sitemap: a line longer than 64 KiB")
            return
        for line in lines:
            self._text_line(line)
            if self._done:
                return

    def _text_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip().lstrip("\ufeff")
        if not text:
            return
        if not re.match(r"^https?://", text, re.IGNORECASE):
            self._stop("invalid", "not a sitemap: a line of the text sitemap is no http(s) URL")
            return
        self.result.kind = "text"
        self._add(text, None)

    # -- XML ---------------------------------------------------------------------------------------------
    def _xml_feed(self, data: bytes) -> None:
        assert self._xml is not None
        try:
            self._xml.feed(data)
            self._events()
        except lxml.etree.XMLSyntaxError as exc:
            self._events(safe=True)
            self._stop("invalid", f"XML syntax error: {_POSITIONS.sub('', str(exc)).strip()}")

    def _events(self, safe: bool = False) -> None:
        assert self._xml is not None
        try:
            for event, element in self._xml.read_events():
                if self._done:
                    return
                self._event(event, element)
        except lxml.etree.XMLSyntaxError:
            if not safe:
                raise

    def _event(self, event: str, element: lxml.etree._Element) -> None:
        if not isinstance(element.tag, str):
            return  # comments and processing instructions
        name = element.tag.rpartition("}")[2]
        if event == "start":
            if element.getparent() is None:
                self._root(lxml.etree.QName(element))
            return
        parent = element.getparent()
        if name in ("loc", "lastmod") and parent is not None:
            if str(parent.tag).rpartition("}")[2] in ("url", "sitemap"):
                self._entry[name] = element.text or ""
        elif name == "link" and parent is not None and str(parent.tag).rpartition("}")[2] == "url":
            rel = str(element.get("rel") or "").lower().split()
            hreflang = element.get("hreflang")
            if (
                lxml.etree.QName(element).namespace == XHTML_NS
                and "alternate" in rel
                and hreflang is not None
            ):
                self._links.append((str(hreflang).strip()[:64], str(element.get("href") or "").strip()))
        elif name in ("url", "sitemap") and parent is not None and parent.getparent() is None:
            if "loc" in self._entry and self._add(self._entry["loc"], self._entry.get("lastmod")):
                loc = self.result.entries[-1][0]
                self.result.alternates.extend((loc, code, href) for code, href in self._links)
            self._entry, self._links = {}, []
            # read entries leave the tree: memory stays flat whatever the file's length
            element.clear()
            while element.getprevious() is not None:
                del parent[0]

    def _root(self, qname: lxml.etree.QName) -> None:
        kind = _ROOTS.get(qname.localname)
        if kind is None:
            self._stop("invalid", f"not a sitemap: the root element is <{qname.localname}>")
            return
        self.result.kind = kind
        if qname.namespace != SITEMAP_NS:
            found = qname.namespace or "none"
            self.result.problems.append(("invalid", f"wrong namespace: {found} (expected {SITEMAP_NS})"))

    def close(self) -> Parsed:
        """The end of the file: what was read and every problem met."""
        if not self._done:
            if self._inflate is not None and not self._inflate.eof and self._started:
                self.result.problems.append(("invalid", "broken gzip data: the file ends early"))
            if self._format == "text":
                self._text_line(self._text_tail)
            elif self._format == "xml" and self._xml is not None:
                try:
                    self._xml.close()
                    self._events()
                except lxml.etree.XMLSyntaxError as exc:
                    message = _POSITIONS.sub("", str(exc)).strip()
                    self.result.problems.append(("invalid", f"XML syntax error: {message}"))
            elif not self._format:
                self.result.problems.append(("invalid", "empty file"))
        self._done = True
        return self.result


def parse_sitemap(data: bytes, chunk: int = 64 * 1024) -> Parsed:
    """A whole sitemap file's bytes read as ``SitemapParser`` reads a download (tests, local files)."""
    parser = SitemapParser()
    for start in range(0, len(data), chunk):
        if not parser.feed(data[start : start + chunk]):
            break
    return parser.close()
