"""What the canonical and nofollow checks read out of a page's HTML, found once where the page is scraped.

The crawl stores these facts with the page's state (``page_state.html_facts``, format 7) so that checking a
commit does not decompress and search every page's stored HTML again; an archive written before has none,
and the checks then read the stored HTML as before (``nitpicker_checks.common.html_facts``). Both paths run
the functions here, so they find the same.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from nitpicker_core.urls import normalize as normalize_url

_LINK_TAG = re.compile(r"<link\b[^>]*canonical[^>]*>", re.IGNORECASE)
_CANONICAL_XPATH = "//link[contains(concat(' ', normalize-space(translate(@rel, 'CANONIL', 'canonil')), ' '), ' canonical ')]"

Elements = tuple[tuple[str, ...], tuple[str, ...]]


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


def nofollow_targets(url: str, html: str) -> list[str]:
    """The internal URLs a page's links with rel=nofollow point to, normalised, in document order."""
    found: list[str] = []
    if not html or "nofollow" not in html.lower():  # most pages: no parse
        return found
    try:
        doc = lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return found
    base = (doc.xpath("//base/@href") or [url])[0]
    host = urlsplit(url).hostname
    for el in doc.xpath("//a[@href and @rel] | //area[@href and @rel]"):
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


# What is stored, by the name of the checks' reader of the same (``common.html_reader``): of the rendered
# HTML, and of the HTML as sent.
RENDERED = {"canonicals": lambda url, html: canonical_elements(html), "nofollow_links": nofollow_targets}
SENT = {"canonicals_sent": lambda url, html: canonical_elements(html)}


def derive(url: str, html: str | None, source: str | None) -> str | None:
    """The facts of a page as stored (JSON: reader name → what it found), None when it has no HTML.

    A reader appears only when its HTML is there (the rendered one, or the one sent) and it did not fail;
    a page missing one is read from its stored HTML by the checks, as in an archive without the facts.
    """
    facts: dict[str, Any] = {}
    for readers, text in ((RENDERED, html), (SENT, source)):
        if text is None:
            continue
        for name, reader in readers.items():
            try:
                facts[name] = reader(url, text)
            except Exception:  # noqa: BLE001, S112 - the checks read this one from the HTML and report it
                continue
    return json.dumps(facts, separators=(",", ":"), ensure_ascii=False) if facts else None


def stored(text: str) -> dict[str, Any]:
    """The facts of ``derive`` read back (canonical elements as tuples, as the reader gives them)."""
    facts: dict[str, Any] = json.loads(text)
    for name in ("canonicals", "canonicals_sent"):
        value = facts.get(name)
        if value is not None:
            facts[name] = (tuple(value[0]), tuple(value[1]))
    return facts
