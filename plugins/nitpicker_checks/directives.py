"""Directive and link checks: nofollow (page and link level), meta robots against X-Robots-Tag, pages deep in
the link graph or with no way on, anchor texts that say nothing, links to URLs that are not the canonical."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from nitpicker_core import Check, CheckContext, Finding, nofollow_targets, read

from .canonicals import effective, is_self
from .common import (
    content_pages,
    content_urls,
    directives,
    final,
    graph,
    headers,
    html_facts,
    html_reader,
    memo,
    rows,
    unique,
)
from .settings import DEFAULT_MAX_DEPTH, max_depth, non_descriptive_lists, words

Finder = Callable[[CheckContext], Iterator[Finding]]
ROBOTS_HELP = "https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag"
LINKS_HELP = "https://developers.google.com/search/docs/crawling-indexing/links-crawlable"
_NOFOLLOW = re.compile(r"(?:^|[\s,:])(?:nofollow|none)(?:$|[\s,])", re.IGNORECASE)
_FAILED_ROBOTS = re.compile(r"blocked by robots\.txt \(it answered (.+)\)")
_NOINDEX = re.compile(r"(?:^|[\s,:])(?:noindex|none)(?:$|[\s,])", re.IGNORECASE)


def _header_directives(row: dict[str, Any]) -> str:
    """The X-Robots-Tag value when it speaks for every bot ("" otherwise)."""
    tag = headers(row).get("x-robots-tag", "").strip()
    head = tag.split(",", 1)[0].split(":", 1)
    every = len(head) == 1 or head[0].strip().lower() in (
        "noindex",
        "nofollow",
        "none",
        "all",
        "index",
        "follow",
    )
    return tag if every else ""


def nofollow_pages(ctx: CheckContext) -> Iterator[Finding]:
    stored = directives(ctx)
    for row in sorted(content_pages(ctx), key=lambda r: r["url"]):
        page = stored.get(row["url"])
        where = []
        if page and page.nofollow:
            where.append(f"meta robots: {page.robots}")
        tag = _header_directives(row)
        if tag and _NOFOLLOW.search(tag):
            where.append(f"X-Robots-Tag: {tag}")
        if where:
            yield Finding(row["url"], " | ".join(where))


def conflicts(ctx: CheckContext) -> Iterator[Finding]:
    # Both present and they disagree on noindex or on nofollow: search engines apply the stricter one
    stored = directives(ctx)
    for row in sorted(content_pages(ctx), key=lambda r: r["url"]):
        page = stored.get(row["url"])
        meta = (page.robots or "").strip() if page else ""
        tag = _header_directives(row)
        if not meta or not tag:
            continue
        for pattern in (_NOINDEX, _NOFOLLOW):
            if bool(pattern.search(meta)) != bool(pattern.search(tag)):
                yield Finding(row["url"], f"meta robots: {meta} | X-Robots-Tag: {tag}")
                break


@html_reader("nofollow_links")
def _nofollow_targets(url: str, html: str) -> list[str]:
    """The internal URLs a page's links with rel=nofollow point to (stored by the crawl as the same)."""
    return nofollow_targets(url, html)


def nofollow_links(ctx: CheckContext) -> Iterator[Finding]:
    # Link-level rel=nofollow (or ugc/sponsored, which imply it) on links to the site's own URLs
    for url, targets in html_facts(ctx, "nofollow_links").items():  # read in the pass over every page's HTML
        for target in targets:
            yield Finding(url, target)


def depths(ctx: CheckContext) -> dict[str, int]:
    """Clicks from the crawl's start to each URL internal links reach (redirects followed at no cost)."""

    def load() -> dict[str, int]:
        # walked over URL ids (a URL the archive never recorded stays a URL), then named
        g = graph(ctx)
        roots = [g.ids.get(url, url) for url in _roots(ctx)]
        table = rows(ctx)
        redirects = {
            g.ids.get(url, url): g.ids.get(row["redirect_dest"], row["redirect_dest"])
            for url, row in table.items()
            if row.get("redirect_dest")
        }
        found = read.link_depths(g.targets, roots, redirects)
        return {g.urls[node] if isinstance(node, int) else node: depth for node, depth in found.items()}

    return memo(ctx, "depths", load)


def too_deep(ctx: CheckContext) -> Iterator[Finding]:
    # A page no link reaches has no depth: isolated-page's finding
    limit = max_depth(ctx)
    found = depths(ctx)
    for url in sorted(content_urls(ctx)):
        depth = found.get(url)
        if depth is not None and depth > limit:
            yield Finding(url, str(depth))


def no_outlinks(ctx: CheckContext) -> Iterator[Finding]:
    table = rows(ctx)
    g = graph(ctx)
    linking: set[str] = set()
    for source_id, target_ids in g.targets.items():
        source = g.urls[source_id]
        for target_id in target_ids:
            url = g.urls[target_id]
            target = table.get(url)
            if target_id != source_id and (
                (target is not None and not target.get("is_external"))
                or (target is None and urlsplit(url).hostname == urlsplit(source).hostname)
            ):
                linking.add(source)
                break  # one link on is enough
    for url in sorted(content_urls(ctx) - linking):
        yield Finding(url)


def _may_be_short(text: str, longest: int) -> bool:
    """Whether ``words(text)`` can have ``longest`` characters or fewer, decided without computing it.

    A longer text can only shrink to that by what ``words`` removes: its ends' spaces and punctuation, a
    run of spaces; a printable ASCII text beginning and ending with a letter or digit, without two spaces
    in a row, has none of them (and casefolding ASCII keeps its length). Millions of links: most are that.
    """
    return len(text) <= longest or not (
        text.isascii()
        and text.isprintable()
        and text[0].isalnum()
        and text[-1].isalnum()
        and "  " not in text
    )


def non_descriptive(ctx: CheckContext) -> Iterator[Finding]:
    stored = directives(ctx)
    lists = non_descriptive_lists(ctx)
    pages = content_urls(ctx)
    longest = max((len(text) for texts in lists.values() for text in texts), default=0)
    phrases = {text for texts in lists.values() for text in texts}
    compared: dict[str, str | None] = {}  # a site repeats its link texts (navigation): each compared once

    def any_phrase(text: str) -> bool:
        # a text that is no phrase of any language is left out before its link is made (most of them);
        # its page's language picks among the phrases below
        if text not in compared:
            said = words(text) if _may_be_short(text, longest) else None
            compared[text] = said if said in phrases else None
        return compared[text] is not None

    for link in read.link_texts(ctx.reader, ctx.commit, any_phrase, phrases):
        if link.source not in pages:
            continue
        page = stored.get(link.source)
        lang = (page.lang if page else "").split("-", 1)[0].lower()
        if compared[link.text] in lists.get(lang, lists["en"]):
            yield Finding(link.source, f"{link.text.strip()} → {link.target}")


def non_canonical_links(ctx: CheckContext) -> Iterator[Finding]:
    # Links to a page whose valid canonical names another URL (redirects followed to the page)
    canonicals = effective(ctx)
    table = rows(ctx)
    g = graph(ctx)
    # the targets whose final page names another URL: such a page itself, or a redirect (to one)
    elsewhere = {url for url, canonical in canonicals.items() if not is_self(url, canonical)}
    if not elsewhere:
        return
    candidates = elsewhere | {url for url, row in table.items() if row.get("redirect_dest")}
    ends: dict[int, tuple[str, str]] = {}
    for url in candidates:
        end = final(ctx, url) if url in g.ids else None
        canonical = canonicals.get(end["url"]) if end else None
        if end and canonical and not is_self(end["url"], canonical):
            ends[g.ids[url]] = (end["url"], canonical)
    for source_id, target_ids in g.targets.items():
        for target_id in target_ids & ends.keys():
            end_url, canonical = ends[target_id]
            source = g.urls[source_id]
            if end_url != source and not is_self(source, canonical):
                yield Finding(source, g.urls[target_id])


def _roots(ctx: CheckContext) -> list[str]:
    for commit in ctx.reader.commits():
        if commit["id"] == ctx.commit:
            return list((commit.get("options") or {}).get("roots") or [])
    return []


def robots_unreachable(ctx: CheckContext) -> Iterator[Finding]:
    # RFC 9309: a robots.txt answering 5xx, or not at all, disallows the whole origin until it answers; the
    # crawler notes the answer in the reason of each URL it skipped for it
    for row in sorted(rows(ctx).values(), key=lambda r: r["url"]):
        match = _FAILED_ROBOTS.fullmatch(row.get("skip_reason") or "") if row.get("is_skipped") else None
        if match:
            parts = urlsplit(row["url"])
            yield Finding(f"{parts.scheme}://{parts.netloc}/robots.txt", f"answered {match.group(1)}")


def robots_blocks_start(ctx: CheckContext) -> Iterator[Finding]:
    table = rows(ctx)
    for root in _roots(ctx):
        row = table.get(root)
        if row and row.get("is_skipped") and row.get("skip_reason") == "blocked by robots.txt":
            yield Finding(root)


def _check(
    id: str,
    title: str,
    category: str,
    priority: str,
    description: str,
    fix: str,
    help: str,
    find: Finder,
    order: int,
    **kw: Any,
) -> Check:
    return Check(
        id,
        title,
        category,
        priority,
        description,
        fix,
        help,
        lambda ctx: unique(find(ctx)),
        order=order,
        **kw,
    )


CHECKS = [
    _check(
        "nofollow-page",
        "Pages whose links search engines are told not to follow",
        "indexability",
        "medium",
        "Internal HTML pages whose meta robots or X-Robots-Tag says nofollow (or none): no link of the page "
        "passes search engines on, so the pages it links to may never be found (the detail: where it is said).",
        "Remove nofollow from the page's robots directives unless none of its links should be followed.",
        ROBOTS_HELP,
        nofollow_pages,
        40,
        type="warning",
    ),
    _check(
        "robots-directives-conflict",
        "Meta robots and X-Robots-Tag disagree",
        "indexability",
        "medium",
        "Internal HTML pages whose meta robots and X-Robots-Tag header both speak to every bot and disagree on "
        "noindex or nofollow (the detail: both): search engines apply the stricter one, which is rarely what "
        "both sides meant.",
        "Declare the directives in one place, or make the header and the meta tag say the same.",
        ROBOTS_HELP,
        conflicts,
        41,
        type="warning",
    ),
    _check(
        "nofollow-internal-link",
        "Internal links marked nofollow",
        "links",
        "low",
        "Links with rel=nofollow to the site's own URLs (the detail: the target): the site tells search engines "
        "not to follow its own links, and the target loses that link's signal.",
        "Drop rel=nofollow from internal links; keep pages out of the index with noindex instead.",
        "https://developers.google.com/search/docs/crawling-indexing/qualify-outbound-links",
        nofollow_links,
        19,
        type="warning",
        link_target=True,
    ),
    _check(
        "page-too-deep",
        "Pages many clicks from the start",
        "links",
        "low",
        "Internal HTML pages more clicks from the crawl's start pages along internal links, redirects followed, "
        f"than the setting max_depth of [plugins.checks] or --checks-max-depth (default {DEFAULT_MAX_DEPTH}; the "
        "detail: the clicks): visitors rarely get there and search engines crawl them less often. Pages no link "
        "reaches are isolated-page's.",
        "Link to the page from a page nearer the start: a menu, a category page, related content.",
        LINKS_HELP,
        too_deep,
        20,
        type="opportunity",
        settings=("max_depth",),
    ),
    _check(
        "no-internal-outlinks",
        "Pages without internal links",
        "links",
        "low",
        "Internal HTML pages that link to no other URL of the site: a dead end for visitors, and search "
        "engines find nothing more from there.",
        "Link to related pages, the home page or a menu from the page.",
        LINKS_HELP,
        no_outlinks,
        21,
        type="warning",
    ),
    _check(
        "anchor-text-non-descriptive",
        "Links whose text does not say where they go",
        "links",
        "low",
        'Internal page links whose whole text is a phrase like "click here", "read more" or "詳しくはこちら" '
        "(a list per language, chosen by the page's lang, which the settings anchor_texts and "
        "anchor_texts_replace of [plugins.checks] extend or replace; the detail: the text → the target): "
        "screen reader users listing links and search engines learn nothing of the target.",
        'Write the link text as the target\'s subject ("Pricing of the Pro plan"), not as an instruction.',
        "https://developers.google.com/search/docs/crawling-indexing/links-crawlable#anchor-text-placement",
        non_descriptive,
        22,
        type="opportunity",
        settings=("anchor_texts", "anchor_texts_replace"),
        link_target=True,
    ),
    _check(
        "link-to-non-canonical",
        "Internal links to URLs that are not the canonical",
        "links",
        "low",
        "Internal pages link to a URL (directly or through redirects) whose page names another URL as its "
        "canonical: the link's signal goes to the duplicate, and crawlers spend a fetch on it.",
        "Link to the canonical URL the target page names.",
        "https://developers.google.com/search/docs/crawling-indexing/consolidate-duplicate-urls",
        non_canonical_links,
        23,
        type="warning",
        link_target=True,
    ),
    _check(
        "robots-txt-unreachable",
        "The robots.txt file does not answer",
        "indexability",
        "high",
        "An origin's robots.txt answered a server error or nothing at all (the detail: the status or the error "
        "kind). Search engines then treat the whole origin as disallowed (RFC 9309) and stop crawling it, and "
        "so did this crawl for the URLs it skipped.",
        "Make /robots.txt answer 200 (or 404 when there are no rules); check the server and any firewall in front.",
        "https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt#http-status-codes",
        robots_unreachable,
        42,
    ),
    _check(
        "robots-txt-blocks-start",
        "The robots.txt file disallows the start page",
        "indexability",
        "high",
        "robots.txt disallows a crawl's start URL, as a Disallow: / left over from a staging site does: search "
        "engines may read nothing of the site.",
        "Remove or narrow the Disallow rule that matches the start page in robots.txt.",
        "https://developers.google.com/search/docs/crawling-indexing/robots/intro",
        robots_blocks_start,
        43,
    ),
]
