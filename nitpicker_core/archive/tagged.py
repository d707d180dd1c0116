"""Read model of pages by technology tag and by JSON-LD @type, in the list shape (lists.page_of)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import aggregates
from .lists import order_by, paged

if TYPE_CHECKING:
    from .reader import ArchiveReader

_PAGES_OF_COMMIT = "commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id"
_PAGES_BY_URL = (
    "url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id"
)
#: What pages-by-tag and pages-by-type sort by.
TAGGED_SORTS = {"url": "u.url", "title": "ps.title", "status": "ps.status"}


def _external_flag(row: dict[str, Any]) -> dict[str, Any]:
    row["is_external"] = bool(row["is_external"])
    return row


def pages_by_tag(
    archive: ArchiveReader,
    commit: int,
    provider: str,
    external_id: str | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Pages carrying a tag of ``provider`` (ASCII case-insensitive), optionally one ``external_id``: url,
    status, title, is_external and the tag (provider, category, external_id, version, confidence)."""
    pages = _PAGES_OF_COMMIT if sort != "url" else _PAGES_BY_URL
    sql = (
        "SELECT u.url, ps.status, ps.title, ps.is_external, t.provider, t.category, t.external_id, "
        f"t.version, t.confidence FROM {pages} JOIN tag t ON t.state_id = cp.state_id "
        "WHERE cp.commit_id = ? AND t.provider = ? COLLATE NOCASE"
    )
    params: list[Any] = [commit, provider]
    if external_id:
        sql, params = sql + " AND t.external_id = ?", [*params, external_id]
    wanted = _nocase(provider)
    total = sum(
        rows
        for name, tag_id, rows in aggregates.value(archive, commit, "tag_rows")
        if _nocase(name) == wanted and (not external_id or tag_id == external_id)
    )
    clause = order_by(TAGGED_SORTS, sort, order, tiebreak="u.url, t.ordinal")
    return paged(archive, sql, params, clause, limit, offset, _external_flag, total)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _nocase(text: str) -> str:
    """SQLite's NOCASE collation: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


def pages_by_jsonld_type(
    archive: ArchiveReader,
    commit: int,
    type: str,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Pages with a JSON-LD script whose @type includes ``type``: url, status, title, is_external, scripts."""
    pages = _PAGES_OF_COMMIT if sort != "url" else _PAGES_BY_URL
    # A page appears once, with the number of its scripts whose @type includes the type.
    scripts = (
        "(SELECT COUNT(*) FROM jsonld j WHERE j.state_id = cp.state_id AND j.types != '[]' "
        "AND EXISTS (SELECT 1 FROM json_each(j.types) je WHERE je.value = ?1))"
    )
    sql = (
        f"SELECT u.url, ps.status, ps.title, ps.is_external, {scripts} AS scripts FROM {pages} "
        f"WHERE cp.commit_id = ?2 AND {scripts} > 0"
    )
    counts = aggregates.value(archive, commit, "jsonld_counts")["types"]
    total = next((t["pages"] for t in counts if t["type"] == type), 0)
    clause = order_by(TAGGED_SORTS, sort, order)
    return paged(archive, sql, [type, commit], clause, limit, offset, _external_flag, total)
