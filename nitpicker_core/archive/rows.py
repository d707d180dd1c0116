"""The read model: named page fields and typed rows for what plugins read, so none of them writes SQL.

Where a field is stored (a ``page_state`` column, a key of its ``extra`` JSON, a column an older format
lacks) is the archive's business: readers ask for fields by name and get the same values in every format.
Everything here streams: a call reads one query's rows as the caller iterates, never a whole commit first
unless the caller lists it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from nitpicker_core.errors import UsageError
from nitpicker_core.records import METADATA_FIELDS

from . import digest
from .models import PROMOTED_NAMES

if TYPE_CHECKING:
    from .reader import ArchiveReader

# Keys the core itself writes into ``ScrapeResult.extra`` and reads back: page_state columns from format 5
# (models.PROMOTED; a reader shows older archives the same columns). Plugins read them as page fields
# (``page_rows(..., fields=("error_kind",))``); ``extra`` is left to plugins' own data.
CORE_EXTRA_FIELDS: tuple[str, ...] = PROMOTED_NAMES
# Keys of the scrape plugin's data in ``extra`` that built-in checks and sheets read, by name.
SCRAPE_EXTRA_FIELDS: tuple[str, ...] = (
    "canonical_href",  # the canonical as written, where it differs from the resolved ``canonical``
    "alternate",  # JSON text: the page's alternate links
    "refresh",  # the meta refresh as written
)
_STATE_COLUMNS: tuple[str, ...] = (
    "status",
    "status_text",
    "content_type",
    "content_length",
    "headers",  # JSON text, undecoded (most readers never look at it)
    "scraped",
    "is_target",
    "is_external",
    "is_skipped",
    "skip_reason",
    "html_sha256",
    *METADATA_FIELDS,
)
#: Every field ``page_rows`` can return, besides ``url`` and ``redirect_dest`` (the destination's URL).
PAGE_FIELDS: frozenset[str] = frozenset(
    ("url", "redirect_dest", "source_sha256", *_STATE_COLUMNS, *CORE_EXTRA_FIELDS, *SCRAPE_EXTRA_FIELDS)
)
_PAGES = "commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id"


def field_sql(archive: ArchiveReader, name: str, state: str = "ps") -> str:
    """SQL for page field ``name`` of the ``page_state`` row ``state``, for this archive's format."""
    if name in SCRAPE_EXTRA_FIELDS:
        return f"json_extract({state}.extra, '$.{name}')"
    if name in CORE_EXTRA_FIELDS:
        return f"{state}.{name}"
    if name == "source_sha256":
        has_column = getattr(archive, "has_column", None)
        if has_column is not None and not has_column("page_state", "source_sha256"):
            return "NULL"  # format 1 did not keep the sent HTML
    if name in _STATE_COLUMNS or name == "source_sha256":
        return f"{state}.{name}"
    raise UsageError(f"no page field {name!r}; known: {', '.join(sorted(PAGE_FIELDS))}")


def stream(archive: ArchiveReader, sql: str, params: Any = ()) -> Iterator[sqlite3.Row]:
    """Rows of ``sql`` as the caller takes them (a reader's cursor), or all at once where there is none."""
    rows = getattr(archive, "stream", None)
    return rows(sql, params) if rows is not None else iter(archive.execute(sql, params))


def page_rows(
    archive: ArchiveReader,
    commit: int,
    fields: Sequence[str],
    *,
    present: Sequence[str] = (),
    ordered: bool = False,
) -> Iterator[dict[str, Any]]:
    """The commit's URL rows with just ``fields`` (names of PAGE_FIELDS), as dicts, in URL order when
    ``ordered`` (else as stored: cheaper).

    ``present`` keeps the rows where at least one of those fields is set (not NULL).
    """
    columns = []
    for name in fields:
        if name == "url":
            columns.append("u.url AS url")
        elif name == "redirect_dest":
            columns.append("d.url AS redirect_dest")
        else:
            columns.append(f'{field_sql(archive, name)} AS "{name}"')
    sql = f"SELECT {', '.join(columns)} FROM {_PAGES}"
    if "redirect_dest" in fields:
        sql += " LEFT JOIN url d ON d.id = ps.redirect_dest_url_id"
    sql += " WHERE cp.commit_id = ?"
    if present:
        sql += " AND (" + " OR ".join(f"{field_sql(archive, n)} IS NOT NULL" for n in present) + ")"
    if ordered:
        sql += " ORDER BY u.url"
    tuples = getattr(archive, "tuples", None)
    if tuples is None:
        for row in stream(archive, sql, [commit]):
            yield dict(row)
        return
    names = list(fields)  # plain tuples zipped with the names: no Row object per URL
    for values in tuples(sql, [commit]):
        yield dict(zip(names, values, strict=True))


class LinkRow(NamedTuple):
    """One (source page, target URL as linked) pair of a commit, however many anchors make it."""

    source: str
    target: str


def links_to(archive: ArchiveReader, commit: int, targets: Iterable[str]) -> list[LinkRow]:
    """Distinct links of the commit's internal, in-scope pages to any of ``targets``, sorted.

    One join from the targets through the anchor index: asking page by page would be a query per page.
    """
    found = stream(
        archive,
        "SELECT DISTINCT su.url AS source, tu.url AS target FROM url tu "
        "JOIN anchor a ON a.target_url_id = tu.id "
        "JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id "
        "JOIN page_state sps ON sps.id = sc.state_id JOIN url su ON su.id = sc.url_id "
        "WHERE tu.url IN (SELECT value FROM json_each(?)) AND sps.is_external = 0 "
        f"AND {field_sql(archive, 'outside_scope', 'sps')} IS NULL",
        [commit, json.dumps(list(targets))],
    )
    return sorted(LinkRow(r[0], r[1]) for r in found)


class JsonLdRow(NamedTuple):
    """A JSON-LD block of a page: its ordinal, kind, @types (JSON text) and parse error ('' when it parsed)."""

    url: str
    ordinal: int
    kind: str
    types: str
    error: str


class PageErrorRow(NamedTuple):
    """An error a page's scrape recorded (a step that failed and why)."""

    url: str
    step: str
    message: str


class PageResourceRow(NamedTuple):
    """A sub-resource a page loaded."""

    url: str
    resource: str


def _children(
    archive: ArchiveReader,
    commit: int,
    table: str,
    columns: str,
    joins: str = "",
    where: str = "",
    *params: Any,
) -> Iterator[sqlite3.Row]:
    return stream(
        archive,
        f"SELECT u.url AS url, {columns} FROM {_PAGES} JOIN {table} t ON t.state_id = cp.state_id {joins} "
        f"WHERE cp.commit_id = ? {where} ORDER BY u.url, t.id",
        [commit, *params],
    )


def jsonld_rows(archive: ArchiveReader, commit: int) -> Iterator[JsonLdRow]:
    """Every JSON-LD block of the commit's pages, in URL and document order."""
    for r in _children(archive, commit, "jsonld", "t.ordinal, t.kind, t.types, t.error"):
        yield JsonLdRow(*r)


def page_error_rows(archive: ArchiveReader, commit: int) -> Iterator[PageErrorRow]:
    """Every scrape error of the commit's pages, in URL and recorded order."""
    for r in _children(archive, commit, "page_error", "t.step, t.message"):
        yield PageErrorRow(*r)


def page_resource_rows(archive: ArchiveReader, commit: int, prefix: str = "") -> Iterator[PageResourceRow]:
    """Every (page, sub-resource it loaded) of the commit, in URL and load order; with ``prefix``, only the
    sub-resources whose URL starts with it (as written: case counts), chosen by SQLite."""
    joins = "JOIN url r ON r.id = t.resource_url_id"
    where = "AND substr(r.url, 1, ?) = ?" if prefix else ""
    params = (len(prefix), prefix) if prefix else ()
    for r in _children(archive, commit, "page_resource", "r.url", joins, where, *params):
        yield PageResourceRow(*r)


class AnalyzerSettingsRow(NamedTuple):
    """The settings an analyzer ran with in a commit, as stored (canonical JSON text)."""

    analyzer: str
    settings: str


def analyzer_settings(archive: ArchiveReader, commit: int) -> list[AnalyzerSettingsRow]:
    """Each analyzer that ran in the commit with its settings, by analyzer name."""
    rows = archive.execute(
        "SELECT analyzer, settings FROM analyzer_run WHERE commit_id = ? ORDER BY analyzer", [commit]
    )
    return [AnalyzerSettingsRow(r[0], r[1]) for r in rows]


class AnchorPosition(NamedTuple):
    """One anchor of a link: its text and where its start tag is in the HTML sent (None when unknown)."""

    text: str
    line: int | None
    col: int | None


def link_anchors(
    archive: ArchiveReader, commit: int, pairs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], list[AnchorPosition]]:
    """The anchors of each (source page, target URL) pair in the commit, in document order."""
    columns = digest.anchor_columns(archive.execute)
    sql = (
        f"SELECT su.url AS source, tu.url AS target, a.text, {digest.position(columns)} "
        "FROM (SELECT json_extract(value, '$[0]') AS source, json_extract(value, '$[1]') AS target "
        "FROM json_each(?)) p JOIN url su ON su.url = p.source "
        "JOIN commit_page sc ON sc.commit_id = ? AND sc.url_id = su.id "
        "JOIN url tu ON tu.url = p.target JOIN anchor a ON a.state_id = sc.state_id AND a.target_url_id = tu.id "
        "ORDER BY su.url, a.ordinal"
    )
    found: dict[tuple[str, str], list[AnchorPosition]] = {}
    for r in stream(archive, sql, [json.dumps([list(p) for p in pairs]), commit]):
        found.setdefault((r["source"], r["target"]), []).append(
            AnchorPosition(r["text"], r["line"], r["col"])
        )
    return found


class PageHtml(NamedTuple):
    """The stored HTML of a page in a commit, by content hash: rendered, and as sent (None when not kept)."""

    url: str
    rendered: str | None
    sent: str | None


def page_html_hashes(archive: ArchiveReader, commit: int, urls: Iterable[str]) -> dict[str, PageHtml]:
    """The hashes of the stored HTML of each of ``urls`` in the commit (read with ``html_by_sha256``), found by
    URL: a page of an issue list reads its pages' HTML, never the commit's."""
    sent = "ps.source_sha256" if archive.has_column("page_state", "source_sha256") else "NULL"
    # CROSS JOIN keeps the URLs asked for as the outer loop: left to itself the planner walks every page of the
    # commit and looks each up in the list (290 ms for 100 URLs of a 20,000-page commit; 0.4 ms so)
    sql = (
        f"SELECT u.url, ps.html_sha256, {sent} FROM json_each(?) j CROSS JOIN url u ON u.url = j.value "
        "CROSS JOIN commit_page cp ON cp.commit_id = ? AND cp.url_id = u.id "
        "CROSS JOIN page_state ps ON ps.id = cp.state_id"
    )
    return {
        r[0]: PageHtml(r[0], r[1], r[2])
        for r in stream(archive, sql, [json.dumps(sorted(set(urls))), commit])
    }


# The target's own answer, and where it redirects to, the answer at the end (the crawler stores the final
# destination); the error kind from the state or else the commit's crawl errors.
_TARGETS = (
    "SELECT tu.url AS target, ps.status, fs.status AS final_status, fu.url AS final_url, "
    "COALESCE(fs.error_kind, ps.error_kind, "
    "(SELECT MIN(ce.kind || '') FROM crawl_error ce WHERE ce.commit_id = ?1 AND ce.url_id IN (tu.id, fu.id))) "
    "AS error_kind FROM url tu LEFT JOIN commit_page cp ON cp.commit_id = ?1 AND cp.url_id = tu.id "
    "LEFT JOIN page_state ps ON ps.id = cp.state_id LEFT JOIN url fu ON fu.id = ps.redirect_dest_url_id "
    "LEFT JOIN commit_page fc ON fc.commit_id = ?1 AND fc.url_id = fu.id "
    "LEFT JOIN page_state fs ON fs.id = fc.state_id WHERE tu.url IN (SELECT value FROM json_each(?2))"
)


class TargetAnswer(NamedTuple):
    """How a link target answered in a commit: its status, where it redirects, the answer there, the error."""

    target: str
    status: int | None
    final_status: int | None
    final_url: str | None
    error_kind: str | None


def link_targets(archive: ArchiveReader, commit: int, targets: Iterable[str]) -> dict[str, TargetAnswer]:
    """Each of ``targets`` (URLs) that the archive knows, with how it answered in the commit."""
    rows = stream(archive, _TARGETS, [commit, json.dumps(sorted(set(targets)))])
    return {r["target"]: TargetAnswer(*r) for r in rows}
