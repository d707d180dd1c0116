"""Page queries: the summary, the filtered page list, one page's detail and its rendered HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    CATEGORIES,
    COUNT_DEFINITIONS,
    METADATA_FIELDS,
    Query,
    count_totals,
    read,
    version_record,
)
from nitpicker_core.archive import aggregates, digest

from .analysis import page_analysis
from .common import PAGING, sorting, status_class_param
from .screenshots import page_screenshot

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

TEXT_FIELDS = tuple(
    f for f in METADATA_FIELDS if f not in {"noindex", "nofollow", "noarchive", "noimageindex"}
)

PAGE_SORTS = read.PAGE_SORTS


def _summary(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    found = aggregates.value(archive, commit, "summary")
    if "internal" not in found["status"]:  # stored by a nitpicker that did not split statuses by side
        found = {"commit": commit, **digest.summary(archive.execute, commit)}
    # the named counts every front door shows, derived here once (nitpicker_core.counts defines them)
    return {
        **found,
        "totals": count_totals(found),
        "definitions": dict(COUNT_DEFINITIONS),
        # robots.txt's site-wide verdict on the well-known crawlers (the crawlers query has each one)
        "crawlers": read.crawler_summary(archive, commit),
    }


def _pages(
    archive: ArchiveReader,
    commit: int,
    limit: int,
    offset: int,
    sort: str,
    order: str,
    status: int | None = None,
    missing: str | None = None,
    url: str | None = None,
    category: str | None = None,
    external: bool | None = None,
    tag: str | None = None,
    jsonld_type: str | None = None,
    strict: bool = False,
    outcome: str | None = None,
    status_class: str | None = None,
    every_type: bool = False,
    indexable: bool | None = None,
    **bounds: float | None,
) -> dict[str, Any]:
    ranges = {
        name: (bounds.get(f"min_{name}"), bounds.get(f"max_{name}")) for name in read.PAGE_RANGE_COLUMNS
    }
    return read.page_list(
        archive,
        commit,
        limit,
        offset,
        sort,
        order,
        status,
        missing,
        url,
        category,
        external,
        tag,
        jsonld_type,
        strict,
        outcome,
        status_class,
        every_type,
        indexable,
        ranges,
    )


def _range_params() -> dict[str, dict[str, Any]]:
    params: dict[str, dict[str, Any]] = {}
    for name in read.PAGE_RANGE_COLUMNS:
        for bound, word in (("min", "at least"), ("max", "at most")):
            params[f"{bound}_{name}"] = {
                "type": "number",
                "description": f"only rows whose {name} is {word} this (rows without one are left out)",
            }
    return params


def _state(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    return read.page_ids(archive, commit, url)


def _page_detail(
    archive: ArchiveReader, commit: int, url: str, inbound_limit: int, resource_limit: int = 200
) -> dict[str, Any]:
    ids = _state(archive, commit, url)
    page = archive.page(url, commit)
    assert page is not None  # _state found the URL in this commit
    rows = read.page_detail_rows(archive, commit, ids["url_id"], ids["state_id"], resource_limit)
    page["category"] = rows["category"]
    return {
        "url": url,
        "page": page,
        "skip_reason": page.get("skip_reason", ""),
        "outbound": rows["outbound"],
        "inbound": read.inbound_links(archive, commit, ids["url_id"], inbound_limit),
        "redirect_sources": rows["redirect_sources"],
        "crawl_errors": rows["crawl_errors"],
        "page_errors": archive.page_errors(url, commit),
        "images": rows["images"],
        "resources": rows["resources"],
        "tags": rows["tags"],
        "analysis": page_analysis(archive, commit, ids["url_id"]),
        "screenshot": page_screenshot(archive, ids["state_id"]),
        "indexability": read.page_indexability(archive, commit, ids["url_id"]),
        # --render auto: rendered or read as sent, the template and why (None in the other modes)
        "render": read.page_render_decision(archive, commit, ids["url_id"]),
    }


def _page_html(archive: ArchiveReader, commit: int, url: str, max_chars: int) -> dict[str, Any]:
    _state(archive, commit, url)
    html = archive.html(url, commit)
    if html is None:
        return {"url": url, "html": None, "length": 0, "truncated": False}
    return {"url": url, "html": html[:max_chars], "length": len(html), "truncated": len(html) > max_chars}


def _page_versions(archive: ArchiveReader, commit: int, url: str, max_chars: int) -> dict[str, Any]:
    _state(archive, commit, url)
    page = archive.page(url, commit)
    assert page is not None  # _state found the URL in this commit
    extra = page.get("extra") or {}
    unrendered = extra.get("unrendered")
    versions: dict[str, Any] = {}
    # an unrendered page's stored HTML is the HTML as sent: one version, nothing to compare
    texts = {
        "sent": archive.source(url, commit),
        "rendered": None if unrendered else archive.html(url, commit),
    }
    for kind, html in texts.items():
        versions[kind] = (
            None
            if html is None
            else {
                "html": html[:max_chars],
                "length": len(html),
                "truncated": len(html) > max_chars,
                "record": version_record(url, html),
            }
        )
    return {
        "url": url,
        "unrendered": unrendered,
        "source_omitted": extra.get("source_omitted"),
        **versions,
    }


URL_PARAM = {"url": {"type": "string", "description": "the page's URL exactly as crawled"}}

QUERIES = [
    Query(
        "summary",
        "Counts of internal/external URLs and pages (internal URLs include the host's URLs outside "
        "the crawl's scope, counted apart as outside_scope: checked, never pages), status distribution (hard "
        "failures broken down by error kind; URLs never requested counted apart as not_checked), content "
        "types by category and metadata fill rates of internal HTML pages; `totals` names the counts every "
        "front door shows (urls, internal_urls, external_urls, pages, 2xx…5xx, failed, skipped, "
        "not_checked) and `definitions` says what each one means; `crawlers` names the well-known crawlers "
        "robots.txt blocks site-wide, AI crawlers apart (null when no robots.txt was read; the crawlers query "
        "has each one).",
        _summary,
        order=10,
    ),
    Query(
        "pages",
        "Pages of the commit. Default: HTML pages plus rows without a content type that are not "
        "redirects (failures, skipped URLs and URLs never requested); `strict` keeps only text/html; "
        "`every_type` keeps every URL, and so does a `status`, `status_class` or `outcome` filter unless "
        "`strict` or a `category` narrows the type; a `category` replaces them. Each row says its `outcome` (answered, blocked, redirect, skipped, failed, not_checked) "
        "and has the SEO columns (docs/seo.md): `indexable` and `indexability_reason`, `depth` (clicks from the nearest "
        "start URL), `response_ms` (to the first byte) and `load_ms` (to the load event) of this crawl's request, "
        "`http_version`, `inlinks`/`unique_inlinks` (other pages' anchors, through redirects, and those pages), "
        "`outlinks`/`unique_outlinks` and `external_outlinks`/`unique_external_outlinks` (the page's anchors to other URLs), "
        "`word_count` (visible words, segmented in the page's language), `h1` (the first), `h1_count`, `h2` (the first), "
        "`title_length`/`description_length` (characters) and `title_px`/`description_px` (pixels as a search result sets "
        "them), `meta_robots`, `x_robots_tag`, `robots_directives` (both parsed, per user agent) and `last_modified`; "
        "and the content columns (docs/duplicates.md), what the duplicate checks found when the commit completed, "
        "empty for a page they did not compare and for a commit or archive without them: `main_words` (words of "
        "the main content), `exact_duplicates` (other pages with the same main content) and `duplicate_group` "
        "(the group's first URL), `near_duplicates` (pages at least the similarity setting like it), "
        "`closest_near_duplicate` and `near_similarity` (its exact similarity in percent, rounded down to two "
        "decimals); `min_NAME`/`max_NAME` bound the numeric ones.",
        _pages,
        {
            **PAGING,
            **sorting(PAGE_SORTS, "url"),
            "status": {"type": "integer", "description": "HTTP status code"},
            **status_class_param("an error was recorded: the outcome failed"),
            "missing": {
                "type": "string",
                "enum": list(TEXT_FIELDS),
                "description": "metadata field that is empty",
            },
            "url": {
                "type": "string",
                "format": "glob",
                "description": "case-sensitive substring of the URL; a pattern with * ? or [ is a GLOB over the "
                "whole URL (every [ set closed by ]; [[] is a literal [)",
            },
            "category": {"type": "string", "enum": list(CATEGORIES), "description": "content-type category"},
            "external": {"type": "boolean", "description": "only external (true) or internal (false) URLs"},
            "tag": {"type": "string", "description": "tag provider name (e.g. Google Analytics)"},
            "jsonld_type": {"type": "string", "description": "JSON-LD @type (e.g. Article)"},
            "strict": {"type": "boolean", "default": False, "description": "only text/html pages"},
            "every_type": {
                "type": "boolean",
                "default": False,
                "description": "every URL of the commit whatever its content type (images, redirect "
                "hops…), as the summary's status counts are",
            },
            "outcome": {
                "type": "string",
                "enum": list(digest.OUTCOMES),
                "description": "what became of the URL: answered, blocked (the server refused the crawler: "
                "401, 403, 429, 999 or a bot challenge page), redirect, skipped, failed (an error was "
                "recorded) or not_checked (never requested, e.g. with --no-fetch-external)",
            },
            "indexable": {
                "type": "boolean",
                "description": "only URLs search engines may index (true) or may not (false, with the reason)",
            },
            **_range_params(),
        },
        order=11,
    ),
    Query(
        "page-detail",
        "One URL: metadata, outbound links (`written`: the href exactly as in the page, with line and col "
        "where recorded; `href`: the absolute URL it names), inbound links of other pages resolved "
        "through redirects (grouped by referring page; the page's links to itself counted apart as "
        "`inbound.self_links`), redirect sources, skip reason, errors, the image count, "
        "the sub-resources the page loaded (with status, type and size as stored in the commit), its "
        "technology tags, its analyzer cells (`analysis`: one entry per analyzer with `cells` and `notes`) "
        "and its `screenshot` (`crawl --screenshots`: hash, type, pixels and bytes of the image and its "
        "`thumbnail`, each read with the `screenshot` query; null without one) and its `indexability`: "
        "`indexable` (true, false, or null when the URL was not judged: never requested, skipped by a crawl "
        "rule, external) and the `reason` it is not, as the `pages` list's `indexable` and "
        "`indexability_reason` say (noindex, noindex (X-Robots-Tag), canonicalised to URL, redirects to URL, "
        "the 4xx/5xx status, failed: KIND, blocked by robots.txt, not HTML (TYPE)); and `render`: the "
        "`--render auto` decision this commit took for the page (`mode`, `template`, `rendered`, `reason`; a "
        "sample's `verdict`), null when it took none (another mode, a page an update took over unchanged).",
        _page_detail,
        {
            **URL_PARAM,
            "inbound_limit": {
                "type": "integer",
                "default": 1000,
                "minimum": 1,
                "description": "referring pages to list",
            },
            "resource_limit": {
                "type": "integer",
                "default": 200,
                "minimum": 1,
                "description": "sub-resources to list (sorted by URL; `resources.total` counts them all)",
            },
        },
        required=("url",),
        order=12,
    ),
    Query(
        "page-html",
        "The rendered HTML of one page, truncated to `max_chars`.",
        _page_html,
        {
            **URL_PARAM,
            "max_chars": {
                "type": "integer",
                "default": 100000,
                "minimum": 1,
                "description": "characters to return",
            },
        },
        required=("url",),
        order=13,
    ),
    Query(
        "page-versions",
        "One page's two versions side by side: `sent` (the HTML the server sent) and `rendered` (the HTML "
        "after the browser ran the page's scripts), each with its `html` truncated to `max_chars`, its "
        "`length`, `truncated` and the `record` read from the whole of it the same way for both: `title`, "
        "`description`, `canonicals`, `robots`, `h1s`, `links` (resolved, normalised), `link_count` and "
        "`main_words`. A version not stored is null: `rendered` for a page left unrendered (`unrendered` "
        "says why, e.g. --render never), `sent` where it was not kept (`source_omitted` says why) and in "
        "archives older than format 2.",
        _page_versions,
        {
            **URL_PARAM,
            "max_chars": {
                "type": "integer",
                "default": 200000,
                "minimum": 1,
                "description": "characters of each version's HTML to return",
            },
        },
        required=("url",),
        order=13,
    ),
]
