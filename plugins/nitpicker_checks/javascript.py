"""JavaScript dependence: what a crawler that runs no JavaScript misses of a page, from its two stored versions.

A rendered page is stored twice: the HTML as sent and the HTML after the browser ran its scripts. The crawl
compares them once, where the page is scraped (``nitpicker_core.html_facts.js_dependence``, stored in
``page_state.html_facts`` as ``js``); the checks read that, and only a page stored before (no ``js`` fact)
is compared here from its two stored HTMLs. A page left unrendered (``--render never``) has one version:
nothing to compare, no finding, empty columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nitpicker_core import (
    JS_DEPENDENCE_FACT,
    CheckContext,
    Finding,
    RegisterSetting,
    UsageError,
    js_dependence,
    read,
    stored_html_facts,
)

from .common import content_urls, family, memo

PLUGIN = "checks"
DEFAULT_TEXT_SHARE = 50  # percent of the rendered main text the HTML as sent must already show
HELP = "https://developers.google.com/search/docs/crawling-indexing/javascript/javascript-seo-basics"


def register_settings(register: RegisterSetting) -> None:
    register(
        "js_text_share",
        type="int",
        default=DEFAULT_TEXT_SHARE,
        help="js-text-rendered-only: pages whose HTML as sent shows less than this percent of the rendered "
        "main text's words (0 turns it off)",
    )


def text_share_setting(settings: Mapping[str, Any]) -> int:
    value = settings.get("js_text_share")
    value = DEFAULT_TEXT_SHARE if value is None else int(value)
    if not 0 <= value <= 100:
        raise UsageError(
            f"plugins.checks.js_text_share (--checks-js-text-share) must be 0 to 100, got {value}"
        )
    return value


def dependence(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """What JavaScript changed of each internal 2xx HTML page with both versions stored, by URL."""

    def load() -> dict[str, dict[str, Any]]:
        pages = content_urls(ctx)
        found: dict[str, dict[str, Any]] = {}
        unread: set[str] = set()
        parsed: dict[str, dict[str, Any]] = memo(ctx, "html_facts_parsed", dict)  # shared with common's
        stored_rows = memo(ctx, "html_facts_stored", lambda: read.page_html_facts(ctx.reader, ctx.commit))
        for url, text, has_html, has_sent in stored_rows:
            if url not in pages or not (has_html and has_sent):
                continue
            if text is None:
                unread.add(url)
                continue
            facts = parsed.get(text)
            if facts is None:
                facts = parsed[text] = stored_html_facts(text)
            if JS_DEPENDENCE_FACT not in facts:
                unread.add(url)  # stored before the comparison was: read below
            elif facts[JS_DEPENDENCE_FACT] is not None:
                found[url] = facts[JS_DEPENDENCE_FACT]
        if not stored_rows:  # an archive without stored facts: every page with both versions
            unread = set(pages)
        if unread:
            sent = dict(read.page_html(ctx.reader, ctx.commit, True, only=unread))
            for url, html in read.page_html(ctx.reader, ctx.commit, False, only=unread):
                source = sent.get(url)
                if source is not None and source != html:
                    compared = js_dependence(url, html, source)
                    if compared is not None:
                        found[url] = compared
        return found

    return memo(ctx, "javascript:dependence", load)


def links_rendered_only(ctx: CheckContext) -> Iterator[Finding]:
    for url, js in dependence(ctx).items():
        if js.get("link_count"):
            more = js["link_count"] - 1
            yield Finding(url, js["links"][0] + (f" (and {more} more)" if more else ""))


def text_rendered_only(ctx: CheckContext) -> Iterator[Finding]:
    limit = text_share_setting(ctx.settings_for(PLUGIN))
    for url, js in dependence(ctx).items():
        share = js.get("text_share")
        if share is not None and share < limit:
            yield Finding(url)  # no share in the detail: it moves with every edit (the raw_text_share column)


def changed_by_js(ctx: CheckContext) -> Iterator[Finding]:
    for url, js in dependence(ctx).items():
        if js.get("changed"):
            yield Finding(url, ", ".join(js["changed"]))


def noindex_differs(ctx: CheckContext) -> Iterator[Finding]:
    for url, js in dependence(ctx).items():
        sent_noindex = (js.get("noindex") or [None])[0]
        if sent_noindex is not None:
            yield Finding(url, "noindex only as sent" if sent_noindex else "noindex only after rendering")


_check = family("javascript", HELP)
CHECKS = [
    _check(
        "js-noindex-mismatch",
        "Noindex in one version of the page only",
        "high",
        "Internal HTML pages (status 2xx) whose meta robots says noindex in the HTML as sent and not after "
        "JavaScript ran, or the other way round; the detail says which. Crawlers that run no JavaScript and "
        "those that do disagree on whether the page may be indexed. Pages crawled with --render never have "
        "one version only and are not compared.",
        "Send the robots directive the page should have in the HTML itself and leave it alone in scripts.",
        noindex_differs,
        120,
        type="issue",
    ),
    _check(
        "js-links-rendered-only",
        "Internal links only after JavaScript",
        "medium",
        "Internal HTML pages (status 2xx) with internal links that only the rendered page has: crawlers "
        "that run no JavaScript (most AI crawlers, and search engines before they render) do not see them. "
        "The detail is the first such link (and how many more); the pages list's js_links column counts them.",
        "Write the links into the HTML the server sends (server-side rendering or plain <a href> links).",
        links_rendered_only,
        121,
        type="warning",
    ),
    _check(
        "js-text-rendered-only",
        "Main text mostly added by JavaScript",
        "medium",
        f"Internal HTML pages (status 2xx) whose HTML as sent shows less than the setting "
        f"({DEFAULT_TEXT_SHARE}% by default) of the words of the rendered page's main content; the pages "
        "list's raw_text_share column gives the share.",
        "Render the main content on the server, or prerender the page.",
        text_rendered_only,
        122,
        type="warning",
        settings=("js_text_share",),
    ),
    _check(
        "js-head-changed",
        "Title, description, canonical, robots or H1 set by JavaScript",
        "medium",
        "Internal HTML pages (status 2xx) whose title, meta description, canonical, meta robots or first H1 "
        "differs between the HTML as sent and the rendered page (set, changed or removed by JavaScript); "
        "the detail and the pages list's js_changed column name the fields. Crawlers that run no "
        "JavaScript see the other value.",
        "Send the final values in the HTML; let scripts leave them alone.",
        changed_by_js,
        123,
        type="warning",
    ),
]
