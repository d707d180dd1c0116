"""Pagination checks: rel=next/prev links (markup and HTTP Link headers) and the series they make."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from nitpicker_core import CheckContext, Finding, page_alternates

from .common import anchor_targets, family, memo, rows
from .sitemaps import indexability

Finder = Callable[[CheckContext], Iterator[Finding]]
GOOGLE_HELP = (
    "https://developers.google.com/search/docs/specialty/ecommerce/pagination-and-incremental-page-loading"
)
KINDS = ("next", "prev")


def series(ctx: CheckContext) -> dict[str, dict[str, list[str]]]:
    """Each page with pagination links → {"next": [targets], "prev": [targets]}, distinct, fragments off."""

    def load() -> dict[str, dict[str, list[str]]]:
        found: dict[str, dict[str, list[str]]] = {}
        for alt in page_alternates(ctx.reader, ctx.commit):
            if alt.kind in KINDS:
                targets = found.setdefault(alt.url, {kind: [] for kind in KINDS})[alt.kind]
                href = alt.href.split("#", 1)[0]
                if href not in targets:
                    targets.append(href)
        return found

    return memo(ctx, "pagination", load)


def _links(ctx: CheckContext) -> Iterator[tuple[str, str, str]]:
    for url, kinds in series(ctx).items():
        for kind in KINDS:
            for target in kinds[kind]:
                yield url, kind, target


def target_not_200(ctx: CheckContext) -> Iterator[Finding]:
    table = rows(ctx)
    for url, kind, target in _links(ctx):
        row = table.get(target)
        if row is None:
            if urlsplit(target).scheme not in ("http", "https"):
                yield Finding(url, f"{kind}: {target} (not a web address)")
            continue
        if row.get("redirect_dest"):
            yield Finding(url, f"{kind}: {target} (redirects to {row['redirect_dest']})")
        elif row.get("status") is None and row.get("error_kind"):
            yield Finding(url, f"{kind}: {target} (failed: {row['error_kind']})")
        elif row.get("status") is not None and row["status"] != 200:
            yield Finding(url, f"{kind}: {target} ({row['status']})")


def target_not_linked(ctx: CheckContext) -> Iterator[Finding]:
    anchors = anchor_targets(ctx)
    for url, kind, target in _links(ctx):
        if target != url and target not in anchors.get(url, set()):
            yield Finding(url, f"{kind}: {target}")


def looping(pages: dict[str, dict[str, list[str]]]) -> set[str]:
    """The pages whose single next links lead back to themselves (self links left out), in linear time."""
    step = {url: kinds["next"][0] for url, kinds in pages.items() if len(kinds["next"]) == 1}
    done: set[str] = set()
    found: set[str] = set()
    for start in step:
        path: dict[str, int] = {}
        at: str | None = start
        while at is not None and at not in done and at not in path:
            path[at] = len(path)
            at = step.get(at)
        if at is not None and at in path:
            cycle = list(path)[path[at] :]
            if len(cycle) > 1:
                found.update(cycle)
        done.update(path)
    return found


def sequence_error(ctx: CheckContext) -> Iterator[Finding]:
    pages = series(ctx)
    other = {"next": "prev", "prev": "next"}
    loops = looping(pages)
    for url, kinds in pages.items():
        for kind in KINDS:
            targets = kinds[kind]
            if len(targets) > 1:
                yield Finding(url, f"several {kind} links: {' | '.join(targets)}")
            if url in targets:
                yield Finding(url, f"{kind} points to the page itself")
        if kinds["next"] and kinds["prev"] and set(kinds["next"]) & set(kinds["prev"]):
            yield Finding(url, f"next and prev name the same page: {kinds['next'][0]}")
        if url in loops:
            yield Finding(url, "the next links lead back to this page")
        for kind in KINDS:
            for target in kinds[kind]:
                back = pages.get(target)
                if target != url and back is not None and url not in back[other[kind]]:
                    answer = " | ".join(back[other[kind]]) or "none"
                    yield Finding(url, f"{kind} {target} has {other[kind]} {answer}")


def canonicalised_or_noindex(ctx: CheckContext) -> Iterator[Finding]:
    # Canonicalised counts when the canonical is another page of a series (the first page, most often): a
    # canonical naming the same document elsewhere (another host, a versionless path) hides nothing the
    # series lists, and is the canonical checks' business.
    pages = series(ctx)
    members = set(pages) | {
        target for kinds in pages.values() for targets in kinds.values() for target in targets
    }
    for url in pages:
        reason = indexability(ctx, url) or ""
        if reason.startswith("noindex") or (
            reason.startswith("canonicalised to ") and reason.removeprefix("canonicalised to ") in members
        ):
            yield Finding(url, reason)


_check = family("pagination", GOOGLE_HELP)


CHECKS = [
    _check(
        "pagination-target-not-200",
        "Pagination links to pages that do not answer 200",
        "high",
        "A rel=next or rel=prev link (in the markup or the HTTP Link header) points at a URL the crawl found "
        "redirecting, failing or answering another status than 200, or at something that is no web address "
        "(the detail: next or prev, the target and what it answered).",
        "Point next and prev at the pages of the series as they really answer.",
        target_not_200,
        110,
    ),
    _check(
        "pagination-target-not-linked",
        "Pagination links without an anchor",
        "medium",
        "A page names its next or previous page with rel=next/prev but has no <a href> to it (the detail: "
        "next or prev and the target). Search engines follow anchors, not rel=next/prev, so the rest of the "
        "series may never be found.",
        "Link each page of a series to the next and previous ones with ordinary anchors.",
        target_not_linked,
        111,
        type="warning",
    ),
    _check(
        "pagination-sequence-error",
        "Pagination series that do not hold together",
        "medium",
        "The rel=next/prev links do not make one straight series (the detail says how): a page names itself, "
        "names several next or prev pages, names one page as both, its next page's prev (or prev page's "
        "next) is not this page, or the next links lead back in a loop.",
        "Give each page at most one next and one prev, each naming the neighbour that names it back.",
        sequence_error,
        112,
    ),
    _check(
        "pagination-canonicalised-or-noindex",
        "Paginated pages hidden from search engines",
        "medium",
        "A page of a paginated series (it has rel=next/prev links) is noindex or names another page of the "
        "series, often the first one, as its canonical (the detail: which). Search engines then do not index what only "
        "that page lists.",
        "Give each page of the series its own canonical and let it be indexed.",
        canonicalised_or_noindex,
        113,
    ),
]
