"""`/pages`, `/page?url=` and `/page/html?url=`: the page list, one page's detail and its sandboxed HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, abort, request

from nitpicker_core import MenuLink, RegisterBlueprint, hookimpl, priority_of
from nitpicker_core.content_types import CATEGORIES
from nitpicker_core.errors import NitpickerError
from nitpicker_viewer import structured, versions
from nitpicker_viewer.app import has_query, query, query_at, query_once, render
from nitpicker_viewer.blueprints.issues import page_issues
from nitpicker_viewer.tables import Col, Filter, paged_table, status_filter

if TYPE_CHECKING:
    from flask import Request

pages = Blueprint("pages", __name__, template_folder="../templates")

METADATA_FIELDS = (
    "title",
    "description",
    "keywords",
    "lang",
    "canonical",
    "viewport",
    "robots",
    "og_title",
    "og_description",
    "og_image",
    "twitter_card",
)
# The crawled page's HTML is untrusted: an opaque origin with no script, no network, no forms, no plugins.
# Framed only by the viewer's own page view (frame-ancestors 'self').
SANDBOX_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'"

PAGE_COLUMNS = (
    Col("url", "col.url", "url", "page"),
    Col("status", "col.status", "status", "status"),
    Col("content_type", "col.content_type", "content_type"),
    Col("title", "col.title", "title"),
    Col("content_length", "col.size", "size", "num"),
    Col("crawl_order", "col.crawl_order", "crawl_order", "num"),
    Col("error_kind", "col.error_kind"),
    Col("outcome", "col.outcome", None, "outcome"),
)
# The SEO column set (`?set=seo`): what a search engine sees of each URL, sortable (docs/seo.md)
SEO_PAGE_COLUMNS = (
    Col("url", "col.url", "url", "page"),
    Col("status", "col.status", "status", "status"),
    Col("indexable", "col.indexability", "indexable", "indexability"),
    Col("indexability_reason", "col.indexability_reason", "indexability_reason"),
    Col("depth", "col.depth", "depth", "num"),
    Col("response_ms", "col.response_ms", "response_ms", "num"),
    Col("inlinks", "col.inlinks", "inlinks", "num"),
    Col("unique_inlinks", "col.unique_inlinks", "unique_inlinks", "num"),
    Col("outlinks", "col.outlinks", "outlinks", "num"),
    Col("word_count", "col.word_count", "word_count", "num"),
    Col("h1", "col.h1", "h1"),
    Col("h1_count", "col.h1_count", "h1_count", "num"),
    Col("title_length", "col.title_length", "title_length", "num"),
    Col("title_px", "col.title_px", "title_px", "num"),
    Col("description_length", "col.description_length", "description_length", "num"),
    Col("description_px", "col.description_px", "description_px", "num"),
    Col("js_links", "col.js_links", "js_links", "num"),
    Col("raw_text_share", "col.raw_text_share", "raw_text_share", "num"),
    Col("js_changed", "col.js_changed", None),
    Col("render_decision", "col.render_decision", None),
)
# The content column set (`?set=content`): what the duplicate checks found per page (docs/duplicates.md)
CONTENT_PAGE_COLUMNS = (
    Col("url", "col.url", "url", "page"),
    Col("status", "col.status", "status", "status"),
    Col("main_words", "col.main_words", "main_words", "num"),
    Col("exact_duplicates", "col.exact_duplicates", "exact_duplicates", "num"),
    Col("duplicate_group", "col.duplicate_group", "duplicate_group", "page"),
    Col("near_duplicates", "col.near_duplicates", "near_duplicates", "num"),
    Col("closest_near_duplicate", "col.closest_near_duplicate", "closest_near_duplicate", "page"),
    Col("near_similarity", "col.near_similarity", "near_similarity", "num"),
)
COLUMN_SETS = ("standard", "seo", "content")
SET_COLUMNS = {"standard": PAGE_COLUMNS, "seo": SEO_PAGE_COLUMNS, "content": CONTENT_PAGE_COLUMNS}
# Range filters of the SEO and content sets: the pages query's min_/max_ parameters
SEO_RANGES = ("depth", "inlinks", "word_count", "response_ms", "title_px")
CONTENT_RANGES = ("main_words", "exact_duplicates", "near_duplicates", "near_similarity")
OUTCOMES = ("answered", "blocked", "redirect", "skipped", "failed", "not_checked")
HISTORY_CHANGES = (
    20  # newest changes of a page whose fields are read (one page-diff each); older ones are counted
)
SET_FACETS = ("headers", "extra", "anchors", "images", "resources", "jsonld", "tags", "headings", "errors")


def page_filters() -> tuple[Filter, ...]:
    return (
        status_filter(codes()),
        Filter(
            "category",
            "filter.category",
            "select",
            (("", "any"), *((c, "category." + c) for c in categories())),
        ),
        Filter(
            "missing",
            "filter.missing",
            "select",
            (("", "any"), *((f, "field." + f) for f in METADATA_FIELDS)),
        ),
        Filter("url", "filter.url_pattern"),
        Filter(
            "outcome", "filter.outcome", "select", (("", "any"), *((o, "outcome." + o) for o in OUTCOMES))
        ),
        Filter("strict", "filter.strict", "check"),
        Filter("every_type", "filter.every_type", "check"),
        Filter("external", "filter.include_external", "check"),  # last: index() sends it apart
    )


def seo_filters() -> tuple[Filter, ...]:
    indexable = Filter(
        "indexable",
        "filter.indexable",
        "select",
        (("", "any"), ("true", "seo.indexable"), ("false", "seo.non_indexable")),
    )
    return (indexable, *range_filters(SEO_RANGES))


def range_filters(names: tuple[str, ...]) -> tuple[Filter, ...]:
    return tuple(
        Filter(f"{bound}_{name}", f"filter.{bound}_{name}", "number")
        for name in names
        for bound in ("min", "max")
    )


def set_filters(column_set: str) -> tuple[Filter, ...]:
    """The filters a column set adds to the standard ones."""
    if column_set == "seo":
        return seo_filters()
    if column_set == "content":
        return range_filters(CONTENT_RANGES)
    return ()


def codes() -> list[int]:
    """The status codes the commit's URLs answered with (from the summary: stored, so no pass over the pages)."""
    return [row["status"] for row in query("summary")["status"]["by_code"]]


def categories() -> tuple[str, ...]:
    """The content-type categories the commit has URLs of (the summary counts them), in the usual order."""
    present = {row["category"] for row in query("summary")["content_types"] if row["count"]}
    return tuple(c for c in CATEGORIES if c in present)


@pages.get("/pages")
def index() -> str:
    # Internal pages unless "include external" is ticked: then the query's filter is left out entirely.
    asked = request.args.get("set") or "standard"
    column_set = asked if asked in COLUMN_SETS else "standard"
    base = page_filters()
    filters = (*base[:-1], *set_filters(column_set), base[-1])
    params = {} if request.args.get("external") else {"external": "false"}
    offered = analysis_columns()
    chosen = [key for key in request.args.getlist("acol") if key in offered]
    shown = SET_COLUMNS[column_set]
    columns = (*shown, *(Col("acol:" + key, offered[key], None, "cell") for key in chosen))
    table = paged_table(
        "pages",
        "view.pages",
        "pages",
        columns,
        filters=filters[:-1],
        params=params,
        default_sort="url",
        shape=with_cells(chosen) if chosen else None,
    )
    table.filters = filters
    return render(
        "pages.html",
        title="view.pages",
        table=table,
        offered=offered,
        chosen=chosen,
        column_set=column_set,
        column_sets=COLUMN_SETS,
    )


def analysis_columns() -> dict[str, str]:
    """The analyzer columns the pages table can add, ``analyzer:column`` → its heading, from the data."""
    if not has_query("analysis-columns"):
        return {}
    return {
        f"{c['analyzer']}:{c['column']}": f"{c['analyzer']}: {c['column']}"
        for c in query("analysis-columns")["items"]
    }


def with_cells(chosen: list[str]) -> Any:
    """A shape adding the ``chosen`` analyzer cells to page rows (one indexed lookup per page)."""

    def shape(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            found = query_once("analysis", page=row["url"], limit=1000)["items"]
            cells = {
                f"{entry['analyzer']}:{column}": value
                for entry in found
                for column, value in entry["cells"].items()
            }
            row.update({"acol:" + key: cells.get(key) for key in chosen})
        return rows

    return shape


def _page_rows(name: str, url: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of a list query filtered by URL substring, kept only where the page is exactly ``url``."""
    rows = query(name, url=url, limit=1000, **params)["items"]
    return [row for row in rows if row.get("page", row.get("url")) == url]


@pages.get("/page")
def detail() -> str:
    url = request.args.get("url", "")
    if not url:
        abort(400, "give ?url=")
    data = query("page-detail", url=url)
    jsonld = query("page-jsonld", url=url)["items"] if has_query("page-jsonld") else []
    images = _page_rows("images", url) if data.get("images") else []
    violations = [
        {**row, "priority": row.get("priority") or priority_of(row.get("severity"))}
        for row in _page_rows("violations", url)
    ]
    # shown only when an analyzer failed on this page: its findings are missing from the violations above
    errors = _page_rows("analyzer-errors", url) if has_query("analyzer-errors") else []
    found = page_issues(url) if has_query("issues") else []
    history = page_history(url) if has_query("history") else None
    return render(
        "page.html",
        sd_tree=structured_tree(url, violations),
        versions=page_versions(url),
        title="view.page",
        url=url,
        d=data,
        page=data.get("page") or {},
        issues=found,
        jsonld=jsonld,
        images=images,
        violations=violations,
        analyzer_errors=errors,
        fields=METADATA_FIELDS,
        history=history,
    )


def structured_tree(url: str, violations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The page's structured-data items as a tree with their findings (structured.py); None without them."""
    if not has_query("analysis"):
        return None
    rows = query("analysis", analyzer=structured.ANALYZER, column=structured.CELL, page=url, limit=1)["items"]
    return structured.tree(rows[0]["cells"].get(structured.CELL) if rows else None, violations)


def page_versions(url: str) -> dict[str, Any]:
    """The raw-vs-rendered tab's comparison of the page's HTML as sent and rendered (versions.py)."""
    if not has_query(versions.QUERY):
        return versions.comparison(None)
    return versions.comparison(query_once(versions.QUERY, url=url, max_chars=versions.MAX_CHARS))


def page_history(url: str) -> dict[str, Any] | None:
    """The page across the commits up to the shown one, and each change as rows of (commit, what, old, new).

    Newest change first, so "when did this title change?" is the first row naming ``title``.
    """
    try:
        data = query("history", url=url)
    except NitpickerError:  # a URL no commit holds as a page (only linked to): no history to show
        return None
    started = {entry["commit"]: entry.get("started_at") for entry in data["commits"]}
    newest = data["changes"][::-1][:HISTORY_CHANGES]
    rows: list[dict[str, Any]] = []
    for change in newest:
        at = {"commit": change["commit"], "base": change["base"], "started_at": started.get(change["commit"])}
        if change.get("status") != "modified":
            rows.append({**at, "what": change.get("status"), "kind": "status"})
            continue
        delta = query_at("page-diff", change["commit"], url=url, base=change["base"])
        rows += [
            {**at, "what": name, "kind": "field", "old": pair[0], "new": pair[1]}
            for name, pair in (delta.get("fields") or {}).items()
        ]
        for name in SET_FACETS:
            part = delta.get(name) or {}
            added, removed = part.get("added") or (), part.get("removed") or ()
            changed = part.get("changed") or {}
            if added or removed or changed:
                rows.append(
                    {
                        **at,
                        "what": name,
                        "kind": "set",
                        "added": len(added),
                        "removed": len(removed),
                        "changed": len(changed),
                    }
                )
    return {
        "commits": data["commits"],
        "rows": rows,
        "changes": len(data["changes"]),
        "older": len(data["changes"]) - len(newest),
    }


@pages.get("/page/html")
def html() -> Response:
    """The rendered HTML as its own document, for the sandboxed iframe of the page view only."""
    url = request.args.get("url", "")
    if not url:
        abort(400, "give ?url=")
    data = query("page-html", url=url, max_chars=2_000_000)
    body = data.get("html") or ""
    response = Response(body, content_type="text/html; charset=utf-8")
    response.headers["Content-Security-Policy"] = SANDBOX_CSP
    response.headers["Cache-Control"] = "no-store"
    return response


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(pages)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [MenuLink("/pages", "view.pages", order=10)]
