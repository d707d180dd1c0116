"""Hreflang checks: language codes, return links, self references and targets of a commit's alternates.

The alternates come from ``<link rel="alternate" hreflang>`` of the rendered page, from the page's HTTP
``Link`` header (``nitpicker_core.page_alternates``) and from the ``<xhtml:link>`` the sitemaps give the
page's ``<url>`` (``nitpicker_core.sitemap_alternates``): one set per page, whatever declares each alternate,
so a return link may sit in another source than the link it returns. A return link is judged only where the
crawl stored the target page: a target it never reached is ``hreflang-target-not-linked``'s finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from nitpicker_core import Alternate, CheckContext, Finding, page_alternates, sitemap_alternates

from .common import content_urls, family, linked, memo, rows
from .sitemaps import indexability

Finder = Callable[[CheckContext], Iterator[Finding]]
GOOGLE_HELP = "https://developers.google.com/search/docs/specialty/international/localized-versions"
X_DEFAULT = "x-default"
# BCP 47's shape (letters and digits in hyphen-separated subtags of at most 8): langcodes also accepts "en_US"
_SHAPE = re.compile(r"^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$")


def _bare(url: str) -> str:
    return url.split("#", 1)[0]


def alternates(ctx: CheckContext) -> dict[str, list[Alternate]]:
    """Each page with hreflang alternates → its alternates (markup, Link header, then sitemaps).

    Sitemaps' alternates count for the URLs the crawl stored as internal 2xx HTML pages, as the others do.
    """

    def load() -> dict[str, list[Alternate]]:
        found: dict[str, list[Alternate]] = {}
        for alt in page_alternates(ctx.reader, ctx.commit):
            if alt.kind == "hreflang":
                found.setdefault(alt.url, []).append(alt)
        pages = content_urls(ctx)
        for alt in sitemap_alternates(ctx.reader, ctx.commit):
            if alt.url in pages:
                found.setdefault(alt.url, []).append(alt)
        return found

    return memo(ctx, "hreflang", load)


def valid_code(code: str) -> bool:
    """Whether an hreflang value is ``x-default`` or a valid BCP 47 language tag (checked by langcodes)."""
    if code.lower() == X_DEFAULT:
        return True
    if not _SHAPE.match(code):
        return False
    # langcodes loads its tables (~0.05 s) on first use: a site without hreflang never pays for them
    import langcodes

    return bool(langcodes.tag_is_valid(code))


def _web(href: str) -> bool:
    return urlsplit(href).scheme in ("http", "https") if href else False


def _usable(alt: Alternate) -> bool:
    return valid_code(alt.hreflang) and _web(alt.href)


def invalid_code(ctx: CheckContext) -> Iterator[Finding]:
    for url, alts in alternates(ctx).items():
        for alt in alts:
            if not valid_code(alt.hreflang):
                yield Finding(url, f'hreflang="{alt.hreflang}"')


def invalid_url(ctx: CheckContext) -> Iterator[Finding]:
    for url, alts in alternates(ctx).items():
        for alt in alts:
            if not _web(alt.href):
                yield Finding(url, f"{alt.hreflang}: {alt.href}")


def _codes_for(ctx: CheckContext, url: str) -> dict[str, set[str]]:
    """A page's usable alternates: target URL → the codes naming it (lower-cased); {} for a page without."""

    def load() -> dict[str, dict[str, set[str]]]:
        found: dict[str, dict[str, set[str]]] = {}
        for page, alts in alternates(ctx).items():
            targets = found.setdefault(page, {})
            for alt in alts:
                if _usable(alt):
                    targets.setdefault(_bare(alt.href), set()).add(alt.hreflang.lower())
        return found

    return memo(ctx, "hreflang_codes", load).get(url, {})


def _pairs(ctx: CheckContext) -> Iterator[tuple[str, str, set[str]]]:
    """(page, other page it names as an alternate, the codes naming it), x-default left out."""
    for url in alternates(ctx):
        for target, codes in _codes_for(ctx, url).items():
            named = codes - {X_DEFAULT}
            if target != url and named:
                yield url, target, named


def missing_return(ctx: CheckContext) -> Iterator[Finding]:
    pages = content_urls(ctx)
    for url, target, _ in _pairs(ctx):
        if target in pages and indexability(ctx, target) is None and url not in _codes_for(ctx, target):
            yield Finding(url, target)


def target_non_indexable(ctx: CheckContext) -> Iterator[Finding]:
    for url, alts in alternates(ctx).items():
        for alt in alts:
            target = _bare(alt.href)
            reason = indexability(ctx, target) if _usable(alt) and target != url else None
            if reason:
                yield Finding(url, f"{target} ({reason})")


def missing_self(ctx: CheckContext) -> Iterator[Finding]:
    for url in alternates(ctx):
        if url not in _codes_for(ctx, url):
            yield Finding(url)


def missing_x_default(ctx: CheckContext) -> Iterator[Finding]:
    for url, alts in alternates(ctx).items():
        if not any(alt.hreflang.lower() == X_DEFAULT for alt in alts):
            yield Finding(url)


def duplicate_code(ctx: CheckContext) -> Iterator[Finding]:
    for url, alts in alternates(ctx).items():
        by_code: dict[str, set[str]] = {}
        for alt in alts:
            if _usable(alt):
                by_code.setdefault(alt.hreflang.lower(), set()).add(_bare(alt.href))
        for code, targets in by_code.items():
            if len(targets) > 1:
                yield Finding(url, f"{code}: {' | '.join(sorted(targets))}")


def inconsistent_code(ctx: CheckContext) -> Iterator[Finding]:
    # What a page calls another against what that page calls itself in its own self reference
    for url, target, named in _pairs(ctx):
        own = _codes_for(ctx, target).get(target, set()) - {X_DEFAULT}
        if own and not named & own:
            yield Finding(url, f"{target}: {' | '.join(sorted(named))} here, {' | '.join(sorted(own))} there")


def target_not_linked(ctx: CheckContext) -> Iterator[Finding]:
    reached = linked(ctx)
    table = rows(ctx)
    for url, alts in alternates(ctx).items():
        host = urlsplit(url).netloc
        for alt in alts:
            target = _bare(alt.href)
            row: dict[str, Any] | None = table.get(target)
            internal = not row["is_external"] if row else urlsplit(target).netloc == host
            if _usable(alt) and target != url and internal and target not in reached:
                yield Finding(url, target)


_check = family("hreflang", GOOGLE_HELP)


CHECKS = [
    _check(
        "hreflang-invalid-code",
        "Hreflang values that are not language codes",
        "high",
        "An hreflang alternate (in the page's markup, its HTTP Link header or its sitemap entry's xhtml:link) "
        "whose value is neither x-default "
        'nor a valid BCP 47 language tag such as "en", "en-GB" or "zh-Hant" (the detail: the value as '
        'written). Search engines ignore such an alternate. An underscore ("en_US") is not a tag.',
        "Write the ISO 639-1 language code, optionally followed by a hyphen and the ISO 3166-1 region code.",
        invalid_code,
        100,
    ),
    _check(
        "hreflang-invalid-url",
        "Hreflang alternates that are not web addresses",
        "high",
        "An hreflang alternate whose href is not an http(s) URL (javascript:, mailto:, data:, …; the "
        "detail: the code and the href). Search engines cannot follow it.",
        "Point each alternate at the absolute URL of the page in that language.",
        invalid_url,
        101,
    ),
    _check(
        "hreflang-missing-return",
        "Hreflang alternates without a return link",
        "high",
        "A page names another crawled, indexable page as its alternate, but that page does not name it back "
        "(the detail: the other page). Search engines ignore alternates that are not confirmed both ways.",
        "List the same set of alternates, this page included, on every page of the set.",
        missing_return,
        102,
    ),
    _check(
        "hreflang-target-non-indexable",
        "Hreflang alternates that are not indexable",
        "high",
        "An hreflang alternate points at a URL search engines will not index (the detail: the URL and why: a "
        "redirect, a 4xx/5xx status, a failure, noindex, or a canonical naming another URL).",
        "Point each alternate at the canonical, indexable URL of the page in that language.",
        target_non_indexable,
        103,
    ),
    _check(
        "hreflang-missing-self",
        "Hreflang sets without the page itself",
        "medium",
        "A page lists hreflang alternates but none of them is the page itself: each page of a set should "
        "name itself with its own language code.",
        "Add an alternate for the page itself, with its own language code, to the page's set.",
        missing_self,
        104,
    ),
    _check(
        "hreflang-missing-x-default",
        "Hreflang sets without x-default",
        "info",
        "A page lists hreflang alternates but no x-default, the page for visitors whose language matches none "
        "of them.",
        "Add an x-default alternate naming the language selector or the default version.",
        missing_x_default,
        105,
        type="opportunity",
    ),
    _check(
        "hreflang-duplicate-code",
        "Hreflang codes naming several pages",
        "medium",
        "One page's hreflang set names one language code for several URLs (the detail: the code and the "
        "URLs); search engines cannot tell which one is meant and may ignore them all.",
        "Keep one alternate per language code.",
        duplicate_code,
        106,
    ),
    _check(
        "hreflang-inconsistent-code",
        "Hreflang codes that do not match between pages",
        "medium",
        "A page names another with a language code that page does not give itself in its own self "
        "reference (the detail: the other page, the code here and the code there).",
        "Give every page the same code in every set that names it.",
        inconsistent_code,
        107,
    ),
    _check(
        "hreflang-target-not-linked",
        "Hreflang alternates no link reaches",
        "low",
        "An hreflang alternate on the site's host that no anchor of a crawled page links to (the detail: the "
        "alternate). Visitors cannot switch to that language, and the crawl did not check the page.",
        "Link the language versions to each other, for instance from a language switcher.",
        target_not_linked,
        108,
        type="warning",
    ),
]
