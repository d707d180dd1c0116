"""Sitemap checks: sitemaps that could not be read, and what they list against what the crawl found."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from nitpicker_core import CheckContext, Finding, non_indexable_reason, read

from .common import content_urls, family, headers, memo, reached, rows

Finder = Callable[[CheckContext], Iterator[Finding]]
PROTOCOL_HELP = "https://www.sitemaps.org/protocol.html"
GOOGLE_HELP = "https://developers.google.com/search/docs/crawling-indexing/sitemaps/overview"


def sitemaps(ctx: CheckContext) -> list[dict[str, Any]]:
    """The commit's sitemaps (none on a commit made before sitemaps were stored)."""

    def load() -> list[dict[str, Any]]:
        return read.sitemap_rows(ctx.reader, ctx.commit)

    return memo(ctx, "sitemaps", load)


def listed(ctx: CheckContext) -> dict[str, list[dict[str, Any]]]:
    """Each URL the commit's sitemaps list (indexes left out) → the sitemaps listing it, in reading order."""

    def load() -> dict[str, list[dict[str, Any]]]:
        files = {s["id"]: s for s in sitemaps(ctx)}
        found: dict[str, list[dict[str, Any]]] = {}
        if files:
            for sitemap_id, url in read.sitemap_entries(ctx.reader, ctx.commit):
                found.setdefault(url, []).append(files[sitemap_id])
        return found

    return memo(ctx, "sitemap_listed", load)


def _problems(kind: str) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        for sitemap in sitemaps(ctx):
            for problem, detail in sitemap["problems"]:
                if problem == kind:
                    yield Finding(sitemap["url"], detail)

    return find


def _in_scope(url: str, sitemaps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in sitemaps if url.startswith(s["scope"])]


def indexability(ctx: CheckContext, url: str) -> str | None:
    """``non_indexable_reason`` of a URL of the commit (None when the commit has no row for it)."""
    row = rows(ctx).get(url)
    if row is None:
        return None
    canonicals = memo(
        ctx,
        "canonicals",
        lambda: {
            r["url"]: r["canonical"]
            for r in read.page_rows(ctx.reader, ctx.commit, ("url", "canonical"), present=("canonical",))
        },
    )
    return non_indexable_reason({**row, "headers": headers(row), "canonical": canonicals.get(url)})


def non_indexable(ctx: CheckContext) -> Iterator[Finding]:
    for url, where in listed(ctx).items():
        reason = indexability(ctx, url) if _in_scope(url, where) else None
        if reason:
            yield Finding(url, reason)


def _reached(ctx: CheckContext) -> set[str]:
    """URLs some internal crawled page links to (other than itself), redirects followed to where they end."""
    return reached(ctx, self_links=True)


def _roots(ctx: CheckContext) -> set[str]:
    """The commit's start URLs (its options, as the archive keeps them)."""
    for commit in ctx.reader.commits():
        if commit["id"] == ctx.commit:
            return set((commit.get("options") or {}).get("roots") or [])
    return set()


def orphans(ctx: CheckContext) -> Iterator[Finding]:
    # Indexable pages only: a listed URL that is not is sitemap-non-indexable-url's finding. The crawl's
    # roots are where it starts, not pages a link has to reach.
    if not listed(ctx):
        return
    pages = content_urls(ctx)
    reached = _reached(ctx)
    roots = _roots(ctx)
    for url, where in listed(ctx).items():
        if url in pages and url not in reached and url not in roots and _in_scope(url, where):
            if indexability(ctx, url) is None:
                yield Finding(url)


def missing(ctx: CheckContext) -> Iterator[Finding]:
    # Only when the commit read a sitemap that lists pages: without one, every page would be a finding
    in_sitemaps = listed(ctx)
    if not in_sitemaps:
        return
    for url in sorted(content_urls(ctx)):
        if url not in in_sitemaps and indexability(ctx, url) is None:
            yield Finding(url)


def in_several(ctx: CheckContext) -> Iterator[Finding]:
    for url, where in listed(ctx).items():
        names = sorted({s["url"] for s in where})
        if len(names) > 1:
            yield Finding(url, " | ".join(names))


def out_of_scope(ctx: CheckContext) -> Iterator[Finding]:
    for url, where in listed(ctx).items():
        for sitemap in where:
            if not url.startswith(sitemap["scope"]):
                yield Finding(url, sitemap["url"])


_check = family("sitemaps", PROTOCOL_HELP)


CHECKS = [
    _check(
        "sitemap-unreachable",
        "Sitemaps that could not be fetched",
        "high",
        "A sitemap the crawl was given, robots.txt names or an index lists did not answer 200 (the detail: the "
        "status or the error, or why it was not fetched: another host, not http(s)). Search engines cannot "
        "read it either. A missing /sitemap.xml nothing points to is no finding.",
        "Serve the sitemap at that URL, or correct the Sitemap: line, the index entry or the --sitemap URL.",
        _problems("unreachable"),
        90,
        help_url=GOOGLE_HELP,
    ),
    _check(
        "sitemap-invalid",
        "Sitemaps that are not valid",
        "high",
        "A sitemap whose XML is broken, whose root is no <urlset> or <sitemapindex>, whose namespace is not "
        "the sitemaps.org one, whose gzip data is broken, or an index that lists itself or an index above "
        "it (the detail says which). What could be read before the problem is still used.",
        "Generate the sitemap with a tool that writes the sitemaps.org format, and validate it.",
        _problems("invalid"),
        91,
    ),
    _check(
        "sitemap-over-limit",
        "Sitemaps over the protocol's limits",
        "medium",
        "A sitemap with more than 50,000 URLs or larger than 50 MB uncompressed, or an index chain deeper "
        "than the crawl follows; search engines ignore what is past the limit, and so does the crawl.",
        "Split the sitemap into several files of at most 50,000 URLs and 50 MB, listed by one sitemap index.",
        _problems("over-limit"),
        92,
    ),
    _check(
        "sitemap-non-indexable-url",
        "Non-indexable URLs in sitemaps",
        "medium",
        "A sitemap lists a URL search engines will not index (the detail: noindex, a redirect, a 4xx/5xx "
        "status, a failure, a canonical naming another URL, or blocked by robots.txt). Sitemaps should list "
        "only the canonical, indexable URL of each page.",
        "List the URL the page really lives at (the redirect's target, the canonical), or drop it from the sitemap.",
        non_indexable,
        93,
        help_url=GOOGLE_HELP,
    ),
    _check(
        "sitemap-orphan",
        "Pages only sitemaps lead to",
        "medium",
        "An indexable page a sitemap lists that no internal link of the crawled pages reaches (redirects "
        "followed); the crawl's start pages are left out. Visitors cannot find it and search engines give "
        "it little weight.",
        "Link to the page from a related page or a navigation menu, or drop it if it is no longer wanted.",
        orphans,
        94,
        type="warning",
    ),
    _check(
        "page-missing-from-sitemap",
        "Indexable pages missing from every sitemap",
        "low",
        "An indexable HTML page of the crawl that no sitemap of the commit lists (only checked when some "
        "sitemap lists pages).",
        "Add the page to the sitemap, or make it non-indexable if it should not be found.",
        missing,
        95,
        type="opportunity",
        help_url=GOOGLE_HELP,
    ),
    _check(
        "sitemap-url-in-several",
        "URLs listed in several sitemaps",
        "low",
        "A URL more than one sitemap lists (the detail names them): harmless for search engines, but a sign "
        "that sitemaps are generated from overlapping sources.",
        "List each URL in one sitemap.",
        in_several,
        96,
        type="warning",
    ),
    _check(
        "sitemap-url-out-of-scope",
        "Sitemap URLs outside the sitemap's location",
        "medium",
        "A sitemap lists a URL outside its location (the detail: the sitemap): another host, or a path "
        "outside the sitemap's directory (a sitemap named by robots.txt may list its whole host). Search "
        "engines ignore such URLs, and the crawl does not start from them.",
        "Move the sitemap up to a directory holding every URL it lists, or list the URL in that host's own sitemap.",
        out_of_scope,
        97,
    ),
]
