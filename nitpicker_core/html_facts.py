"""What the canonical, nofollow, JavaScript and missing-title checks read out of a page's HTML, found once where
the page is scraped.

The crawl stores these facts with the page's state (``page_state.html_facts``, format 7) so that checking a
commit does not decompress and search every page's stored HTML again; an archive written before has none,
and the checks then read the stored HTML as before (``nitpicker_checks.common.html_facts``). Both paths run
the functions here, so they find the same.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from nitpicker_core.main_content import locate
from nitpicker_core.main_content import words as content_words
from nitpicker_core.permalink import heading_text
from nitpicker_core.urls import normalize as normalize_url

_LINK_TAG = re.compile(r"<link\b[^>]*canonical[^>]*>", re.IGNORECASE)
# "nofollow" in any case of its ASCII letters: where html.lower() has it (no other character lowers to one of
# them), found without making a lowercased copy of the page
_NOFOLLOW = re.compile("[nN][oO][fF][oO][lL][lL][oO][wW]")
_CANONICAL_XPATH = "//link[contains(concat(' ', normalize-space(translate(@rel, 'CANONIL', 'canonil')), ' '), ' canonical ')]"

Elements = tuple[tuple[str, ...], tuple[str, ...]]

# The element whose absence or emptiness a field's check tells apart (the scrape stores "" for both), and a
# text without which the HTML cannot hold it (most such pages have none: no parse needed to say "missing").
ABSENCE_ELEMENTS = {
    "title": ("//head/title | //title", "<title"),
    "description": ("//meta[translate(@name, 'DESCRIPTION', 'description') = 'description']", "description"),
}
#: The fields ``absence`` tells about, as the page's metadata names them.
ABSENCE_FIELDS = tuple(ABSENCE_ELEMENTS)


def absence(html: str | None, field: str) -> str:
    """Of a page whose ``field`` (title, description) is empty: "missing" when its HTML has no such element,
    "empty" when it has one; "" without HTML."""
    if not html or html.isspace():  # what strip() would leave empty, without copying a long page
        return ""
    xpath, needle = ABSENCE_ELEMENTS[field]
    # the document's title and its description live in <head>: a long page's body is not parsed for them
    # (a <title> of an inline SVG in the body is no page title either), nor lowercased: a growing prefix
    # is, until it holds the first </head> (case folding is per character, so the prefix's is the whole's)
    size = 16384
    while True:
        lowered = html[:size].lower()
        end = lowered.find("</head>")
        if end >= 0 or size >= len(html):
            break
        size *= 4
    head = html[: end + len("</head>")] if end >= 0 else html
    if needle not in (lowered[: len(head)]):
        return "missing"
    try:
        doc = lxml.html.document_fromstring(head)
    except (ValueError, lxml.etree.ParserError):
        return ""
    return "empty" if doc.xpath(xpath) else "missing"


def canonical_elements(html: str | None) -> Elements | None:
    """(every canonical href, those outside <head>) of an HTML document; None when it cannot be read."""
    if not html or not html.strip():
        return None
    # Parsing a whole page is milliseconds, too slow at 100,000 pages: a page without a canonical-looking
    # <link> is not parsed, one with is parsed only up to its last one (what comes later cannot move it)
    tags = list(_LINK_TAG.finditer(html))
    if not tags:
        return (), ()
    try:
        doc = lxml.html.document_fromstring(html[: tags[-1].end()])
    except (ValueError, lxml.etree.ParserError):
        return None
    every, outside = [], []
    for el in doc.xpath(_CANONICAL_XPATH):
        href = el.get("href")
        if href is None:
            continue
        every.append(href)
        if not any(parent.tag == "head" for parent in el.iterancestors()):
            outside.append(href)
    return tuple(every), tuple(outside)


def nofollow_targets(url: str, html: str, doc: Any = None) -> list[str]:
    """The internal URLs a page's links with rel=nofollow point to, normalised, in document order.

    ``doc``: ``html`` parsed already by ``lxml.html`` (a page read without a browser), not parsed again.
    """
    found: list[str] = []
    if not html or not _NOFOLLOW.search(html):  # most pages: no parse
        return found
    if doc is None:
        try:
            doc = lxml.html.document_fromstring(html)
        except (ValueError, lxml.etree.ParserError):
            return found
    # what //base/@href and //a[@href and @rel] | //area[@href and @rel] find, in one walk over the links
    # (an XPath query walks the whole document: most of the time of reading one)
    base = next((el.get("href") for el in doc.iter("base") if el.get("href") is not None), url)
    host = urlsplit(url).hostname
    for el in doc.iter("a", "area"):
        if el.get("rel") is None or el.get("href") is None:  # most links have no rel: one lookup
            continue
        rel = str(el.get("rel") or "").lower().split()
        if "nofollow" not in rel:
            continue
        try:
            target = urljoin(urljoin(url, str(base)), str(el.get("href")).strip())
            internal = target.startswith(("http://", "https://")) and urlsplit(target).hostname == host
            if internal:
                found.append(normalize_url(target))
        except ValueError:  # an href no request can go to is no link search engines follow
            continue
    return found


#: The fields JavaScript can set or change, in the order ``js_changed`` lists them.
JS_FIELDS = ("title", "description", "canonical", "robots", "h1")
#: At most this many rendered-only links are kept per page (their count is always exact).
JS_LINKS_KEPT = 100


def _text(el: Any) -> str:
    return " ".join(" ".join(el.itertext()).split())


def _heading(el: Any) -> str:
    """A heading's text as the scrape stores it: its permalink anchor ("¶") left out (``heading_text``)."""
    return heading_text(_text(el), [_text(a) for a in el.xpath('.//a[starts-with(@href, "#")]')])


_NON_TEXT = ("script", "style", "template", "noscript")  # main_content.NON_TEXT: no visible text
_PARSER = lxml.etree.HTMLParser()  # plain elements: no lxml.html class lookup for every node


def _parse(html: str | None) -> Any:
    """One HTML document's root as plain lxml elements, or None when there is nothing to parse."""
    if not html or not html.strip():
        return None
    try:
        return lxml.etree.fromstring(html, _PARSER)
    except (ValueError, lxml.etree.ParserError, lxml.etree.XMLSyntaxError):
        return None


def _metas(doc: Any) -> dict[str, str]:
    """Each ``<meta name>``'s content by its lowercased name; the first of a name wins."""
    return {
        str(m.get("name")).strip().lower(): str(m.get("content") or "").strip()
        for m in reversed(doc.xpath("//meta[@name]"))
    }


def _head_facts(url: str, html: str, main: bool) -> dict[str, Any] | None:
    """Title, description, canonical, meta robots, first H1, link hrefs as written (with the base they are
    resolved against) and the words of the main content (``main``) or of the whole body of one HTML
    document; None when it cannot be parsed."""
    doc = _parse(html)
    if doc is None:
        return None
    titles = doc.xpath("//title")
    metas = _metas(doc)
    canonicals = doc.xpath(_CANONICAL_XPATH + "/@href")
    h1 = doc.xpath("//h1")
    found: dict[str, Any] = {
        "title": _text(titles[0]) if titles else None,
        "description": " ".join(metas["description"].split()) if "description" in metas else None,
        "canonical": str(canonicals[0]).strip() if canonicals else None,
        "robots": " ".join(metas["robots"].lower().split()) if "robots" in metas else None,
        "h1": _heading(h1[0]) if h1 else None,
        "base": str((doc.xpath("//base/@href") or [url])[0]),
        "hrefs": {str(h).strip() for h in doc.xpath("//a/@href | //area/@href")},
    }
    # the text as main_content.visible_texts reads it, pieces joined by spaces
    lxml.etree.strip_elements(doc, *_NON_TEXT, with_tail=False)
    scope = locate(doc, None)[0] if main else doc.find("body")
    found["words"] = content_words(" ".join(scope.itertext())) if scope is not None else []
    return found


def _internal(url: str, base: str, hrefs: set[str]) -> set[str]:
    """The internal link targets of ``hrefs`` (resolved against ``base``), normalised as the crawl does."""
    host = urlsplit(url).hostname
    found: set[str] = set()
    for href in hrefs:
        try:
            target = urljoin(urljoin(url, base), href)
            if target.startswith(("http://", "https://")) and urlsplit(target).hostname == host:
                found.add(normalize_url(target))
        except ValueError:
            continue
    return found


def noindex(robots: str | None) -> bool:
    """Whether a meta robots content keeps the page out of the index (noindex, or none)."""
    return bool(robots) and bool({"noindex", "none"} & set(str(robots).replace(",", " ").split()))


def js_dependence(url: str, html: str | None, source: str | None) -> dict[str, Any] | None:
    """What the rendered HTML of a page has that the HTML as sent has not; None when either is missing or
    cannot be parsed.

    ``links``: the internal link targets only in the rendered page (sorted, the first ``JS_LINKS_KEPT``),
    ``link_count`` how many; ``text_share``: the percent (rounded down) of the rendered main text's words
    that the body of the HTML as sent already has (None without main text); ``changed``: field → [as sent,
    rendered] for each of ``JS_FIELDS`` that differs; ``noindex``: [as sent, rendered] when meta robots
    noindex is in one version only.
    """
    if html is None or source is None:
        return None
    rendered, sent = _head_facts(url, html, main=True), _head_facts(url, source, main=False)
    if rendered is None or sent is None:
        return None
    only: list[str] = []
    if rendered["base"] != sent["base"] or not rendered["hrefs"] <= sent["hrefs"]:
        # most pages: the same hrefs as written against the same base, the same targets (nothing resolved)
        seen = _internal(url, sent["base"], sent["hrefs"])
        new = rendered["hrefs"] if rendered["base"] != sent["base"] else rendered["hrefs"] - sent["hrefs"]
        only = sorted(_internal(url, rendered["base"], new) - seen)
    main = Counter(rendered["words"])
    total = sum(main.values())
    seen_words = sum((main & Counter(sent["words"])).values())
    found: dict[str, Any] = {
        "links": only[:JS_LINKS_KEPT],
        "link_count": len(only),
        "text_share": seen_words * 100 // total if total else None,
        "changed": {f: [sent[f], rendered[f]] for f in JS_FIELDS if sent[f] != rendered[f]},
    }
    if noindex(sent["robots"]) != noindex(rendered["robots"]):
        found["noindex"] = [noindex(sent["robots"]), noindex(rendered["robots"])]
    return found


#: The fields ``version_record`` gives, in the order the viewer's raw-vs-rendered table shows them.
VERSION_FIELDS = ("title", "description", "canonicals", "robots", "h1s", "link_count", "main_words")


def version_record(url: str, html: str | None) -> dict[str, Any] | None:
    """What a reader finds in one version of a page (the HTML as sent, or the rendered one), read the same
    way for both, for showing them side by side; None when there is no HTML or it cannot be parsed.

    ``title``, ``description`` and ``robots`` (the first of each, whitespace collapsed, robots lowercased),
    ``canonicals`` (every canonical ``<link>``'s href as written) and ``h1s`` (every H1's text), ``links``
    (every http(s) ``<a href>``/``<area href>`` target, resolved against ``<base>``, normalised as the crawl
    does, sorted), ``link_count`` (how many) and ``main_words`` (the words of the main content as the
    duplicate checks find it: ``<main>``, ``role=main``, ``<article>``, else the densest block).
    """
    doc = _parse(html)
    if doc is None:
        return None
    titles = doc.xpath("//title")
    metas = _metas(doc)
    base = urljoin(url, str((doc.xpath("//base/@href") or [url])[0]))
    links: set[str] = set()
    for href in doc.xpath("//a/@href | //area/@href"):
        try:
            target = urljoin(base, str(href).strip())
            if target.startswith(("http://", "https://")):
                links.add(normalize_url(target))
        except ValueError:  # an href no request can go to
            continue
    found: dict[str, Any] = {
        "title": _text(titles[0]) if titles else None,
        "description": " ".join(metas["description"].split()) if "description" in metas else None,
        "canonicals": [str(h).strip() for h in doc.xpath(_CANONICAL_XPATH + "/@href")],
        "robots": " ".join(metas["robots"].lower().split()) if "robots" in metas else None,
        "h1s": [_heading(h) for h in doc.xpath("//h1")],
        "links": sorted(links),
        "link_count": len(links),
    }
    lxml.etree.strip_elements(doc, *_NON_TEXT, with_tail=False)
    scope = locate(doc, None)[0]
    found["main_words"] = len(content_words(" ".join(scope.itertext()))) if scope is not None else 0
    return found


# What is stored, by the name of the checks' reader of the same (``common.html_reader``): of the rendered
# HTML, and of the HTML as sent.
RENDERED: dict[str, Callable[[str, str], Any]] = {
    "canonicals": lambda url, html: canonical_elements(html),
    "nofollow_links": nofollow_targets,
}
SENT: dict[str, Callable[[str, str], Any]] = {"canonicals_sent": lambda url, html: canonical_elements(html)}
_SENT_OF = {"canonicals_sent": "canonicals"}  # what a reader of the sent HTML reads of the rendered one
#: The name of what ``js_dependence`` found, stored only for a rendered page with both versions.
JS = "js"
#: The name of what ``absence`` found of the page's empty fields (field → "missing", "empty" or ""), stored
#: only for a page with an empty title or description: the others' checks never ask.
ABSENT = "absent"
#: Where archive format 7 kept ``--render auto``'s decision (nitpicker_core/crawler/auto.py) in a page's
#: facts; a crawl now stores it with the commit (``ScrapeResult.render_decision``; read it with
#: ``read.page_render_decision``), as the state is shared by every commit that found the same content.
RENDER = "render"


def render_decision(text: str | None) -> dict[str, Any] | None:
    """The ``--render auto`` decision a format-7 crawl stored in a page's facts, None without one."""
    if not text:
        return None
    try:
        found = json.loads(text).get(RENDER)
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def derive(
    url: str,
    html: str | None,
    source: str | None,
    rendered: bool = True,
    doc: Any = None,
    metadata: Mapping[str, Any] | None = None,
) -> str | None:
    """The facts of a page as stored (JSON: reader name → what it found), None when it has no HTML.

    A reader appears only when its HTML is there (the rendered one, or the one sent) and it did not fail;
    a page missing one is read from its stored HTML by the checks, as in an archive without the facts.
    A rendered page (``rendered``) with both versions also has ``JS``: what JavaScript changed; a page
    left unrendered (``--render never``) has one version only, and ``JS`` null (nothing to compare).
    Given the page's ``metadata`` as scraped, a page whose title or description is empty also has
    ``ABSENT``: whether the rendered HTML lacks that element or has it empty (``absence``); a page with
    both has nothing more (no cost where most pages are).
    """
    facts: dict[str, Any] = {}
    for readers, text in ((RENDERED, html), (SENT, source)):
        if text is None:
            continue
        for name, reader in readers.items():
            if text is html and name in _SENT_OF:  # a page read as sent: one HTML, read once
                if _SENT_OF[name] in facts:
                    facts[name] = facts[_SENT_OF[name]]
                continue
            try:
                facts[name] = (
                    reader(url, text) if name != "nofollow_links" else nofollow_targets(url, text, doc)
                )
            except Exception:  # noqa: BLE001, S112 - the checks read this one from the HTML and report it
                continue
    if not rendered:
        if facts:
            facts[JS] = None
    elif html is not None and source is not None:
        try:
            facts[JS] = js_dependence(url, html, source)
        except Exception:  # noqa: BLE001, S110 - the checks read this one from the HTML
            pass
    if metadata is not None and html is not None:
        empty = [f for f in ABSENCE_FIELDS if not str(metadata.get(f) or "").strip()]
        try:
            if empty:
                facts[ABSENT] = {f: absence(html, f) for f in empty}
        except Exception:  # noqa: BLE001, S110 - the checks read this one from the HTML
            pass
    return json.dumps(facts, separators=(",", ":"), ensure_ascii=False) if facts else None


def stored(text: str) -> dict[str, Any]:
    """The facts of ``derive`` read back (canonical elements as tuples, as the reader gives them)."""
    facts: dict[str, Any] = json.loads(text)
    for name in ("canonicals", "canonicals_sent"):
        value = facts.get(name)
        if value is not None:
            facts[name] = (tuple(value[0]), tuple(value[1]))
    return facts
