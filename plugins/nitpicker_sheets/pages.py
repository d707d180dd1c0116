"""Page List and Links: one row per page, streamed from the `report-pages` query in URL order."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_core import Cell, Sheet

from .cells import PATH_COLUMNS, counted, flag, listed, path_cells, text_rule

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

# What Screaming Frog's Internal tab shows per URL, under its names (the pages query's SEO columns)
SEO_FIELDS: tuple[tuple[str, str], ...] = (
    ("Indexability", "indexable"),
    ("Indexability Status", "indexability_reason"),
    ("Crawl Depth", "depth"),
    ("Response Time (ms)", "response_ms"),
    ("Load Time (ms)", "load_ms"),
    ("HTTP Version", "http_version"),
    ("Inlinks", "inlinks"),
    ("Unique Inlinks", "unique_inlinks"),
    ("Outlinks", "outlinks"),
    ("Unique Outlinks", "unique_outlinks"),
    ("External Outlinks", "external_outlinks"),
    ("Unique External Outlinks", "unique_external_outlinks"),
    ("Word Count", "word_count"),
    ("H1-1", "h1"),
    ("H1 Count", "h1_count"),
    ("H2-1", "h2"),
    ("Title Length", "title_length"),
    ("Title Pixel Width", "title_px"),
    ("Description Length", "description_length"),
    ("Description Pixel Width", "description_px"),
    ("Meta Robots", "meta_robots"),
    ("X-Robots-Tag", "x_robots_tag"),
    ("Last Modified", "last_modified"),
)
SEO_COLUMNS = tuple(label for label, _ in SEO_FIELDS)
# What the duplicate checks found per page when the commit completed (the pages query's content columns,
# docs/duplicates.md; empty for a page they did not compare and in an archive without them)
CONTENT_FIELDS: tuple[tuple[str, str], ...] = (
    ("Main Content Words", "main_words"),
    ("Exact Duplicates", "exact_duplicates"),
    ("Duplicate Group", "duplicate_group"),
    ("No. Near Duplicates", "near_duplicates"),
    ("Closest Near Duplicate", "closest_near_duplicate"),
    ("Closest Similarity Match", "near_similarity"),
)
CONTENT_COLUMNS = tuple(label for label, _ in CONTENT_FIELDS)
# What JavaScript changed of a rendered page (the pages query's js_links, raw_text_share and js_changed,
# docs/javascript.md): what a crawler that runs no JavaScript misses; empty for a page with one version
JS_FIELDS: tuple[tuple[str, str], ...] = (
    ("Links Only After JavaScript", "js_links"),
    ("Main Text Without JavaScript (%)", "raw_text_share"),
    ("Changed by JavaScript", "js_changed"),
)
JS_COLUMNS = tuple(label for label, _ in JS_FIELDS)
# Whether the browser rendered the page and why (docs/javascript.md#render-auto): --render auto's decision,
# or why a page was read from the HTML as sent (--render never, a 204, a download…); why the JavaScript
# columns are empty for a page read as sent
RENDER_COLUMNS = ("Rendered", "Rendering Reason")
PAGE_LIST_COLUMNS = (
    "Title",
    "Full Title",
    "URL",
    "Protocol",
    "Domain",
    *PATH_COLUMNS,
    "Status Code",
    "Redirect From",
    "Language",
    "Internal Links",
    "Internal Bad Links",
    "External Links",
    "External Bad Links",
    "Internal Referrers",
    "Self Links",
    "description",
    "keywords",
    "noindex",
    "nofollow",
    "noarchive",
    "canonical",
    "alternate",
    "twitter:card",
    "og:site_name",
    "og:url",
    "og:title",
    "og:description",
    "og:type",
    "og:image",
    *SEO_COLUMNS,
    *JS_COLUMNS,
    *RENDER_COLUMNS,
    *CONTENT_COLUMNS,
)
LINKS_COLUMNS = (
    "URL",
    "Page Title",
    "Status Code",
    "Status Text",
    "Content Type",
    "Redirect From",
    "Referrers",
    "Self Links",
    "Headers",
    "Remarks",
)
STATUS_RULE = {"columns": ("Status Code",), "when": "not_between", "values": (200, 399)}
PAGE_FORMATS = (
    {"columns": ("Internal Bad Links", "External Bad Links"), "when": "ne", "values": (0,)},
    {"columns": ("Language",), "when": "blank"},
    {"columns": ("Internal Referrers",), "when": "lt", "values": (2,)},
    text_rule(
        PATH_COLUMNS, starts=("/_",), ends=("_",), contains=("_copy", "-copy", "copy_", "copy-", "dummy")
    ),
    text_rule(
        ("Title",),
        starts=("401", "403", "404", "500", "501", "502", "503"),
        contains=(" 401", " 403", " 404", " 500", " 501", " 502", " 503"),
    ),
    {"columns": ("Protocol",), "when": "eq", "values": ("http:",)},
    STATUS_RULE,
)
_SEPARATORS = " \t|｜-–—:・/"
_SPACE = re.compile(r"\s+")


class IndexTitles:
    """Titles of the directory-index pages above the current URL (pages arrive in URL order).

    A stack of (directory, title): only ancestors of the current page are kept, so memory follows the
    depth of the site, not its size, and nothing outlives the report run.
    """

    def __init__(self) -> None:
        self._stack: list[tuple[str, str]] = []

    def short(self, url: str, title: str) -> str:
        parts = urlsplit(url)
        path = parts.path or "/"
        base = f"{parts.scheme}://{parts.netloc}"
        directory = base + path[: path.rfind("/") + 1]
        is_index = path.endswith("/") or path.rsplit("/", 1)[-1].startswith("index.")
        self._stack = [(d, t) for d, t in self._stack if directory.startswith(d)]
        nearest = next((t for d, t in reversed(self._stack) if not (is_index and d == directory)), "")
        if is_index and title:
            self._stack = [(d, t) for d, t in self._stack if d != directory] + [(directory, title)]
        if nearest and nearest in title and nearest != title:
            shortened = title.replace(nearest, "").strip(_SEPARATORS)
            return shortened or title
        return title


def _title_cell(short: str, full: str) -> Cell:
    return Cell(short, f"Full title:\n{full}" if short != full else "")


def _bad_note(bad: list[Any] | None, external: bool) -> str:
    """One line per bad link: text (status or error, the href as written => where it led, line:col)."""
    lines = []
    for ext, text, status, status_text, href, dest, line, col, error in bad or []:
        if bool(ext) != external:
            continue
        where = f"{href} => {dest}" if dest and dest != href.split("#", 1)[0] else href
        if line is not None:
            where += f" at {line}:{col}" if col is not None else f" at line {line}"
        code = (
            f"{status} {status_text or ''}".strip() if status is not None else f"failed: {error or 'unknown'}"
        )
        lines.append(f"{_SPACE.sub(' ', text or '').strip() or '__NO_TEXT_CONTENT__'} ({code} {where})")
    return listed(lines, len(lines))


def _analysis_values(item: dict[str, Any], keys: list[tuple[str, str]]) -> list[Any]:
    found = {(a, c): (value, note) for a, c, value, note in item.get("cells") or []}
    out: list[Any] = []
    for key in keys:
        if key not in found:
            out.append(None)  # not analyzed: an empty cell, never a made-up FALSE
            continue
        value, note = found[key]
        if isinstance(value, list | dict):
            value = json.dumps(value, ensure_ascii=False)
        out.append(Cell(value, note) if note else value)
    return out


def analyzer_header(analyzer: str, label: str, prefixes: dict[str, str]) -> str:
    """``Axe: Critical``: the column's label after its analyzer's short label, unless it already names it."""
    prefix = prefixes.get(analyzer) or analyzer[:1].upper() + analyzer[1:]  # not installed now: its name
    if label.casefold().startswith((prefix.casefold(), analyzer.casefold())):
        return label  # "Main content words", "Search total": already say whose they are
    return f"{prefix}: {label}"


def analysis_keys(
    reader: ArchiveReader, commit: int, report: ReportContext
) -> list[tuple[tuple[str, str], str]]:
    """(analyzer, column key) → header label, in analyzer order then declared column order."""
    present = [(i["analyzer"], i["column"]) for i in report.query("report-analysis-columns")["items"]]
    labels = report.column_labels()
    prefixes = report.analyzer_labels()
    declared = list(labels)
    present.sort(key=lambda k: (k[0], declared.index(k) if k in labels else len(declared), k[1]))
    names = [analyzer_header(k[0], labels.get(k, k[1]), prefixes) for k in present]
    # two analyzers with one short label: the analyzer's name tells them apart
    return [
        (k, name if names.count(name) == 1 else f"{k[0]}: {labels.get(k, k[1])}")
        for k, name in zip(present, names, strict=True)
    ]


def _page_list_extra(reader: ArchiveReader, commit: int, report: ReportContext) -> tuple[str, ...]:
    return tuple(label for _, label in analysis_keys(reader, commit, report))


def page_list_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    keys = [k for k, _ in analysis_keys(reader, commit, report)]
    titles = IndexTitles()
    for p in report.stream("report-pages", scope="targets"):
        url, full = p["url"], _SPACE.sub(" ", p["title"] or "").strip()
        parts = urlsplit(url)
        links = p["links"] or {}
        yield [
            _title_cell(titles.short(url, full), full),
            full,
            url,
            f"{parts.scheme}:",
            parts.hostname or "",
            *path_cells(url),
            p["status"],
            counted(p["redirect_from"], p["redirect_from_urls"]),
            p["lang"] or "",
            links.get("internal", 0),
            Cell(links.get("internal_bad", 0), _bad_note(links.get("bad"), False)),
            links.get("external", 0),
            Cell(links.get("external_bad", 0), _bad_note(links.get("bad"), True)),
            counted(p["referrers"], p["referrer_urls"]),
            p["self_links"],
            p["description"],
            p["keywords"],
            flag(p["noindex"]),
            flag(p["nofollow"]),
            flag(p["noarchive"]),
            p["canonical"],
            p["alternate"],
            p["twitter_card"],
            p["og_site_name"],
            p["og_url"],
            p["og_title"],
            p["og_description"],
            p["og_type"],
            p["og_image"],
            *_seo_values(p),
            *(p.get(key) for _label, key in JS_FIELDS),
            *_rendering(p),
            *(p.get(key) for _label, key in CONTENT_FIELDS),
            *_analysis_values(p, keys),
        ]


def _seo_values(p: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for _label, key in SEO_FIELDS:
        value = p.get(key)
        if key == "indexable":
            value = None if value is None else "Indexable" if value else "Non-Indexable"
        out.append(value)
    return out


def _rendering(p: dict[str, Any]) -> tuple[bool, str | None]:
    """(rendered, why): --render auto's stored decision, else whether a rendered HTML was stored and why not
    (no reason for a page rendered as every page is, with --render always: an empty cell). The mode is
    written without its dashes ("render auto: …"): a cell starting with "-" reads as a formula, and the CSV
    writer would quote it."""
    if p.get("render_rendered") is not None:
        return bool(p["render_rendered"]), f"render auto: {p.get('render_reason') or ''}"
    unrendered = p.get("unrendered")
    return not unrendered and bool(p.get("has_html")), unrendered.removeprefix("--") if unrendered else None


def _remarks(p: dict[str, Any]) -> str:
    remarks = []
    if p["is_skipped"]:
        remarks.append(p["skip_reason"] or "skipped")
    if p["error_kind"]:
        remarks.append(f"error: {p['error_kind']}")
    if p["is_external"]:
        remarks.append("external")
    return "; ".join(remarks)


def links_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for p in report.stream("report-pages", scope="rows"):
        headers = p["headers"] or {}
        yield [
            p["url"],
            p["title"] or "",
            p["status"],
            p["status_text"] or "",
            p["content_type"] or "",
            counted(p["redirect_from"], p["redirect_from_urls"]),
            counted(p["referrers"], p["referrer_urls"]),
            p["self_links"],
            Cell(len(headers), json.dumps(headers, indent=2, sort_keys=True, ensure_ascii=False))
            if headers
            else 0,
            _remarks(p),
        ]


SHEETS = (
    Sheet(
        "Page List",
        PAGE_LIST_COLUMNS,
        page_list_rows,
        order=10,
        uses_report=True,
        description="internal HTML pages in scope, with metadata, link counts and analyzer columns",
        extra_columns=_page_list_extra,
        freeze=(1, 1),
        links=("URL", "og:url", "Duplicate Group", "Closest Near Duplicate"),
        formats=PAGE_FORMATS,
        widths={
            "Title": 260,
            "Full Title": 260,
            "URL": 320,
            "description": 260,
            **dict.fromkeys(PATH_COLUMNS, 110),
        },
    ),
    Sheet(
        "Links",
        LINKS_COLUMNS,
        links_rows,
        order=20,
        uses_report=True,
        description="every URL of the crawl (redirect sources excluded) with status, referrers and headers",
        freeze=(1, 2),
        links=("URL",),
        formats=(STATUS_RULE,),
        widths={"URL": 360, "Page Title": 260},
    ),
)
