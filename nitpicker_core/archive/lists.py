"""Read model lists: the paged list shape, and the reads of headings, screenshots, JSON-LD and filter values.

Every list is ``{"total", "limit", "offset", "items", "next_offset"}`` (``page_of``); a list's SQL runs in
two statements, its count and one page of rows, so no read holds a whole commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from nitpicker_core.errors import UsageError

from .rows import field_sql

if TYPE_CHECKING:
    from .reader import ArchiveReader

_PAGES = "commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id"


def page_of(items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    """The shape of every paginated list: the items plus enough to fetch the next page."""
    return {
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": items,
        "next_offset": offset + limit if offset + limit < total else None,
    }


def order_by(columns: dict[str, str], sort: str, order: str, tiebreak: str = "u.url") -> str:
    """An ORDER BY clause from validated parameters; ``columns`` maps names to SQL expressions."""
    if sort not in columns:
        raise UsageError(f"cannot sort by {sort!r}")
    direction = "DESC" if order == "desc" else "ASC"
    return f" ORDER BY {columns[sort]} {direction}, {tiebreak} ASC"


def paged(
    archive: ArchiveReader,
    sql: str,
    params: list[Any],
    order: str,
    limit: int,
    offset: int,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """Run ``sql`` for one page of rows (``order`` appended) plus its total (unless known), in the list shape."""
    if total is None:
        total = archive.execute(f"SELECT COUNT(*) FROM ({sql})", params)[0][0]
    rows = [dict(r) for r in archive.execute(f"{sql}{order} LIMIT ? OFFSET ?", [*params, limit, offset])]
    return page_of([shape(r) for r in rows] if shape else rows, total, limit, offset)


def external_flag(row: dict[str, Any]) -> dict[str, Any]:
    """``is_external`` as a boolean (SQLite hands back 0/1)."""
    if "is_external" in row:
        row["is_external"] = bool(row["is_external"])
    return row


def status_class_sql(column: str, status_class: str, failed: str) -> str:
    """The SQL condition of a validated status class (2xx … 5xx, failed) over the status ``column``;
    ``failed`` is the SQL of failed."""
    if status_class == "failed":
        return f"({failed})"
    low = int(status_class[0]) * 100
    return f"({column} BETWEEN {low} AND {low + 99})"


def require_page(archive: ArchiveReader, commit: int, url: str) -> int:
    """The state id of ``url`` in the commit; a usage error naming it when the commit has no such page."""
    rows = archive.execute(
        "SELECT cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id WHERE cp.commit_id = ? AND u.url = ?",
        [commit, url],
    )
    if not rows:
        raise UsageError(f"no page {url} in commit {commit}")
    return int(rows[0][0])


# --- headings ------------------------------------------------------------------------------------------

# Internal HTML pages the crawl rendered (light scrapes of external pages are not audited)
_RENDERED = (
    "cp.commit_id = ? AND ps.html_sha256 IS NOT NULL AND ps.is_external = 0 AND ps.is_skipped = 0 "
    "AND ps.scraped = 1"
)


def _headings_read(archive: ArchiveReader) -> str:
    # A state whose headings were looked for: format 2 kept its sent HTML, said why not, or kept headings.
    # (A format-1 state has none of these: its headings are unknown, not absent.)
    return (
        f"({field_sql(archive, 'source_sha256')} IS NOT NULL OR {field_sql(archive, 'source_omitted')} IS NOT NULL "
        "OR EXISTS (SELECT 1 FROM heading h WHERE h.state_id = ps.id))"
    )


def headings(
    archive: ArchiveReader, commit: int, url: str | None, level: int | None, limit: int, offset: int
) -> dict[str, Any]:
    """Headings of the commit's pages (url, ordinal, level, text), in URL and document order."""
    sql = (
        f"SELECT u.url, h.ordinal, h.level, h.text FROM {_PAGES} JOIN heading h ON h.state_id = cp.state_id "
        "WHERE cp.commit_id = ?"
    )
    params: list[Any] = [commit]
    if url is not None:
        require_page(archive, commit, url)
        sql, params = sql + " AND u.url = ?", [*params, url]
    if level is not None:
        sql, params = sql + " AND h.level = ?", [*params, level]
    return paged(archive, sql, params, " ORDER BY u.url, h.ordinal", limit, offset)


def h1_problems(
    archive: ArchiveReader, commit: int, condition: str, limit: int, offset: int
) -> dict[str, Any]:
    """Rendered internal pages whose h1 count meets ``condition`` ("= 0", "> 1", "<> 1"): url, title,
    h1_count, h1 (JSON text of the texts); ``not_recorded`` counts pages whose headings were never looked for."""
    h1s = "(SELECT COUNT(*) FROM heading h WHERE h.state_id = ps.id AND h.level = 1)"
    texts = (
        "(SELECT json_group_array(text) FROM (SELECT h.text FROM heading h WHERE h.state_id = ps.id "
        "AND h.level = 1 ORDER BY h.ordinal))"
    )
    if condition not in ("= 0", "> 1", "<> 1"):
        raise UsageError(f"no h1 condition {condition!r}")
    read = _headings_read(archive)
    sql = (
        f"SELECT u.url, ps.title, {h1s} AS h1_count, {texts} AS h1 FROM {_PAGES} "
        f"WHERE {_RENDERED} AND {read} AND {h1s} {condition}"
    )
    result = paged(archive, sql, [commit], " ORDER BY u.url", limit, offset)
    unknown = archive.execute(f"SELECT COUNT(*) FROM {_PAGES} WHERE {_RENDERED} AND NOT {read}", [commit])
    return {**result, "not_recorded": unknown[0][0]}


# --- screenshots and JSON-LD ----------------------------------------------------------------------------


class ScreenshotRow(NamedTuple):
    """A stored screenshot image: its content hash, media type, pixel size and byte size (``data`` when asked)."""

    sha256: str
    media_type: str
    width: int
    height: int
    size: int
    data: bytes | None = None


_INFO = "SELECT sha256, media_type, width, height, size FROM screenshot_blob WHERE sha256 = ?"


def _has_screenshots(archive: ArchiveReader) -> bool:
    # archives written before screenshots existed have no such table (readers never migrate)
    return bool(
        archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'page_screenshot'")
    )


def page_screenshot(archive: ArchiveReader, state_id: int) -> tuple[ScreenshotRow, ScreenshotRow] | None:
    """A page state's (screenshot, thumbnail); None when the crawl took none."""
    if not _has_screenshots(archive):
        return None
    rows = archive.execute("SELECT sha256, thumb_sha256 FROM page_screenshot WHERE state_id = ?", [state_id])
    if not rows:
        return None
    full, thumb = (archive.execute(_INFO, [sha]) for sha in (rows[0][0], rows[0][1]))
    if not full or not thumb:
        return None
    return ScreenshotRow(*full[0]), ScreenshotRow(*thumb[0])


def screenshot(archive: ArchiveReader, sha256: str) -> ScreenshotRow | None:
    """One screenshot or thumbnail with its bytes, by content hash; None when the archive has no such image."""
    if not _has_screenshots(archive):
        return None
    rows = archive.execute(_INFO.replace("size FROM", "size, data FROM"), [sha256])
    return ScreenshotRow(*rows[0]) if rows else None


def page_jsonld(archive: ArchiveReader, commit: int, url: str) -> list[dict[str, Any]]:
    """A page's JSON-LD blocks in document order: ordinal, kind, raw, parsed and types (decoded), error."""
    state = require_page(archive, commit, url)
    rows = archive.execute(
        "SELECT ordinal, kind, raw, parsed, types, error FROM jsonld WHERE state_id = ? ORDER BY ordinal",
        [state],
    )
    items = []
    for row in rows:
        item = dict(row)
        item["parsed"] = json.loads(item["parsed"]) if item["parsed"] is not None else None
        item["types"] = json.loads(item["types"] or "[]")
        items.append(item)
    return items


# --- filter values and search -----------------------------------------------------------------------------

# Per field: the SQL of (value, count) rows of one commit (bound as the first parameter).
_VALUES = {
    "analyzer": "SELECT r.analyzer, (SELECT COUNT(*) FROM violation v WHERE v.commit_id = r.commit_id "
    "AND v.analyzer = r.analyzer) FROM analyzer_run r WHERE r.commit_id = ?",
    "rule": "SELECT v.rule, COUNT(*) FROM violation v WHERE v.commit_id = ? GROUP BY v.rule",
    "page_content_type": "SELECT ps.content_type, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps "
    "ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.content_type IS NOT NULL "
    "AND ps.content_type != '' GROUP BY ps.content_type",
    "resource_content_type": "SELECT rs.content_type, COUNT(*) FROM commit_resource cr CROSS JOIN resource_state rs "
    "ON rs.id = cr.state_id WHERE cr.commit_id = ? AND rs.content_type IS NOT NULL AND "
    "rs.content_type != '' GROUP BY rs.content_type",
    "status": "SELECT ps.status, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.status IS NOT NULL GROUP BY ps.status",
}
#: Fields ``value_counts`` lists: analyzer, rule, page_content_type, resource_content_type, status.
VALUE_FIELDS: tuple[str, ...] = tuple(_VALUES)


@dataclass(frozen=True, slots=True)
class ValueCount:
    """A value a field takes in the commit and how many rows have it."""

    value: Any
    count: int


def value_counts(archive: ArchiveReader, commit: int, field: str, limit: int) -> list[ValueCount]:
    """Up to ``limit`` + 1 values of ``field`` in the commit, by value (one more says the list goes on)."""
    if field not in _VALUES:
        raise UsageError(f"no value field {field!r}")
    rows = archive.execute(f"SELECT * FROM ({_VALUES[field]}) ORDER BY 1 LIMIT ?", [commit, limit + 1])
    return [ValueCount(r[0], r[1]) for r in rows]


def commit_state(archive: ArchiveReader, commit: int) -> tuple[Any, ...]:
    """What changes when a commit's pages change: status and times, and for a running one its page count
    and newest state (a range scan of its pages), so a cache keyed by it goes stale exactly then."""
    state = tuple(
        archive.execute("SELECT status, started_at, finished_at FROM commits WHERE id = ?", [commit])[0]
    )
    if state[0] == "running":
        state += tuple(
            archive.execute("SELECT COUNT(*), MAX(state_id) FROM commit_page WHERE commit_id = ?", [commit])[
                0
            ]
        )
    return state


# --- analyzer errors --------------------------------------------------------------------------------------

ANALYZER_ERROR_SORTS = {"url": "u.url", "analyzer": "e.analyzer"}


def analyzer_errors(
    archive: ArchiveReader,
    commit: int,
    analyzer: str | None,
    url: str | None,
    sort: str,
    order: str,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """Analyzer errors of the commit: analyzer, url (None for the whole analyzer), error, traceback."""
    have = {row[1] for row in archive.execute("PRAGMA table_info(analyzer_error)")}
    if not have:  # an archive from before analyzers kept their errors
        return page_of([], 0, limit, offset)
    # archives written before tracebacks were kept have no such column: their rows say null
    traceback = "e.traceback" if "traceback" in have else "NULL"
    where = "e.commit_id = ?"
    params: list[Any] = [commit]
    if analyzer:
        where, params = where + " AND e.analyzer = ?", [*params, analyzer]
    if url:
        where, params = where + " AND instr(u.url, ?) > 0", [*params, url]
    sql = (
        f"SELECT e.analyzer, u.url, e.message AS error, {traceback} AS traceback "
        f"FROM analyzer_error e LEFT JOIN url u ON u.id = e.url_id WHERE {where}"
    )
    clause = order_by(ANALYZER_ERROR_SORTS, sort, order, tiebreak="e.analyzer, u.url, e.rowid")
    return paged(archive, sql, params, clause, limit, offset)
