"""Page checks: error answers, titles, descriptions, headings, declared metadata, structured data."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

from nitpicker_core import ABSENT_FACT, Check, CheckContext, Finding, read
from nitpicker_core import head_field_absence as absence

from .common import content_pages, content_urls, memo, rows, stored_fact, unique, without_positions
from .links import broken_targets, linked_targets

Finder = Callable[[CheckContext], Iterator[Finding]]
# Search results show about this many characters (Google cuts by pixels; these are the usual audit limits).
TITLE_MAX = 60
DESCRIPTION_MAX = 160
TITLE_HELP = "https://developers.google.com/search/docs/appearance/title-link"
SNIPPET_HELP = "https://developers.google.com/search/docs/appearance/snippet"
STATUS_HELP = "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status"
CANONICAL_HELP = "https://developers.google.com/search/docs/crawling-indexing/consolidate-duplicate-urls"
# The canonical as resolved (a column) and as written (kept by the scrape only where the two differ).
_SPACE = re.compile(r"\s")
# An http(s) URL with an ASCII host name, maybe a port of four digits at most, and no white space: what
# ``_slow_is_invalid`` finds valid on a page of the same scheme, told at a regular expression's cost (the
# canonical of almost every page is such a URL, most often the page's own).
_PLAIN_URL = re.compile(r"(?i:https?)://[A-Za-z0-9.-]+(?::[0-9]{1,4})?(?:[/?#][^\s]*)?")


def _status_pages(
    ctx: CheckContext, low: int, high: int, linked: set[str] | None = None
) -> Iterator[Finding]:
    for row in rows(ctx).values():
        status = row.get("status")
        if (
            not row.get("is_external")
            and status is not None
            and low <= status <= high
            and row["url"] not in (linked or ())
        ):
            yield Finding(row["url"], str(status))


def client_error_pages(ctx: CheckContext) -> Iterator[Finding]:
    # A 4xx page that internal links end at is one defect, listed by broken-link with each link to it.
    return _status_pages(ctx, 400, 499, broken_targets(ctx))


def server_error_pages(ctx: CheckContext) -> Iterator[Finding]:
    # A 5xx page that internal links end at is link-to-server-error's defect, listed with each link to it.
    return _status_pages(ctx, 500, 599, linked_targets(ctx, "server"))


def failed_urls(ctx: CheckContext) -> Iterator[Finding]:
    # Redirect loops have their own check; every other hard failure of an internal URL is this one, unless
    # internal links end at it: then it is link-to-failed-url's defect, listed with each link to it.
    linked = linked_targets(ctx, "failed")
    for row in rows(ctx).values():
        kind = row.get("error_kind")
        if (
            not row.get("is_external")
            and row.get("status") is None
            and kind
            and kind != "redirect-loop"
            and row["url"] not in linked
        ):
            yield Finding(row["url"], kind)


def _empty(field: str) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        for row in content_pages(ctx):
            if not (row.get(field) or "").strip():
                yield Finding(row["url"])

    return find


def _absent(field: str) -> Finder:
    """Pages whose title or description is missing or empty, told apart in the detail: as the crawl found it
    in the page's HTML (``html_facts.ABSENT``), else read from the stored HTML (an archive written before)."""

    def find(ctx: CheckContext) -> Iterator[Finding]:
        urls = [row["url"] for row in content_pages(ctx) if not (row.get(field) or "").strip()]
        found = stored_fact(ctx, ABSENT_FACT)
        unread = {url for url in urls if field not in found.get(url, ())}
        # the other pages' HTML in one query (a query per page was most of the check on a large commit)
        stored = dict(read.page_html(ctx.reader, ctx.commit, only=unread)) if unread else {}
        for url in urls:
            yield Finding(url, absence(stored.get(url), field) if url in unread else found[url][field])

    return find


def _too_long(field: str, limit: int) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        for row in content_pages(ctx):
            value = (row.get(field) or "").strip()
            if len(value) > limit:
                yield Finding(row["url"], value)

    return find


def _duplicates(field: str) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        for group in ctx.query("duplicates", field=field):
            for url in group["urls"]:
                yield Finding(url, group["value"])

    return find


def _h1(problem: str) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        pages = content_urls(ctx)
        for row in ctx.query("h1-problems", problem=problem):
            if row["url"] in pages:
                yield Finding(row["url"], " | ".join(row["h1"]) if problem == "multiple" else "")

    return find


def _mismatches(ctx: CheckContext) -> dict[str, list[dict[str, Any]]]:
    """The rows of the ``mismatches`` query by kind: one pass over the pages for every kind's check."""

    def load() -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for row in ctx.query("mismatches"):
            found.setdefault(row["kind"], []).append(row)
        return found

    return memo(ctx, "mismatches", load)


def _mismatch(kind: str) -> Finder:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        # an invalid canonical is canonical-invalid, not a page pointing elsewhere
        invalid = invalid_canonicals(ctx) if kind == "canonical" else {}
        for row in _mismatches(ctx).get(kind, ()):
            if row["url"] not in invalid:
                yield Finding(row["url"], row["declared_value"] or "")

    return find


def canonical_is_invalid(written: str, page_url: str) -> bool:
    """Whether a canonical, as written, is no absolute http(s) URL once resolved, or downgrades an https page.

    Empty, fragment-only, containing white space, unparseable, without a host, of a scheme other than http(s)
    (``file:``, ``javascript:``, ``data:``), or ``http:`` on an ``https:`` page: search engines ignore it or
    index the wrong URL. A relative path is resolved against the page, as browsers and crawlers do. An
    ``https:`` canonical on an ``http:`` page is the move to HTTPS that search engines advise: valid (the page
    is canonicalised to it).
    """
    value = written.strip()
    if (
        _PLAIN_URL.fullmatch(value)
        and _PLAIN_URL.fullmatch(page_url)
        and _scheme_allowed(value.partition(":")[0], page_url.partition(":")[0])
    ):
        return False
    return _slow_is_invalid(value, page_url)


def _scheme_allowed(canonical: str, page: str) -> bool:
    """Whether a canonical of scheme ``canonical`` may stand on a page of scheme ``page`` (both http(s))."""
    canonical, page = canonical.lower(), page.lower()
    return canonical == page or (canonical == "https" and page == "http")


def _slow_is_invalid(value: str, page_url: str) -> bool:
    """``canonical_is_invalid`` of a stripped value, worked out with ``urlsplit``."""
    if not value or value.startswith("#") or _SPACE.search(value):
        return True
    try:
        parts = urlsplit(value)
        if not parts.scheme:
            parts = urlsplit(urljoin(page_url, value))
        parts.port  # noqa: B018 - a port that is no number raises ValueError
    except ValueError:
        return True
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return True
    return not _scheme_allowed(parts.scheme, urlsplit(page_url).scheme)


def invalid_canonicals(ctx: CheckContext) -> dict[str, str]:
    """Content pages whose canonical is invalid, with the value as written (the resolved one on old commits)."""

    def load() -> dict[str, str]:
        found = {}
        for row in content_pages(ctx):  # the rows hold the canonicals: no second pass over the commit
            url, canonical, written = row["url"], row["canonical"], row["canonical_href"]
            if canonical is None and written is None:
                continue
            value = canonical if written is None else written
            if canonical_is_invalid(str(value or ""), url):
                found[url] = value.strip() if str(value or "").strip() else f'href="{value or ""}"'
        return found

    return memo(ctx, "invalid_canonicals", load)


def canonical_invalid(ctx: CheckContext) -> Iterator[Finding]:
    for url, written in sorted(invalid_canonicals(ctx).items()):
        yield Finding(url, written)


def jsonld_errors(ctx: CheckContext) -> Iterator[Finding]:
    pages = content_urls(ctx)
    for block in read.jsonld_rows(ctx.reader, ctx.commit):
        if block.error and block.url in pages:
            yield Finding(block.url, without_positions(block.error))


def _page_errors(console: bool) -> Finder:
    # Only pages that answered 2xx: an error page's console always reports its own failed status.
    def find(ctx: CheckContext) -> Iterator[Finding]:
        pages = content_urls(ctx)
        for error in read.page_error_rows(ctx.reader, ctx.commit):
            if error.url in pages and (error.step == "console") == console:
                message = without_positions(error.message)
                yield Finding(error.url, message if console else f"{error.step}: {message}")

    return find


def _check(
    id: str,
    title: str,
    category: str,
    priority: str,
    description: str,
    fix: str,
    help_url: str,
    find: Finder,
    order: int,
    defect: str = "",
    type: str = "issue",
) -> Check:
    return Check(
        id,
        title,
        category,
        priority,
        description,
        fix,
        help_url,
        lambda ctx: unique(find(ctx)),
        defect=defect,
        order=order,
        type=type,
    )


CHECKS = [
    _check(
        "client-error-page",
        "Internal URLs answering 4xx",
        "response",
        "medium",
        "Internal URLs that answered a client error (404, 410, 403, …) and that no crawled page links to (a "
        "start URL, a sitemap entry…); the detail is the status. A 4xx URL that pages link to is a broken-link "
        "finding, listed with each link to it, not a second defect here.",
        "Restore the page or redirect it to its replacement; then fix the links pointing at it.",
        STATUS_HELP,
        client_error_pages,
        20,
    ),
    _check(
        "server-error-page",
        "Internal URLs answering 5xx",
        "response",
        "high",
        "Internal URLs that answered a server error (500, 502, 503, …) and that no crawled page links to (a "
        "start URL, a sitemap entry…): the site failed for this page. A 5xx URL that pages link to is a "
        "link-to-server-error finding, listed with each link to it, not a second defect here.",
        "Find the error in the server's logs and fix it.",
        STATUS_HELP,
        server_error_pages,
        21,
    ),
    _check(
        "failed-url",
        "Internal URLs that could not be fetched",
        "response",
        "high",
        "Internal URLs that gave no HTTP answer (timeout, refused connection, DNS, TLS, …) and that no crawled "
        "page links to; the detail is the error kind. One that pages link to is a link-to-failed-url finding.",
        "Make the URL answer: check the server, its TLS certificate and its DNS records.",
        "https://developers.google.com/search/docs/crawling-indexing/http-network-errors",
        failed_urls,
        22,
    ),
    _check(
        "title-missing",
        "Pages without a title",
        "metadata",
        "high",
        "HTML pages with no <title> or an empty one (the detail says which: missing or empty): search results "
        "and browser tabs show the bare URL.",
        "Give every page a unique, descriptive <title>.",
        TITLE_HELP,
        _absent("title"),
        40,
        defect="title-missing",
    ),
    _check(
        "title-duplicate",
        "Pages sharing a title",
        "metadata",
        "medium",
        "HTML pages (status 200) whose title another page has too; the detail is the shared title.",
        "Write a title that says what this page has that the others do not.",
        TITLE_HELP,
        _duplicates("title"),
        41,
        type="opportunity",
    ),
    _check(
        "title-too-long",
        "Titles too long",
        "metadata",
        "low",
        f"Titles over {TITLE_MAX} characters, which search results cut off; the detail is the title.",
        f"Keep titles under about {TITLE_MAX} characters, the important words first.",
        TITLE_HELP,
        _too_long("title", TITLE_MAX),
        42,
        type="opportunity",
    ),
    _check(
        "description-missing",
        "Pages without a meta description",
        "metadata",
        "medium",
        "HTML pages with no meta description or an empty one (the detail says which: missing or empty): "
        "search engines make up the snippet.",
        'Add a <meta name="description"> that summarises the page in a sentence or two.',
        SNIPPET_HELP,
        _absent("description"),
        43,
        type="opportunity",
        defect="description-missing",
    ),
    _check(
        "description-duplicate",
        "Pages sharing a meta description",
        "metadata",
        "low",
        "HTML pages (status 200) whose meta description another page has too; the detail is the description.",
        "Write a description specific to each page, or leave it out rather than repeat one.",
        SNIPPET_HELP,
        _duplicates("description"),
        44,
        type="opportunity",
    ),
    _check(
        "description-too-long",
        "Meta descriptions too long",
        "metadata",
        "low",
        f"Meta descriptions over {DESCRIPTION_MAX} characters, which search results cut off.",
        f"Keep descriptions under about {DESCRIPTION_MAX} characters.",
        SNIPPET_HELP,
        _too_long("description", DESCRIPTION_MAX),
        45,
        type="opportunity",
    ),
    _check(
        "viewport-missing",
        "Pages without a viewport",
        "metadata",
        "medium",
        'HTML pages without <meta name="viewport">: phones show them zoomed out as on a desktop.',
        'Add <meta name="viewport" content="width=device-width, initial-scale=1">.',
        "https://developer.mozilla.org/en-US/docs/Web/HTML/Viewport_meta_tag",
        _empty("viewport"),
        46,
        defect="viewport-missing",
    ),
    _check(
        "lang-missing",
        "Pages without a language",
        "accessibility",
        "medium",
        "HTML pages whose <html> has no lang attribute: screen readers guess the pronunciation, translators "
        "the language.",
        'Set <html lang="…"> to the page\'s language (en, de, ja, …).',
        "https://www.w3.org/International/questions/qa-html-language-declarations",
        _empty("lang"),
        70,
        defect="html-lang",
    ),
    _check(
        "canonical-invalid",
        "Canonical URL is not a valid URL of the site",
        "indexability",
        "high",
        "HTML pages whose rel=canonical is no absolute http(s) URL: file:, javascript: or data:, empty or only "
        "a fragment, malformed (white space, no host, unparseable), or http: on an https: page (the detail is "
        "the value as written). Search engines ignore it or index the wrong URL. An https: canonical on an "
        "http: page is the advised move to HTTPS, not this defect.",
        "Write the page's public absolute URL (or the one it duplicates) on the site's scheme; check the base "
        "URL the site generator is configured with.",
        CANONICAL_HELP,
        canonical_invalid,
        32,
    ),
    _check(
        "canonical-mismatch",
        "Canonical URL points elsewhere",
        "indexability",
        "low",
        "HTML pages whose rel=canonical names another URL (the detail): search engines index that one instead. "
        "Intended for duplicates; a mistake on a page of its own.",
        "Make the canonical the page's own URL unless the page really duplicates the named one.",
        CANONICAL_HELP,
        _mismatch("canonical"),
        33,
        type="warning",
    ),
    _check(
        "og-title-mismatch",
        "Shared title (og:title) differs from the title",
        "metadata",
        "info",
        "Pages whose og:title (the detail), shown when the page is shared, differs from its <title>.",
        "Check that the shared title still describes the page; align the two when they drifted apart.",
        "https://ogp.me/",
        _mismatch("og_title"),
        47,
        type="warning",
    ),
    _check(
        "og-description-mismatch",
        "Shared description (og:description) differs from the description",
        "metadata",
        "info",
        "Pages whose og:description (the detail) differs from their meta description.",
        "Check that the shared description still describes the page; align the two when they drifted apart.",
        "https://ogp.me/",
        _mismatch("og_description"),
        48,
        type="warning",
    ),
    _check(
        "h1-missing",
        "Pages without an h1",
        "content",
        "medium",
        "HTML pages (2xx) without an <h1>: readers, screen readers and search engines miss the main heading.",
        "Give the page one <h1> naming its subject.",
        "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/Heading_Elements",
        _h1("missing"),
        50,
        defect="h1-missing",
    ),
    _check(
        "h1-multiple",
        "Pages with several h1",
        "content",
        "low",
        "HTML pages (2xx) with more than one <h1>; the detail is their texts.",
        "Keep one <h1> for the page's subject and make the others <h2>.",
        "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/Heading_Elements",
        _h1("multiple"),
        51,
        type="warning",
        defect="h1-multiple",
    ),
    _check(
        "jsonld-parse-error",
        "JSON-LD that does not parse",
        "structured-data",
        "medium",
        "JSON-LD scripts that are not valid JSON (the detail is the parser's message): search engines ignore "
        "the whole script.",
        "Fix the JSON (a validator shows where) or generate it with a JSON serialiser.",
        "https://developers.google.com/search/docs/appearance/structured-data/intro-structured-data",
        jsonld_errors,
        60,
    ),
    _check(
        "console-error",
        "Pages logging errors in the browser console",
        "content",
        "low",
        "Pages whose scripts threw or whose sub-resources failed while they rendered (the detail is the "
        "console message): a feature of the page may not work.",
        "Open the page with the browser's developer tools and fix the errors they show.",
        "https://developer.chrome.com/docs/devtools/console",
        _page_errors(True),
        61,
        type="warning",
    ),
    _check(
        "page-error",
        "Pages the crawler could only partly read",
        "crawl",
        "low",
        "A step of reading the page failed (the detail names the step and the error): some of its data, such "
        "as links, images or screenshots, may be missing.",
        "Look at the error; re-crawl the page, with a longer --page-timeout if it timed out.",
        "",
        _page_errors(False),
        90,
        type="warning",
    ),
]
