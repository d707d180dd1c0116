"""``--render never``: what extract.js reads from a rendered page, read from the HTML the server sent.

The same records as a rendered page's (metadata, anchors, headings, images as written, the resources the
HTML names, JSON-LD), parsed with lxml (libxml2) rather than a browser: no script runs, so a page reads
as a crawler that does not render sees it. Field by field, each value is what extract.js computes from
the same document (the comments name the differences a parser without layout cannot avoid).
"""

from __future__ import annotations

import bisect
import codecs
import itertools
import re
import threading
import time
from collections.abc import Iterable
from typing import Any

import lxml.etree
import lxml.html

from nitpicker_core import (
    IMAGE_PRESETS,
    Anchor,
    Image,
    PageError,
    ScrapeResult,
    UrlJoiner,
    join_url,
    template_key_of,
)

from . import source, tags
from .extract import headings_from, jsonld_from, metadata_from
from .images import PRESETS
from .network import guess_cdn

__all__ = ["parse"]

# Content a browser with scripting on does not parse into elements, or keeps out of the document's tree
_INERT = ("template", "noscript")
# The elements the reader looks at, found in one walk over the tree (each walk visits every element: a tenth
# of the time of reading a docs page, once per kind of element). Those read together are found together in
# document order: tag → its group (else its own tag)
_GROUPS = {
    **dict.fromkeys(_INERT, "inert"),
    **dict.fromkeys(("a", "area"), "a"),
    **dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "h"),
    **dict.fromkeys(("video", "audio", "source", "track"), "media"),
}
_URL_NOISE = re.compile(r"[\t\n\r]")  # the URL parser drops tabs and newlines anywhere in a URL
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_HTTP_EQUIV_CHARSET = re.compile(r"charset=([^;]+)", re.I)
_REL_SPLIT = re.compile(r"[\t\n\f\r ]+")
_WORD = re.compile(r"\w+(?:['’.]\w+)*")
_TEXTS = lxml.etree.XPath(".//text()", smart_strings=False)  # compiled once, not on every page
_ANCHOR_TAG = re.compile(r"<(?:a|area)(?=[\s/>])", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_HTTP = re.compile(r"^https?:", re.I)
# Sub-resources a browser loads from the markup alone, in the order they are listed (all the links first,
# then the scripts, ...; each kind in document order): tag → (attribute, its kind's place in the order).
# Found in one walk over those elements rather than an XPath query per kind (each one walks the whole tree)
_RESOURCES: dict[str, tuple[tuple[str, int], ...]] = {
    "link": (("href", 0),),  # kept only for the rels below
    "script": (("src", 1),),
    "img": (("src", 2),),
    "iframe": (("src", 3),),
    "frame": (("src", 4),),
    "embed": (("src", 5),),
    "object": (("data", 6),),
    "video": (("src", 7), ("poster", 8)),
    "audio": (("src", 7),),
    "source": (("src", 7),),
    "track": (("src", 7),),
    "input": (("src", 9),),  # of type image only (any case of its ASCII letters, as XPath's translate)
}
_RESOURCE_KINDS = 10
_RESOURCE_GROUPS = tuple(dict.fromkeys(_GROUPS.get(tag, tag) for tag in _RESOURCES))
_WANTED = tuple(dict.fromkeys((*_GROUPS, *_RESOURCES, "base", "meta", "title", "svg", "style")))
_IMAGE_TYPE = str.maketrans("IMAGE", "image")
# The favicons too: a rendered page's are asked by the crawler, as here (Chromium asks for them on its own time,
# if at all); no manifest (headless Chromium asks none)
_LOADED_RELS = frozenset({"stylesheet", "preload", "modulepreload", "icon"})


def encoding_of(body: bytes, content_type: str) -> str | None:
    """The encoding a browser picks: a byte order mark, the Content-Type charset, a meta charset, else None."""
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8"
    for found in (_HTTP_EQUIV_CHARSET.search(content_type or ""), _META_CHARSET.search(body[:1024])):
        if found:
            name = found.group(1)
            label = (name.decode("ascii", "replace") if isinstance(name, bytes) else name).strip(" \"'")
            try:
                return codecs.lookup(label).name
            except LookupError:
                continue
    return None


def _text(value: str | None) -> str:
    # what re.sub(r"\s+", " ", value).strip() gives (str.split's whitespace is the regex's \s), a tenth the time
    return " ".join((value or "").split())


def _content(el: Any) -> str:
    """``el.text_content()`` (XPath's ``string()``: the text of every descendant, comments left out) without
    XPath: an XPath call lets go of the GIL and takes it back, which under threads costs a switch interval
    each time; most links hold one text and no element, read without iterating."""
    if not len(el):  # no child: no comment either, so the text is all
        return el.text or ""
    return "".join(el.itertext())


def _drop_tree(el: Any) -> None:
    """``lxml.html``'s ``drop_tree`` on a plain element: out of the tree, its tail kept where it stood."""
    parent = el.getparent()
    if el.tail:
        previous = el.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + el.tail
        else:
            previous.tail = (previous.tail or "") + el.tail
    parent.remove(el)


def _let_others_run() -> None:
    """Let go of the GIL for a moment. Reading a page is milliseconds of Python; a thread waiting for the GIL
    meanwhile (the crawl's event loop, its fetches) gets it only when the switch interval (5 ms) runs out.
    The old reader let go at every XPath call (every anchor), which starved the reading thread instead: a
    few times a page keeps the others' waits near a millisecond (``benchmarks/parse_cpu.py --contention``:
    1.2 ms at the 90th percentile against 5 ms without, 0.7 ms with the old reader, which read a quarter
    of the pages in the same time). On the main thread (a page-reading worker process, where no other thread
    waits for the GIL) it would only hand the core to other processes: there it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        time.sleep(0)


# Plain elements (no lxml.html class lookup, a Python call for every element the reader touches), one
# parser per thread (a parser shared by threads parses one document at a time)
_PARSERS = threading.local()


def _fromstring(text: str) -> Any:
    """``lxml.html.document_fromstring`` of ``text``, the same tree made of plain ``lxml.etree`` elements."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = lxml.etree.HTMLParser()
    root = lxml.etree.fromstring(text, parser)
    if root is None:
        raise lxml.etree.ParserError("Document is empty")
    return root


def _attr(el: Any, name: str) -> str | None:
    """An attribute as written, by name in any case (HTML attribute names are case-insensitive)."""
    value = el.get(name)
    return value if value is not None else el.get(name.upper())


class _Document:
    """One parsed page and the lookups extract.js makes on it."""

    def __init__(self, root: Any, url: str) -> None:
        self.root = root
        self.url = url
        self._found: dict[str, list[Any]] = {}  # group (or tag) → its elements, in document order
        for el in root.iter(*_WANTED):
            group = _GROUPS.get(el.tag, el.tag)
            found = self._found.get(group)
            if found is None:
                self._found[group] = [el]
            else:
                found.append(el)
        inert = self._found.pop("inert", None)
        if inert:
            gone = {el for top in inert for el in top.iter()}
            self._found = {
                group: [el for el in found if el not in gone] for group, found in self._found.items()
            }
            for el in inert:
                _drop_tree(el)
        base = next((el for el in self.all("base") if el.get("href") is not None), None)
        self.base = join_url(url, _URL_NOISE.sub("", base.get("href").strip())) if base is not None else url
        self.has_base = base is not None
        self._metas = self.all("meta")
        self._links = [
            el for el in self.all("link") if el.get("rel") is not None and el.get("href") is not None
        ]
        self._joined: dict[str, str] = {}  # value as written → absolute (a page names the same URLs often)
        self._join = UrlJoiner(self.base)
        self._by: dict[str, dict[str, Any]] = {}  # attribute → its lowercased value → the first such <meta>

    def all(self, *groups: str) -> list[Any]:
        """The elements of ``groups`` (a tag, or a group of ``_GROUPS``), each group's in document order."""
        if len(groups) == 1:
            return self._found.get(groups[0], [])
        return [el for group in groups for el in self._found.get(group, ())]

    def absolute(self, value: str | None) -> str | None:
        """``value`` resolved against the document's base, as ``el.href`` or ``new URL(v, baseURI)`` do."""
        if not value:
            return value
        joined = self._joined.get(value)
        if joined is None:
            try:
                ref = value.strip()
                if "\t" in ref or "\n" in ref or "\r" in ref:  # rare: no regex call for the others
                    ref = _URL_NOISE.sub("", ref)
                joined = self._join(ref)
            except ValueError:
                joined = value
            self._joined[value] = joined
        return joined

    def meta(self, attribute: str, value: str) -> str | None:
        """The content of the first ``<meta attribute=value>`` (any case), "" without content, None when none."""
        by = self._by.get(attribute)
        if by is None:
            by = self._by[attribute] = {}
            for el in self._metas:
                found = _attr(el, attribute)
                if found is not None:
                    by.setdefault(found.lower(), el)
        el = by.get(value.lower())
        if el is None:
            return None
        content = el.get("content")
        return content if content is not None else ""

    def metas_starting(self, attribute: str, prefix: str) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for el in self._metas:
            name = _attr(el, attribute)
            if name is not None and name.lower().startswith(prefix):
                found[name] = el.get("content")
        return found

    def links(self, rel: str) -> list[Any]:
        return [el for el in self._links if rel in _REL_SPLIT.split(el.get("rel", "").lower())]

    def link(self, rel: str) -> str | None:
        found = self.links(rel)
        return self.absolute(found[0].get("href")) if found else None


def _metadata(doc: _Document, encoding: str) -> tuple[dict[str, Any], dict[str, Any]]:
    by_name = lambda name: doc.meta("name", name)  # noqa: E731 - read like extract.js's byName

    def by_prop(prop: str) -> str | None:
        found = doc.meta("property", prop)
        return found if found is not None else by_name(prop)

    robots = by_name("robots")
    flags = [flag.strip() for flag in (robots or "").lower().split(",")]
    title = next((el for el in doc.all("title") if next(el.iterancestors("svg"), None) is None), None)
    charset_el = next((el for el in doc._metas if el.get("charset") is not None), None)
    http_equiv = doc.meta("http-equiv", "content-type")
    declared = _HTTP_EQUIV_CHARSET.search(http_equiv) if http_equiv else None
    html_el = doc.root
    publisher = by_name("publisher")
    m = {
        "title": _text(_content(title)) if title is not None else "",
        "description": by_name("description") or "",
        "keywords": by_name("keywords") or "",
        "lang": html_el.get("lang") or "",
        "dir": html_el.get("dir") or "",
        "charset": charset_el.get("charset")
        if charset_el is not None
        else (declared.group(1).strip() if declared else _character_set(encoding)),
        "base_href": doc.base if doc.has_base else "",
        "viewport": by_name("viewport"),
        "theme_color": by_name("theme-color"),
        "robots": robots,
        "noindex": "noindex" in flags or "none" in flags,
        "nofollow": "nofollow" in flags or "none" in flags,
        "noarchive": "noarchive" in flags,
        "noimageindex": "noimageindex" in flags,
        "googlebot": by_name("googlebot"),
        "canonical": doc.link("canonical"),
        "amphtml": doc.link("amphtml"),
        "manifest": doc.link("manifest"),
        "icon": doc.link("icon"),
        "apple_touch_icon": doc.link("apple-touch-icon"),
        "og_type": by_prop("og:type"),
        "og_title": by_prop("og:title") or "",
        "og_site_name": by_prop("og:site_name"),
        "og_description": by_prop("og:description") or "",
        "og_url": doc.absolute(by_prop("og:url")),
        "og_image": doc.absolute(by_prop("og:image")),
        "og_locale": by_prop("og:locale"),
        "twitter_card": by_name("twitter:card"),
        "twitter_site": by_name("twitter:site"),
        "twitter_creator": by_name("twitter:creator"),
        "twitter_title": by_name("twitter:title"),
        "twitter_description": by_name("twitter:description"),
        "twitter_image": doc.absolute(by_name("twitter:image")),
        "author": by_name("author"),
        "generator": by_name("generator"),
        "publisher": publisher if publisher is not None else doc.link("publisher"),
        "google_site_verification": by_name("google-site-verification"),
        "msvalidate": by_name("msvalidate.01"),
        "yandex_verification": by_name("yandex-verification"),
    }
    extra: dict[str, Any] = {}
    canonicals = doc.links("canonical")
    if canonicals:
        written = canonicals[0].get("href")
        if written != m["canonical"] and re.search(
            r"^\s*$|^\s*#|\S\s+\S|^\s*[a-z][a-z0-9+.-]*:(?!//[^/])", written, re.I
        ):
            extra["canonical_href"] = written
    pagination = [
        {"rel": "prev" if rel == "previous" else rel, "href": doc.absolute(el.get("href"))}
        for el in doc._links
        for rel in _REL_SPLIT.split(el.get("rel", "").lower())
        if rel in ("next", "prev", "previous")
    ]
    if pagination:
        extra["pagination"] = pagination
    extra["alternate"] = doc.link("alternate")
    extra["hreflang"] = [
        {"hreflang": el.get("hreflang"), "href": doc.absolute(el.get("href"))}
        for el in doc.links("alternate")
        if el.get("hreflang") is not None
    ]
    extra["referrer"] = by_name("referrer")
    extra["apple"] = doc.metas_starting("name", "apple-")
    extra["msapplication"] = doc.metas_starting("name", "msapplication-")
    extra["other_og"] = doc.metas_starting("property", "og:")
    return m, extra


def _character_set(encoding: str) -> str:
    """``document.characterSet``'s spelling of a Python codec name."""
    return {"utf-8": "UTF-8", "cp1252": "windows-1252", "shift_jis": "Shift_JIS", "euc_jp": "EUC-JP"}.get(
        encoding, encoding
    )


class _Places:
    """Line and column of each ``<a>``/``<area>`` start tag in the source, in document order.

    What ``source.place_anchors`` finds with html.parser, at a fraction of its cost (it was two thirds of
    reading a page): libxml2 knows each element's line, and the tag is the next ``<a``/``<area`` from there
    (or, for a start tag over several lines, from the previous one's end).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.cursor = 0
        # every tag outside comments, found once: a tag is never cut by a line's end (a newline ends the
        # line, and none is in a tag's name), so those in a line are those a search of that line finds
        tags = [m.span() for m in _ANCHOR_TAG.finditer(text)]
        if "<!--" in text:
            comments = [m.span() for m in _COMMENT.finditer(text)]
            comment_starts = [start for start, _ in comments]

            def commented(at: int) -> bool:
                i = bisect.bisect_right(comment_starts, at) - 1
                return i >= 0 and at < comments[i][1]

            tags = [(start, end) for start, end in tags if not commented(start)]
        self._tag_starts = [start for start, _ in tags]
        self._tag_ends = [end for _, end in tags]

    def _next(self, start: int, end: int) -> int | None:
        """The index of the first tag starting in [start, end)."""
        i = bisect.bisect_left(self._tag_starts, start)
        return i if i < len(self._tag_starts) and self._tag_ends[i] <= end else None

    def place(self, line: int | None) -> tuple[int, int] | None:
        if not line or line > len(self.starts):
            return None
        ends = self.starts[line] if line < len(self.starts) else len(self.text)
        begins = self.starts[line - 1]
        found = self._next(begins if begins > self.cursor else self.cursor, ends)
        if found is None:  # the tag began on an earlier line than libxml2 reports
            found = self._next(self.cursor, ends)
        if found is None:
            return None
        start = self._tag_starts[found]
        self.cursor = self._tag_ends[found]
        at = bisect.bisect_right(self.starts, start)
        return at, start - self.starts[at - 1] + 1


def _anchors(doc: _Document, places: _Places) -> list[Anchor]:
    """The records ``extract.anchors_from`` makes of what extract.js finds, made here directly (no dict per
    anchor to read back), each with its place in the source."""
    found = []
    # an SVG link is no anchor (its href is no string in a browser)
    drawn = {el for svg in doc.all("svg") for el in svg.iter("a")}
    for n, el in enumerate(doc.all("a"), 1):
        if not n % 128:
            _let_others_run()
        where = places.place(el.sourceline)  # every tag in order, so the ones left out are stepped over
        written = el.get("href")
        if written is None or (drawn and el in drawn):
            continue
        href = doc.absolute(written) if written else doc.base
        if not href or not _HTTP.match(href):
            continue
        text = _text(el.get("aria-label") or _content(el))
        if not text:
            img = next((img for img in el.iter("img") if img.get("alt") is not None), None)
            text = img.get("alt").strip() if img is not None else (el.get("alt") or el.get("title") or "")
        url, _, fragment = href.partition("#")
        if url:
            line, col = where if where is not None else (None, None)
            found.append(Anchor(href=url, text=text, fragment=fragment, raw_href=written, line=line, col=col))
    return found


def _headings(doc: _Document) -> list[dict[str, Any]]:
    # what extract.js gives for the rendered page: the whole text and the fragment links' (headings_from
    # leaves the permalink out)
    return [
        {
            "level": int(el.tag[1]),
            "text": _text(_content(el)),
            "links": [_text(_content(a)) for a in el.iter("a") if (a.get("href") or "").startswith("#")],
        }
        for el in doc.all("h")
    ]


def _scripts(doc: _Document) -> list[dict[str, Any]]:
    found = []
    for el in doc.all("script"):
        kind = (el.get("type") or "").lower()
        if kind in ("application/ld+json", "speculationrules"):
            found.append(
                {"kind": "speculationrules" if kind == "speculationrules" else "jsonld", "raw": el.text or ""}
            )
    return found


def _words(doc: _Document) -> int | None:
    """Words of the body's text, scripts and styles left out; the last reading of a page (it strips them)."""
    body = doc.root.find("body")
    if body is None:
        return None
    # strip_elements(body, "script", "style", with_tail=False) and the words of " ".join(body.itertext()):
    # each piece itertext gives is a run of adjacent text nodes, and the parser makes no two adjacent, but
    # strip_elements does (the text before a script and its tail); dropped with their tails joined to the
    # text before instead, the text nodes are the pieces, and one XPath query finds them all (itertext
    # makes an element object for every node: most of the time of reading a page's words)
    for el in doc.all("script", "style"):
        if body in el.iterancestors("body"):
            _drop_tree(el)
    return _count_words(" ".join(_TEXTS(body)))


def _count_words(text: str) -> int:
    """``len(_WORD.findall(text))`` in two thirds of the time: no word spans whitespace, and a piece between
    whitespace made of word characters only is one word (``str.isalnum`` is the regex's ``\\w`` but for "_"),
    counted without the regex, which reads the other pieces only."""
    pieces = text.split()
    others = list(itertools.filterfalse(str.isalnum, pieces))
    return len(pieces) - len(others) + _WORD.subn("", " ".join(others))[1]  # subn: no list of the words


def _images(doc: _Document, presets: Iterable[str]) -> list[Image]:
    """Each ``<img>`` as written, once per preset as the rendered capture does; no layout, so no sizes."""
    written = []
    for el in doc.all("img"):
        src = el.get("src") or ""
        first = (el.get("srcset") or "").strip().split(",")[0].strip().split(" ")[0]
        written.append(
            {
                "src": src,
                "current_src": doc.absolute(src or first) or "",
                "alt": el.get("alt"),
                "is_lazy": (el.get("loading") or "").lower() == "lazy",
                "markup": lxml.html.tostring(el, encoding="unicode", with_tail=False)[:2000],
            }
        )
    images = []
    for preset in presets:
        width = PRESETS.get(preset, (0, 0))[0]
        images += [Image(**item, viewport_width=width) for item in written]
    return images


def _resources(doc: _Document) -> list[str]:
    kinds: list[list[str]] = [[] for _ in range(_RESOURCE_KINDS)]
    for el in doc.all(*_RESOURCE_GROUPS):
        for attribute, kind in _RESOURCES[el.tag]:
            value = el.get(attribute)
            if value is None:
                continue
            if kind == 0 and not _LOADED_RELS & set(_REL_SPLIT.split(el.get("rel", "").lower())):
                continue
            if kind == 9 and (el.get("type") or "").translate(_IMAGE_TYPE) != "image":
                continue
            kinds[kind].append(value)
    urls: dict[str, None] = {}
    for value in itertools.chain.from_iterable(kinds):
        url = doc.absolute(value)
        if url and _HTTP.match(url):
            urls.setdefault(url.split("#", 1)[0])
    return list(urls)


def _probe(doc: _Document) -> dict[str, Any]:
    """What tags.PROBE_JS reads that markup alone shows: generator metas and the scripts' text."""
    return {
        "generators": [
            el.get("content") or "" for el in doc._metas if (_attr(el, "name") or "").lower() == "generator"
        ],
        "scripts": "\n".join(
            (doc.absolute(el.get("src")) or "") + "\n" + (el.text or "")[:100000] for el in doc.all("script")
        ),
    }


def parse(result: ScrapeResult, body: bytes, options: dict[str, Any]) -> ScrapeResult:
    """Fill ``result`` (status and headers already there) from ``body``, the HTML the server sent."""
    return parse_document(result, body, options)[0]


def parse_document(
    result: ScrapeResult, body: bytes, options: dict[str, Any], *, template: bool = False
) -> tuple[ScrapeResult, Any]:
    """``parse``, with the lxml document it read (None when the HTML could not be parsed), for readers of the
    same HTML that would parse it again. ``template``: set ``result.template`` from that document too (what
    ``--render auto`` groups pages by), before anything is taken out of it."""
    declared = encoding_of(body, result.headers.get("content-type", ""))
    text = source.decode_sent(body, declared)  # as a browser decodes it: what was declared wins
    encoding = declared or "utf-8"
    result.source = text
    result.html = text  # what analyzers read as the page: without a browser, the HTML as sent
    final = result.redirect_chain[-1] if result.redirect_chain else result.url
    # as the HTML tokenizer and validators count lines (most pages have no "\r": no copies of them)
    lines = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    try:
        root = _fromstring(lines)
    except (lxml.etree.ParserError, ValueError) as exc:
        result.errors.append(PageError(step="parse", message=f"the HTML could not be parsed: {exc}"))
        result.metadata, result.anchors, result.headings = {"title": ""}, [], []
        return result, None
    if template:
        result.template = template_key_of(root)
    doc = _Document(root, final)
    metadata, extra = _metadata(doc, encoding)
    result.metadata = metadata_from(metadata)
    result.extra.update(extra)
    refresh = doc.meta("http-equiv", "refresh")
    if refresh:
        result.extra["refresh"] = refresh
    _let_others_run()
    result.anchors = _anchors(doc, _Places(lines))
    _let_others_run()
    result.headings = headings_from(_headings(doc))
    result.jsonld = jsonld_from(_scripts(doc))
    result.tags = tags.detect(text, _probe(doc), result.headers, guess_cdn(result.headers))
    if options.get("image", True):
        result.images = _images(doc, list(options.get("image_presets") or IMAGE_PRESETS))
    result.resources = _resources(doc)
    _let_others_run()
    result.word_count = _words(doc)
    return result, root
