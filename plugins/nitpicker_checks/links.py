"""Link checks: where internal pages link to (errors, redirects, blocked, broken or unreachable external URLs),
orphans. Internal targets are every URL of the site's host, those outside the crawl's scope included."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from nitpicker_core import Check, CheckContext, Finding

from .common import Link, final, indexability, links, memo, rows, unique

# Answers that mean "not for robots" rather than "gone": LinkedIn's 999 and the usual bot walls.
BLOCKED = (403, 429, 999)
REDIRECTS_HELP = "https://developers.google.com/search/docs/crawling-indexing/301-redirects"
STATUS_HELP = "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status"


def _outcome(row: dict[str, Any] | None) -> str:
    """What a link's destination row says: ok, client, server, failed, blocked or unknown."""
    if row is None or row.get("is_skipped"):
        return "unknown"
    status = row.get("status")
    if status is None:
        return "failed" if row.get("error_kind") else "unknown"
    if status in BLOCKED or row.get("blocked"):
        return "blocked"
    if 400 <= status < 500:
        return "client"
    return "server" if status >= 500 else "ok"


def _targets(ctx: CheckContext) -> dict[str, tuple[bool, str]]:
    """Each recorded target of ``links``: whether it is external, and the ``_outcome`` of where it ends."""

    def load() -> dict[str, tuple[bool, str]]:
        table = rows(ctx)
        found = {}
        for target in {link.target for link in links(ctx)}:  # thousands of links share a target
            row = table.get(target)
            if row is not None:
                found[target] = (bool(row.get("is_external")), _outcome(final(ctx, target)))
        return found

    return memo(ctx, "link_targets", load)


def _by_outcome(ctx: CheckContext) -> dict[tuple[bool, str], list[Link]]:
    """The links to another URL than their page's, by whether the written target is external and its outcome."""

    def load() -> dict[tuple[bool, str], list[Link]]:
        ends = _targets(ctx)
        found: dict[tuple[bool, str], list[Link]] = {}
        for link in links(ctx):
            end = ends.get(link.target)
            if end is not None and link.source != link.target:
                found.setdefault(end, []).append(link)
        return found

    return memo(ctx, "links_by_outcome", load)


def _linked(ctx: CheckContext, external: bool, *outcomes: str) -> Iterator[Finding]:
    """Links whose written target is (not) external and whose destination ends in one of ``outcomes``."""
    grouped = _by_outcome(ctx)
    for outcome in outcomes:
        for link in grouped.get((external, outcome), ()):
            yield Finding(link.source, link.target)


def broken_links(ctx: CheckContext) -> Iterator[Finding]:
    # An internal 403/429 is the site refusing its own pages: broken, whatever a bot wall would mean elsewhere.
    return _linked(ctx, False, "client", "blocked")


def linked_targets(ctx: CheckContext, *outcomes: str) -> set[str]:
    """The internal URLs internal links end at (after redirects) with one of ``outcomes``: the link checks list
    them with each link to them, so the page-level status checks leave them out (one defect, not two)."""

    def load() -> set[str]:
        grouped = _by_outcome(ctx)
        ends = set()
        for outcome in outcomes:
            for target in {link.target for link in grouped.get((False, outcome), ())}:
                end = final(ctx, target)  # an outcome of these is never that of no row
                if end is not None:
                    ends.add(end["url"])
        return ends

    return memo(ctx, "linked_targets:" + ",".join(outcomes), load)


def broken_targets(ctx: CheckContext) -> set[str]:
    """The 4xx URLs internal links end at (after redirects): broken-link lists them with the links to them."""
    return linked_targets(ctx, "client", "blocked")


def server_error_links(ctx: CheckContext) -> Iterator[Finding]:
    return _linked(ctx, False, "server")


def failed_links(ctx: CheckContext) -> Iterator[Finding]:
    return _linked(ctx, False, "failed")


def redirect_links(ctx: CheckContext) -> Iterator[Finding]:
    table = rows(ctx)
    redirecting = {}  # by target: thousands of links share one
    for link in links(ctx):
        if link.target not in redirecting:
            target = table.get(link.target)
            redirecting[link.target] = bool(
                target is not None and not target.get("is_external") and target.get("redirect_dest")
            )
        if redirecting[link.target]:
            yield Finding(link.source, link.target)


def external_broken(ctx: CheckContext) -> Iterator[Finding]:
    return _linked(ctx, True, "client", "server")


def external_unreachable(ctx: CheckContext) -> Iterator[Finding]:
    # no HTTP answer at all: often the crawler's network (no DNS, a firewall) as much as a dead site
    return _linked(ctx, True, "failed")


def external_blocked(ctx: CheckContext) -> Iterator[Finding]:
    return _linked(ctx, True, "blocked")


def redirect_chains(ctx: CheckContext) -> Iterator[Finding]:
    # A URL starting a chain of two or more redirects keeps the chain's hops; a hop in the middle of a longer
    # chain keeps the rest of it, so the starts are the URLs no other chain passes through.
    chains = {
        url: json.loads(row["redirect_chain"])
        for url, row in rows(ctx).items()
        if row.get("redirect_chain") and not row.get("is_external")
    }
    if not chains:
        yield from _middle_hops(ctx)
        return
    passed = {hop for hops in chains.values() for hop in hops[:-1]}
    for url, hops in chains.items():
        if url not in passed:
            yield Finding(url, " → ".join(hops))


def _middle_hops(ctx: CheckContext) -> Iterator[Finding]:
    # Commits crawled before chains were kept: only each redirect's final destination is stored, and a hop
    # passed on the way has no status of its own, so such a row is the middle of a chain.
    for row in rows(ctx).values():
        if not row.get("is_external") and row.get("redirect_dest") and row.get("status") is None:
            yield Finding(row["url"], row["redirect_dest"])


def redirect_loops(ctx: CheckContext) -> Iterator[Finding]:
    for row in rows(ctx).values():
        if row.get("error_kind") == "redirect-loop":
            yield Finding(row["url"])


def robots_blocked(ctx: CheckContext) -> Iterator[Finding]:
    for row in rows(ctx).values():
        if row.get("is_skipped") and "robots.txt" in (row.get("skip_reason") or ""):
            yield Finding(row["url"])


def isolated(ctx: CheckContext) -> Iterator[Finding]:
    for row in ctx.query("isolated-pages", include_roots=False):
        yield Finding(row["url"])


def noindex_linked(ctx: CheckContext) -> Iterator[Finding]:
    linked = set()
    noindex: dict[str, str | None] = {}  # by target: where it ends if that is a noindex page, else None
    for link in links(ctx):
        if link.target not in noindex:
            row = final(ctx, link.target)
            noindex[link.target] = (
                row["url"]
                if row is not None
                and not row.get("is_external")
                and (row.get("noindex") or indexability(row) == "noindex (X-Robots-Tag)")
                else None
            )
        end = noindex[link.target]
        if end is not None and end != link.source:
            linked.add(end)
    for url in sorted(linked):
        yield Finding(url)


CHECKS = [
    Check(
        "broken-link",
        "Internal links to pages that answer 4xx",
        "links",
        "high",
        "Internal pages link to internal URLs that answer a client error (404 Not Found, 410 Gone, …), directly "
        "or after redirects: visitors and crawlers hit a dead end. Internal means the site's host: a URL "
        "outside the crawl's scope there is checked too.",
        "Point each link at the page's current URL, or restore or redirect the missing page.",
        "https://developers.google.com/search/docs/crawling-indexing/http-network-errors",
        lambda ctx: unique(broken_links(ctx)),
        link_target=True,
        order=10,
        type="issue",
    ),
    Check(
        "link-to-server-error",
        "Internal links to pages that answer 5xx",
        "links",
        "high",
        "Internal pages link to internal URLs that answered a server error (500, 502, 503, …).",
        "Fix the server error behind the target page; if it is gone for good, update the links.",
        STATUS_HELP,
        lambda ctx: unique(server_error_links(ctx)),
        link_target=True,
        order=11,
        type="issue",
    ),
    Check(
        "link-to-failed-url",
        "Internal links to URLs that could not be fetched",
        "links",
        "high",
        "Internal pages link to internal URLs that gave no answer at all: a timeout, a refused connection, a "
        "DNS failure or a redirect loop.",
        "Make the target answer, or change or remove the links to it.",
        "https://developers.google.com/search/docs/crawling-indexing/http-network-errors",
        lambda ctx: unique(failed_links(ctx)),
        link_target=True,
        order=12,
        type="issue",
    ),
    Check(
        "link-to-redirect",
        "Internal links to redirects",
        "links",
        "low",
        "Internal pages link to internal URLs that redirect: every click costs a round trip and crawlers spend "
        "budget on the hop.",
        "Link straight to the redirect's destination.",
        REDIRECTS_HELP,
        lambda ctx: unique(redirect_links(ctx)),
        link_target=True,
        order=13,
        type="opportunity",
    ),
    Check(
        "redirect-chain",
        "Redirect chains",
        "links",
        "medium",
        "URLs that start a chain of two or more redirects (the detail is the chain, final destination last): "
        "each hop adds latency, and crawlers may stop following.",
        "Make the first redirect of the chain point straight at the final destination.",
        REDIRECTS_HELP,
        lambda ctx: unique(redirect_chains(ctx)),
        order=14,
        type="warning",
    ),
    Check(
        "redirect-loop",
        "Redirect loops",
        "links",
        "high",
        "Internal URLs whose redirects lead back to themselves: the page can never be reached.",
        "Break the loop: make one of the redirects point at a page that answers.",
        REDIRECTS_HELP,
        lambda ctx: unique(redirect_loops(ctx)),
        order=15,
        type="issue",
    ),
    Check(
        "external-link-broken",
        "External links that are broken",
        "links",
        "medium",
        "Internal pages link to external URLs that answered 4xx or 5xx (other than the bot walls 403, 429 and "
        "999). External URLs that gave no answer at all are external-link-unreachable.",
        "Update the link to the resource's current address, or remove it.",
        STATUS_HELP,
        lambda ctx: unique(external_broken(ctx)),
        link_target=True,
        order=16,
        type="issue",
    ),
    Check(
        "external-link-unreachable",
        "External links that could not be reached",
        "links",
        "low",
        "Internal pages link to external URLs that gave no HTTP answer: the host does not resolve (dns), "
        "refused or reset the connection, timed out, or failed TLS. The error kind is the target URL's "
        "(the pages list and the error-kinds query show it). Often the host is gone; it may also be the "
        "crawler's network (no DNS, a firewall).",
        "Open the link from your own network; if the host is gone, link to where the resource moved or remove "
        "the link.",
        "https://developers.google.com/search/docs/crawling-indexing/http-network-errors",
        lambda ctx: unique(external_unreachable(ctx)),
        link_target=True,
        order=16,
        type="warning",
    ),
    Check(
        "external-link-blocked",
        "External links that refused the crawler",
        "links",
        "low",
        "External URLs answered 403, 429 or 999, which sites send to robots and rate-limited clients: the link "
        "is probably fine for people, but could not be verified.",
        "Open the link in a browser; if it works, nothing to do (or exclude the host from link checking).",
        "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/429",
        lambda ctx: unique(external_blocked(ctx)),
        link_target=True,
        order=17,
        type="warning",
    ),
    Check(
        "isolated-page",
        "Pages no other page links to",
        "links",
        "medium",
        "Internal HTML pages that no anchor of another page reaches, directly or through a redirect (crawl "
        "roots excepted): visitors cannot find them and search engines rank them low.",
        "Link to the page from a relevant page or menu, or remove it if it is obsolete.",
        "https://developers.google.com/search/docs/crawling-indexing/links-crawlable",
        lambda ctx: unique(isolated(ctx)),
        order=18,
        type="warning",
    ),
    Check(
        "noindex-linked",
        "Noindex pages linked internally",
        "indexability",
        "low",
        "Internal pages marked noindex (meta robots or X-Robots-Tag) that other internal pages link to: crawl budget goes to pages that will "
        "not be indexed, and a noindex set by mistake hides a page people can reach.",
        "Remove the noindex if the page should be found; otherwise consider fewer links to it.",
        "https://developers.google.com/search/docs/crawling-indexing/block-indexing",
        lambda ctx: unique(noindex_linked(ctx)),
        order=30,
        type="warning",
    ),
    Check(
        "robots-blocked",
        "URLs blocked by robots.txt",
        "indexability",
        "info",
        "Linked URLs the crawler did not fetch because robots.txt disallows them. Often intended; listed so an "
        "accidental Disallow is seen.",
        "Nothing to do if intended; otherwise narrow the Disallow rule in robots.txt.",
        "https://developers.google.com/search/docs/crawling-indexing/robots/intro",
        lambda ctx: unique(robots_blocked(ctx)),
        order=31,
        type="warning",
    ),
]
