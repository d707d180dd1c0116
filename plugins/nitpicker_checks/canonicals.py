"""Canonical checks: pages without one or naming themselves, conflicting or misplaced canonicals, canonicals
naming a URL search engines will not index or no link reaches. Read from what the crawl stored: the rendered
HTML, the HTML as sent and the response headers (an HTTP ``Link: <…>; rel="canonical"``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

from nitpicker_core import CheckContext, Finding, canonical_elements, non_indexable_reason, normalize_url

from .common import (
    content_pages,
    directives,
    family,
    headers,
    html_facts,
    html_reader,
    indexability,
    memo,
    reached,
    rows,
)
from .pages import canonical_is_invalid, invalid_canonicals

Finder = Callable[[CheckContext], Iterator[Finding]]
HELP = "https://developers.google.com/search/docs/crawling-indexing/consolidate-duplicate-urls"
# One entry of an HTTP Link header: <target>; param; param=value
_LINK_ENTRY = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]+)*)")
_REL = re.compile(r"""\brel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.IGNORECASE)


class Declared(NamedTuple):
    """The canonicals a page declares, each as written: in the rendered HTML, in the HTML as sent, in the
    HTTP Link header; and those written outside <head> (the HTML as sent, else the rendered one)."""

    rendered: tuple[str, ...]
    sent: tuple[str, ...] | None  # None: the HTML as sent was not kept
    header: tuple[str, ...]
    outside_head: tuple[str, ...]


def header_canonicals(value: str) -> tuple[str, ...]:
    """The targets of ``rel="canonical"`` entries of an HTTP Link header value."""
    found = []
    for match in _LINK_ENTRY.finditer(value or ""):
        for rel in _REL.finditer(match.group(2)):
            if "canonical" in (rel.group(1) or rel.group(2) or "").lower().split():
                found.append(match.group(1).strip())
    return tuple(found)


@html_reader("canonicals")
@html_reader("canonicals_sent", sent=True)
def _page_elements(url: str, html: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    # (every canonical href, those outside <head>): what the crawl stores as the page's "canonicals"
    return canonical_elements(html)


def declared(ctx: CheckContext) -> dict[str, Declared]:
    """What each content page of the commit declares as its canonical (pages declaring none left out)."""

    def load() -> dict[str, Declared]:
        stored = directives(ctx)
        # every page's HTML in one pass each, shared with the other checks reading it (a query per page was
        # most of the time on a large commit)
        elements = {False: html_facts(ctx, "canonicals"), True: html_facts(ctx, "canonicals_sent")}
        found = {}
        for row in content_pages(ctx):
            page = stored.get(row["url"])
            header = header_canonicals(headers(row).get("link", ""))
            rendered = elements[False].get(row["url"])
            sent = elements[True].get(row["url"])
            if rendered is None and page and page.canonical:
                rendered = ((page.canonical,), ())  # no HTML kept: the stored column
            item = Declared(
                rendered[0] if rendered else (),
                sent[0] if sent else None,
                header,
                (sent or rendered or ((), ()))[1],
            )
            if item.rendered or item.sent or item.header:
                found[row["url"]] = item
        return found

    return memo(ctx, "declared_canonicals", load)


def _resolved(url: str, written: str) -> str | None:
    """A canonical as written, resolved against its page and normalised (None when invalid)."""
    if canonical_is_invalid(written, url):
        return None
    try:
        return normalize_url(urljoin(url, written.strip()))
    except ValueError:
        return None


def effective(ctx: CheckContext) -> dict[str, str]:
    """Each content page's valid canonical, normalised: the first of the rendered HTML, else the Link header."""

    def load() -> dict[str, str]:
        found = {}
        for url, item in declared(ctx).items():
            for written in (*item.rendered[:1], *item.header[:1]):
                target = _resolved(url, written)
                if target:
                    found[url] = target
                    break
        return found

    return memo(ctx, "effective_canonicals", load)


def is_self(url: str, target: str) -> bool:
    """Whether a normalised canonical ``target`` is ``url`` itself."""
    try:
        return target == normalize_url(url)
    except ValueError:
        return False


def missing(ctx: CheckContext) -> Iterator[Finding]:
    # Only indexable pages: a noindex page or an error has nothing to consolidate
    found = declared(ctx)
    for row in sorted(content_pages(ctx), key=lambda r: r["url"]):
        if row["url"] not in found and indexability(row) is None:
            yield Finding(row["url"])


def self_referencing(ctx: CheckContext) -> Iterator[Finding]:
    for url, target in sorted(effective(ctx).items()):
        if is_self(url, target):
            yield Finding(url)


def _indexability(ctx: CheckContext, url: str) -> str | None:
    row = rows(ctx).get(url)
    if row is None:
        return None
    canonical = effective(ctx).get(url)
    return non_indexable_reason({**row, "headers": headers(row), "canonical": canonical})


def target_not_indexable(ctx: CheckContext) -> Iterator[Finding]:
    # A target the crawl never fetched is unknown, not a finding; one that canonicalises on is a chain
    for url, target in sorted(effective(ctx).items()):
        if is_self(url, target):
            continue
        reason = _indexability(ctx, target)
        if reason:
            yield Finding(url, f"{target}: {reason}")


def conflicting(ctx: CheckContext) -> Iterator[Finding]:
    invalid = invalid_canonicals(ctx)
    for url, item in sorted(declared(ctx).items()):
        if url in invalid:
            continue
        sources = [("HTML", item.rendered), ("HTTP Link", item.header)]
        if item.sent is not None and item.sent:
            sources.append(("HTML as sent", item.sent))
        values: dict[str, list[str]] = {}
        for name, written in sources:
            for value in written:
                values.setdefault(_resolved(url, value) or value.strip(), []).append(name)
        if len(values) > 1:
            yield Finding(
                url,
                " | ".join(f"{' + '.join(dict.fromkeys(names))}: {value}" for value, names in values.items()),
            )


def outside_head(ctx: CheckContext) -> Iterator[Finding]:
    for url, item in sorted(declared(ctx).items()):
        for written in item.outside_head:
            yield Finding(url, written.strip())


def not_linked(ctx: CheckContext) -> Iterator[Finding]:
    # The target as reached by links, redirects followed: a canonical nobody links to is a weak signal
    table = rows(ctx)
    targets = {target for url, target in effective(ctx).items() if not is_self(url, target)}
    linked = reached(ctx, self_links=False) if targets else set()
    for target in sorted(targets):
        row = table.get(target)
        if target not in linked and (row is None or not row.get("is_external")) and _internal(ctx, target):
            yield Finding(target)


def _internal(ctx: CheckContext, url: str) -> bool:
    hosts: set[str] = memo(
        ctx, "page_hosts", lambda: {urlsplit(r["url"]).hostname for r in content_pages(ctx)}
    )
    return urlsplit(url).hostname in hosts


_check = family("indexability", HELP)


CHECKS = [
    _check(
        "canonical-missing",
        "Indexable pages without a canonical",
        "low",
        "Indexable HTML pages that declare no canonical, neither a <link rel=canonical> nor an HTTP Link "
        "header: search engines pick one of the page's duplicate URLs (tracking parameters, trailing slashes, "
        "upper case) themselves.",
        'Add <link rel="canonical" href="…"> with the page\'s own public URL to its <head>.',
        missing,
        34,
        type="opportunity",
    ),
    _check(
        "canonical-self",
        "Self-referencing canonicals",
        "info",
        "HTML pages whose canonical is their own URL: the recommended setup, listed so the pages that "
        "consolidate elsewhere (canonical-mismatch) and those that declare nothing can be told apart.",
        "Nothing to do.",
        self_referencing,
        35,
        type="warning",
    ),
    _check(
        "canonical-target-not-indexable",
        "Canonical points to a URL that will not be indexed",
        "high",
        "HTML pages whose canonical names a crawled URL search engines will not index (the detail: the target "
        "and why: a 4xx/5xx status, a redirect, noindex, blocked by robots.txt, or a canonical of its own "
        "naming yet another URL). Search engines ignore the hint, or drop both pages.",
        "Point the canonical at the final, indexable URL of the content (follow the redirect, drop the noindex).",
        target_not_indexable,
        36,
    ),
    _check(
        "canonical-conflict",
        "Conflicting canonicals",
        "high",
        "HTML pages declaring different canonicals (the detail: each value and where it was written): several "
        "<link rel=canonical> elements, the HTML against the HTTP Link header, or the HTML as sent against "
        "the HTML after scripts ran. Search engines then ignore all of them.",
        "Declare one canonical, in one place; make scripts leave the server's canonical as it is.",
        conflicting,
        37,
    ),
    _check(
        "canonical-outside-head",
        "Canonical outside <head>",
        "medium",
        "HTML pages whose <link rel=canonical> is outside <head> in the HTML as sent (in the body, or after an "
        "element that closes the head early): search engines ignore a canonical there.",
        "Move the <link rel=canonical> into <head>, before any element that does not belong there.",
        outside_head,
        38,
    ),
    _check(
        "canonical-not-linked",
        "Canonical URLs no internal link reaches",
        "low",
        "Internal URLs that pages name as their canonical but no internal link of the crawl reaches (redirects "
        "followed): the URL search engines should index gets no link signal, and visitors never see it.",
        "Link to the canonical URL itself in menus and content, not to its duplicates.",
        not_linked,
        39,
        type="warning",
    ),
]
