"""Read model of pages: the filtered page list, one page's inbound links and the rows of its detail."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nitpicker_core.content_types import sql_filter as content_type_sql_filter
from nitpicker_core.errors import UsageError
from nitpicker_core.robots_directives import parse_directives
from nitpicker_core.serp import DESCRIPTION_PX, TITLE_PX

from . import aggregates, digest, page_facts, seo, times
from .link_lists import flags
from .lists import order_by, paged, status_class_sql
from .models import FORMAT7_DECISION

if TYPE_CHECKING:
    from .reader import ArchiveReader

PAGES_OF_COMMIT = digest.PAGES_OF_COMMIT
CATEGORY = digest.CATEGORY
_PAGE_SELECT = (
    "SELECT u.url, ps.status, ps.content_type, " + CATEGORY + " AS category, ps.title, ps.description, "
    "ps.lang, ps.is_external, ps.is_skipped, ps.skip_reason, d.url AS redirect_dest, "
    + digest.ERROR_KIND
    + " AS error_kind, "
    + digest.OUTCOME
    + " AS outcome, ps.content_length, "
    'cp."order" AS crawl_order, {seo} '
)
# The SEO columns of a page row (docs/seo.md): what the state and this crawl's request stored, the first
# headings, the title and description measured as a search result sets them, and the commit's facts
# (archive/seo.py: depth, links, indexability) from the temporary table the list joins.
_HEADING = (
    "(SELECT h.text FROM heading h WHERE h.state_id = ps.id AND h.level = {level} ORDER BY h.ordinal LIMIT 1)"
)
_JS = "json_extract(ps.html_facts, '$.js.{key}')"
_JS_SQL: dict[str, str] = {
    "js_links": _JS.format(key="link_count"),
    "raw_text_share": _JS.format(key="text_share"),
    "js_changed": "CASE WHEN json_type(ps.html_facts, '$.js') = 'object' THEN coalesce((SELECT "
    "group_concat(key, ', ') FROM json_each(ps.html_facts, '$.js.changed')), '') END",
}
# --render auto: whether the page was rendered and why (nitpicker_core.crawler.auto); NULL in other modes
_DECIDED = (
    "CASE WHEN {d} IS NOT NULL THEN (CASE WHEN json_extract({d}, '$.rendered') THEN 'rendered: ' "
    "ELSE 'read as sent: ' END) || json_extract({d}, '$.reason') END"
)
_SEO_SQL: dict[str, str] = {
    **{name: f"sf.{name}" for name in seo.FACT_COLUMNS},
    "response_ms": "cp.response_ms",
    "load_ms": "cp.load_ms",
    "http_version": "cp.http_version",
    "word_count": "ps.word_count",
    "h1": _HEADING.format(level=1),
    "h1_count": "(SELECT COUNT(*) FROM heading h WHERE h.state_id = ps.id AND h.level = 1)",
    "h2": _HEADING.format(level=2),
    "title_length": "length(ps.title)",
    "title_px": f"serp_px(ps.title, {TITLE_PX})",
    "description_length": "length(ps.description)",
    "description_px": f"serp_px(ps.description, {DESCRIPTION_PX})",
    "meta_robots": "ps.robots",
    "x_robots_tag": "json_extract(ps.headers, '$.\"x-robots-tag\"')",
    "last_modified": "json_extract(ps.headers, '$.\"last-modified\"')",
    # what JavaScript changed (nitpicker_core.html_facts.js_dependence, stored by the crawl): NULL for a page
    # with one version (--render never, not HTML) or stored before the comparison was
    **_JS_SQL,
    "render_decision": _DECIDED.format(d="cp.render_decision"),
}
#: The SEO columns every page row has, in order (``robots_directives`` is derived from meta_robots and x_robots_tag).
SEO_COLUMNS: tuple[str, ...] = (*_SEO_SQL, "robots_directives")
#: The content columns every page row has after them: what the duplicate checks found when the commit
#: completed (archive/page_facts.py; NULL for a page they did not compare and for a commit without them).
CONTENT_COLUMNS: tuple[str, ...] = page_facts.COLUMNS
#: Every column of a `pages` query row, in order (what _PAGE_SELECT names, then the SEO and content columns).
LIST_COLUMNS: tuple[str, ...] = (
    "url",
    "status",
    "content_type",
    "category",
    "title",
    "description",
    "lang",
    "is_external",
    "is_skipped",
    "skip_reason",
    "redirect_dest",
    "error_kind",
    "outcome",
    "content_length",
    "crawl_order",
    *SEO_COLUMNS,
    *CONTENT_COLUMNS,
)
# Where an older archive lacks the column (format 6 added these), its value is NULL
_ADDED_IN_6 = {
    "response_ms": "commit_page",
    "load_ms": "commit_page",
    "http_version": "commit_page",
    "word_count": "page_state",
}
#: The columns a page list can bound with ``min_NAME`` / ``max_NAME`` (numbers).
RANGE_COLUMNS: tuple[str, ...] = (
    "depth",
    "response_ms",
    "load_ms",
    "inlinks",
    "unique_inlinks",
    "outlinks",
    "unique_outlinks",
    "external_outlinks",
    "word_count",
    "h1_count",
    "title_length",
    "title_px",
    "description_length",
    "description_px",
    "js_links",
    "raw_text_share",
    *page_facts.NUMBERS,
)
_PAGE_JOINS = "LEFT JOIN url d ON d.id = ps.redirect_dest_url_id {seo} WHERE cp.commit_id = ?"
_PAGE_FROM = "FROM " + PAGES_OF_COMMIT + " " + _PAGE_JOINS
# The same rows driven by the URL index, so a URL-sorted page streams and LIMIT stops early.
_PAGE_FROM_BY_URL = (
    "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id "
    "CROSS JOIN page_state ps ON ps.id = cp.state_id " + _PAGE_JOINS
)


def render_decision_sql(archive: ArchiveReader) -> str:
    """SQL of a page's ``--render auto`` decision in the commit (JSON text, NULL in the other modes), over
    ``cp`` (commit_page) and ``ps`` (page_state): the commit's own (format 8); a format-7 file not upgraded
    kept it in the page's state (html_facts' ``render``), read as it always was; older ones have none."""
    if archive.has_column("commit_page", "render_decision"):
        return "cp.render_decision"
    if archive.has_column("page_state", "html_facts"):
        return FORMAT7_DECISION.format(ps="ps")
    return "NULL"


def page_render_decision(archive: ArchiveReader, commit: int, url_id: int) -> dict[str, Any] | None:
    """The ``--render auto`` decision the commit took for the page (mode, template, rendered, reason), None
    when it took none (another mode, a page an update took over unchanged)."""
    rows = archive.execute(
        f"SELECT {render_decision_sql(archive)} FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
        "WHERE cp.commit_id = ? AND cp.url_id = ?",
        (commit, url_id),
    )
    found = json.loads(rows[0][0]) if rows and rows[0][0] else None
    return found if isinstance(found, dict) else None


def seo_join(archive: ArchiveReader, commit: int, url_id: str) -> str:
    """A LEFT JOIN of the commit's SEO facts as ``sf`` on the URL id SQL ``url_id``: the stored aggregates'
    rows, or (a commit without them) the reader's temporary table, computed now if need be; then the
    commit's stored content facts (``page_facts.join``, none without them)."""
    stored = aggregates.seo_set(archive, commit)
    if stored is not None:
        found = f"LEFT JOIN agg_seo sf ON sf.set_id = {stored} AND sf.url_id = {url_id}"
    else:
        found = f"LEFT JOIN {seo.ensure(archive, commit)} sf ON sf.commit_id = {int(commit)} AND sf.url_id = {url_id}"
    return f"{found} {page_facts.join(archive, commit, url_id)}"


def _seo_sql(archive: ArchiveReader, name: str, commit: int | None = None) -> str:
    if name in page_facts.COLUMNS:
        return page_facts.value_sql(
            name, commit is not None and page_facts.fact_set(archive, commit) is not None
        )
    if name == "render_decision":
        return _DECIDED.format(d=render_decision_sql(archive))
    if name in _JS_SQL and not archive.has_column("page_state", "html_facts"):
        return "NULL"  # format 7 added the stored facts
    table = _ADDED_IN_6.get(name)
    if table is not None and not archive.has_column(table, name):
        return "NULL"
    if name in ("h1", "h2", "h1_count") and not archive.has_headings:
        return "NULL"
    return _SEO_SQL[name]


def seo_select(archive: ArchiveReader, commit: int) -> str:
    """The SEO and content columns for a select list over ``ps`` (page_state), ``cp`` (commit_page) and
    what ``seo_join`` joins."""
    seo_columns = ", ".join(f"{_seo_sql(archive, name)} AS {name}" for name in _SEO_SQL)
    return f"{seo_columns}, {page_facts.select(page_facts.fact_set(archive, commit) is not None)}"


def _page_sql(archive: ArchiveReader, commit: int, by_url: bool) -> str:
    joins = (_PAGE_FROM_BY_URL if by_url else _PAGE_FROM).format(seo=seo_join(archive, commit, "cp.url_id"))
    return _PAGE_SELECT.format(seo=seo_select(archive, commit)) + joins


def seo_shape(row: dict[str, Any]) -> dict[str, Any]:
    """A row's SEO columns as the read model gives them: booleans, and the directives parsed."""
    if row.get("indexable") is not None:
        row["indexable"] = bool(row["indexable"])
    row["robots_directives"] = parse_directives(row.get("meta_robots"), row.get("x_robots_tag"))
    return row


def _page_row(row: dict[str, Any]) -> dict[str, Any]:
    return seo_shape(flags(row))


PAGE_SORTS = {
    "url": "u.url",
    "status": "ps.status",
    "title": "ps.title",
    "content_type": "ps.content_type",
    "size": "ps.content_length",
    "crawl_order": 'cp."order"',
    # by the select list's names: an older archive's missing column is NULL there
    **{name: name for name in (*RANGE_COLUMNS, "indexable", "indexability_reason", "http_version", "h1")},
    **{name: name for name in page_facts.URL_COLUMNS},
}


def page_list(
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
    ranges: dict[str, tuple[float | None, float | None]] | None = None,
) -> dict[str, Any]:
    """The commit's pages filtered and sorted as the `pages` query documents, in the list shape.

    ``ranges`` bounds RANGE_COLUMNS: name → (min, max), either None; a row without the value is left out.
    """
    bounds = {name: pair for name, pair in (ranges or {}).items() if pair != (None, None)}
    unknown = sorted(set(bounds) - set(RANGE_COLUMNS))
    if unknown:
        raise UsageError(f"no range column {unknown[0]!r}; known: {', '.join(RANGE_COLUMNS)}")
    unfiltered = (
        category is None
        and not strict
        and not every_type
        and not bounds
        and all(
            v is None
            for v in (status, missing, url, external, tag, jsonld_type, outcome, status_class, indexable)
        )
    )
    sql, params = _page_sql(archive, commit, sort == "url"), list[Any]([commit])
    if category is not None:
        where, args = content_type_sql_filter("ps.content_type", category)
        sql, params = f"{sql} AND {where}", [*params, *args]
    elif strict:
        sql += f" AND {digest.STRICT}"
    elif not every_type and status is None and not status_class and not outcome:
        # a status or outcome filter covers every URL of that status, HTML or not, as the summary counts them
        sql += f" AND {digest.LOOSE}"
    if status is not None:
        sql, params = sql + " AND ps.status = ?", [*params, status]
    if status_class:
        sql += " AND " + status_class_sql("ps.status", status_class, f"{digest.OUTCOME} = 'failed'")
    if missing is not None:
        sql += f" AND (ps.{missing} IS NULL OR ps.{missing} = '')"
    if url:
        glob = any(ch in url for ch in "*?[")
        sql, params = sql + (" AND u.url GLOB ?" if glob else " AND instr(u.url, ?) > 0"), [*params, url]
    if external is not None:
        sql, params = sql + " AND ps.is_external = ?", [*params, int(external)]
    if outcome:
        sql, params = sql + f" AND {digest.OUTCOME} = ?", [*params, outcome]
    if tag:
        sql += " AND EXISTS (SELECT 1 FROM tag t WHERE t.state_id = ps.id AND t.provider = ? COLLATE NOCASE)"
        params.append(tag)
    if jsonld_type:
        sql += (
            " AND EXISTS (SELECT 1 FROM jsonld j, json_each(CASE WHEN json_valid(j.types) THEN j.types "
            "ELSE '[]' END) e WHERE j.state_id = ps.id AND e.value = ? COLLATE NOCASE)"
        )
        params.append(jsonld_type)
    if indexable is not None:
        sql, params = sql + " AND sf.indexable = ?", [*params, int(indexable)]
    for name, (low, high) in bounds.items():
        column = _seo_sql(archive, name, commit)
        if low is not None:
            sql, params = sql + f" AND {column} >= ?", [*params, low]
        if high is not None:
            sql, params = sql + f" AND {column} <= ?", [*params, high]
    total = aggregates.value(archive, commit, "list_totals")["pages"] if unfiltered else None
    return paged(archive, sql, params, order_by(PAGE_SORTS, sort, order), limit, offset, _page_row, total)


def page_histogram(
    archive: ArchiveReader,
    commit: int,
    column: str,
    edges: tuple[float, ...] | None = None,
    strict: bool = True,
) -> dict[int, int]:
    """How many of the commit's pages (the rows ``page_list`` gives with ``strict``, else its default rows) have
    each value of the numeric ``column`` (one of RANGE_COLUMNS), counted by SQLite without building the rows.

    Without ``edges`` the keys are the values themselves (whole numbers); with ascending ``edges`` a key is
    the index of the first edge the value is below, ``len(edges)`` for the rest. Rows without a value are
    left out, as ``page_list``'s ranges leave them out.
    """
    if column not in RANGE_COLUMNS:
        raise UsageError(f"no range column {column!r}; known: {', '.join(RANGE_COLUMNS)}")
    value = _seo_sql(archive, column, commit)
    if edges:
        whens = " ".join(f"WHEN v < {float(edge)!r} THEN {i}" for i, edge in enumerate(edges))
        key = f"CASE {whens} ELSE {len(edges)} END"
    else:
        key = "CAST(v AS INTEGER)"
    rows = digest.STRICT if strict else digest.LOOSE
    joins = _PAGE_FROM.format(
        seo=seo_join(archive, commit, "cp.url_id")
        if column in seo.FACT_COLUMNS or column in page_facts.COLUMNS
        else ""
    )
    sql = (
        f"SELECT {key} AS k, COUNT(*) FROM (SELECT {value} AS v {joins} AND {rows}) "
        "WHERE v IS NOT NULL GROUP BY k ORDER BY k"
    )
    return {int(k): int(n) for k, n in archive.tuples(sql, (commit,))}


def page_ids(archive: ArchiveReader, commit: int, url: str) -> dict[str, Any]:
    """``url_id`` and ``state_id`` of ``url`` in the commit; a usage error when the commit has no such URL."""
    rows = archive.execute(
        "SELECT cp.url_id, cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        "WHERE cp.commit_id = ? AND u.url = ?",
        [commit, url],
    )
    if not rows:
        raise UsageError(f"no URL {url!r} in commit {commit}")
    return dict(rows[0])


def inbound_links(archive: ArchiveReader, commit: int, url_id: int, limit: int) -> dict[str, Any]:
    """The pages linking to the URL (directly or through a redirect), first ``limit`` of them with their
    anchors, texts and hrefs, the ``total``, and ``self_links`` (the page's anchors to itself)."""
    # Anchors of other pages aimed at the URL itself or at any URL of this commit that redirects to it; the
    # page's own anchors to itself (in-page #fragments) are not referrers: they are counted as self_links.
    targets = (
        "WITH targets(url_id) AS (SELECT ? UNION SELECT r.url_id FROM page_state r CROSS JOIN commit_page rc "
        "ON rc.commit_id = ? AND rc.url_id = r.url_id AND rc.state_id = r.id "
        "WHERE r.redirect_dest_url_id = ?) "
    )
    anchors = (
        "FROM targets t CROSS JOIN anchor a ON a.target_url_id = t.url_id "
        "CROSS JOIN commit_page sc ON sc.state_id = a.state_id AND sc.commit_id = ? "
    )
    sql = (
        targets + "SELECT su.url AS source, COUNT(*) AS anchors, json_group_array(DISTINCT a.text) AS texts, "
        f"json_group_array(DISTINCT tu.url) AS hrefs {anchors}JOIN url su ON su.id = sc.url_id "
        "JOIN url tu ON tu.id = a.target_url_id WHERE sc.url_id != ? GROUP BY su.url"
    )
    params = [url_id, commit, url_id, commit, url_id]
    total = archive.execute(f"SELECT COUNT(*) FROM ({sql})", params)[0][0]
    rows = archive.execute(f"{sql} ORDER BY su.url LIMIT ?", [*params, limit])
    items = [
        {
            "source": r["source"],
            "anchors": r["anchors"],
            "texts": json.loads(r["texts"]),
            "hrefs": json.loads(r["hrefs"]),
        }
        for r in rows
    ]
    self_links = archive.execute(f"{targets}SELECT COUNT(*) {anchors}WHERE sc.url_id = ?", params)[0][0]
    return {"total": total, "items": items, "self_links": self_links}


# The sub-resources a page state loaded, with what this commit stored about each (no row: status None).
_PAGE_RESOURCES = (
    "SELECT u.url, rs.status, rs.content_type, rs.content_length, rs.compression, rs.cdn, rs.is_external "
    "FROM page_resource p JOIN url u ON u.id = p.resource_url_id "
    "LEFT JOIN commit_resource cr ON cr.commit_id = ? AND cr.url_id = p.resource_url_id "
    "LEFT JOIN resource_state rs ON rs.id = cr.state_id WHERE p.state_id = ? ORDER BY u.url, p.id LIMIT ?"
)


def page_detail_rows(
    archive: ArchiveReader, commit: int, url_id: int, state_id: int, resource_limit: int
) -> dict[str, Any]:
    """What page-detail shows of one page besides its row: category, outbound anchors with their targets'
    answers, redirect sources, crawl errors, image and resource counts, resources (first ``resource_limit``)
    and tags."""
    category = archive.execute(f"SELECT {CATEGORY} FROM page_state ps WHERE ps.id = ?", [state_id])[0][0]
    columns = digest.anchor_columns(archive.execute)
    outbound = archive.execute(
        f"SELECT a.ordinal, tu.url AS href, {digest.written_href(columns)} AS written, {digest.position(columns)}, "
        "a.fragment, a.text, tps.status, d.url AS redirect_dest "
        "FROM anchor a JOIN url tu ON tu.id = a.target_url_id "
        "LEFT JOIN commit_page tc ON tc.commit_id = ? AND tc.url_id = a.target_url_id "
        "LEFT JOIN page_state tps ON tps.id = tc.state_id LEFT JOIN url d ON d.id = tps.redirect_dest_url_id "
        "WHERE a.state_id = ? ORDER BY a.ordinal",
        [commit, state_id],
    )
    sources = archive.execute(
        "SELECT u.url, ps.status FROM page_state ps CROSS JOIN commit_page cp ON cp.commit_id = ? "
        "AND cp.url_id = ps.url_id AND cp.state_id = ps.id JOIN url u ON u.id = ps.url_id "
        "WHERE ps.redirect_dest_url_id = ? ORDER BY u.url",
        [commit, url_id],
    )
    crawl_errors = archive.execute(
        f"SELECT kind, message, phase, {times.iso_sql(archive, 'at')} AS at "
        "FROM crawl_error WHERE commit_id = ? AND url_id = ? ORDER BY id",
        [commit, url_id],
    )
    counts = archive.execute(
        "SELECT (SELECT COUNT(*) FROM image WHERE state_id = :s), "
        "(SELECT COUNT(*) FROM page_resource WHERE state_id = :s)",
        {"s": state_id},
    )[0]
    resources = archive.execute(_PAGE_RESOURCES, [commit, state_id, resource_limit])
    tags = archive.execute(
        "SELECT provider, category, external_id, version, confidence FROM tag "
        "WHERE state_id = ? ORDER BY ordinal",
        [state_id],
    )
    return {
        "category": category,
        "outbound": [dict(r) for r in outbound],
        "redirect_sources": [dict(r) for r in sources],
        "crawl_errors": [dict(r) for r in crawl_errors],
        "images": counts[0],
        "resources": {"total": counts[1], "items": [flags(dict(r), ("is_external",)) for r in resources]},
        "tags": [dict(r) for r in tags],
    }


def page_indexability(archive: ArchiveReader, commit: int, url_id: int) -> dict[str, Any]:
    """Whether search engines may index the URL and why not: the pages list's ``indexable`` and
    ``indexability_reason`` (archive/seo.py, by ``non_indexable_reason``, the rule every check uses).

    ``{"indexable": bool | None, "reason": str | None}``; ``indexable`` is None (and so is the reason) for
    a URL nitpicker did not judge: never requested, skipped by a crawl rule other than robots.txt, external.
    """
    found = seo.indexability_of(archive, commit, url_id)
    indexable = found["indexable"]
    return {
        "indexable": None if indexable is None else bool(indexable),
        "reason": found["indexability_reason"],
    }
