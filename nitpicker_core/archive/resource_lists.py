"""Read model of sub-resources and images: the resource list, who referenced a resource, unused resources, images."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from nitpicker_core.errors import UsageError

from . import aggregates, referrers
from .lists import external_flag, order_by, paged, status_class_sql

if TYPE_CHECKING:
    from .reader import ArchiveReader


# One resource of a commit with the number of distinct pages that referenced it in that commit.
def _resource_rows(archive: ArchiveReader) -> str:
    return (
        "SELECT u.url, rs.status, rs.content_type, rs.content_length, rs.compression, rs.cdn, "
        f"rs.is_external, {referrers.count_sql(archive)} AS referrers "
        "FROM commit_resource cr JOIN url u ON u.id = cr.url_id JOIN resource_state rs ON rs.id = cr.state_id "
        "WHERE cr.commit_id = ?"
    )


RESOURCE_SORTS = {
    "url": "u.url",
    "status": "rs.status",
    "content_type": "rs.content_type",
    "content_length": "rs.content_length",
    "compression": "rs.compression",
    "cdn": "rs.cdn",
    "referrers": "referrers",
}


# No page of the commit loaded it and no anchor of a page of the commit points at the URL.
def _unused(archive: ArchiveReader) -> str:
    return (
        f" AND {referrers.count_sql(archive)} = 0 "
        "AND NOT EXISTS (SELECT 1 FROM anchor a JOIN commit_page cp ON cp.state_id = a.state_id "
        "AND cp.commit_id = cr.commit_id WHERE a.target_url_id = cr.url_id)"
    )


def resource_list(
    archive: ArchiveReader,
    commit: int,
    url: str | None = None,
    status: int | None = None,
    content_type: str | None = None,
    external: bool | None = None,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
    status_class: str | None = None,
) -> dict[str, Any]:
    sql, params = _resource_rows(archive), list[Any]([commit])
    if status_class:
        sql += " AND " + status_class_sql("rs.status", status_class, "rs.status IS NULL OR rs.status = 0")
    if url:
        sql, params = sql + " AND instr(u.url, ?) > 0", [*params, url]
    if status is not None:
        sql, params = sql + " AND rs.status = ?", [*params, status]
    if content_type:
        sql, params = sql + " AND rs.content_type LIKE ? ESCAPE '\\'", [*params, _prefix(content_type)]
    if external is not None:
        sql, params = sql + " AND rs.is_external = ?", [*params, int(external)]
    return paged(archive, sql, params, order_by(RESOURCE_SORTS, sort, order), limit, offset, external_flag)


def _prefix(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


_STREAM_FROM = 2000  # referrers


def resource_referrer_list(
    archive: ArchiveReader, commit: int, url: str, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    found = archive.execute(_resource_rows(archive) + " AND u.url = ?", [commit, url])
    if not found:
        raise UsageError(f"no resource {url} in commit {commit}")
    resource_id = archive.execute("SELECT id FROM url WHERE url = ?", [url])[0][0]
    total = found[0]["referrers"]
    # A widely used resource streams its referrers through the URL index (LIMIT stops early); a rarely
    # used one sorts its few referrers rather than walking every URL.
    pages = (
        "url pu CROSS JOIN commit_resource_referrer r ON r.page_url_id = pu.id"
        if total > _STREAM_FROM
        else "commit_resource_referrer r CROSS JOIN url pu ON pu.id = r.page_url_id"
    )
    sql = (
        f"SELECT pu.url, ps.status, ps.title, ps.content_type FROM {pages} "
        "LEFT JOIN commit_page cp ON cp.commit_id = r.commit_id AND cp.url_id = r.page_url_id "
        "LEFT JOIN page_state ps ON ps.id = cp.state_id WHERE r.commit_id = ? AND r.resource_url_id = ?"
    )
    result = paged(
        archive, sql, [commit, resource_id], " ORDER BY pu.url", limit, offset, external_flag, total
    )
    return {"resource": external_flag(dict(found[0])), **result}


def unused_resource_list(
    archive: ArchiveReader,
    commit: int,
    sort: str = "url",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    return paged(
        archive,
        _resource_rows(archive) + _unused(archive),
        [commit],
        order_by(RESOURCE_SORTS, sort, order),
        limit,
        offset,
        external_flag,
    )


# Images of internal pages; `oversized` compares the natural with the displayed size, or finds the image
# among the page's `large_images` (what --image-file-size-threshold flagged at crawl time).
_OVERSIZED = (
    "((i.width > 0 AND i.natural_width > 2 * i.width) OR (i.height > 0 AND i.natural_height > 2 * i.height) "
    "OR (ps.large_images IS NOT NULL AND EXISTS (SELECT 1 "
    "FROM json_each(ps.large_images) l "
    "WHERE json_extract(l.value, '$.src') IN (i.current_src, i.src))))"
)
# No width or height attribute in the markup (or, without markup, no rendered size).
_MISSING_SIZE = (
    "(CASE WHEN i.markup != '' "
    "THEN instr(lower(i.markup), ' width=') = 0 OR instr(lower(i.markup), ' height=') = 0 "
    "ELSE i.width IS NULL OR i.height IS NULL END)"
)
_IMAGE_SELECT = (
    "SELECT u.url AS page, i.src, i.current_src, i.alt, i.width, i.height, i.natural_width, "
    f"i.natural_height, i.is_lazy, i.viewport_width, {_MISSING_SIZE} AS missing_size, "
    f"{_OVERSIZED} AS oversized "
)
_IMAGE_ROWS = (
    _IMAGE_SELECT
    + "FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
    "JOIN image i ON i.state_id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 0"
)
# The same rows driven by the URL index, so page-sorted lists stream and LIMIT stops early.
_IMAGE_ROWS_BY_URL = (
    _IMAGE_SELECT + "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps "
    "ON ps.id = cp.state_id CROSS JOIN image i ON i.state_id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.is_external = 0"
)
IMAGE_SORTS = {
    "page": "u.url",
    "src": "i.src",
    "alt": "i.alt",
    "width": "i.width",
    "height": "i.height",
    "natural_width": "i.natural_width",
    "natural_height": "i.natural_height",
    "viewport_width": "i.viewport_width",
}


class ImageRow(NamedTuple):
    """An image of an internal page (one per device preset it was seen at), what the image checks read."""

    page: str
    src: str
    current_src: str
    alt: str | None
    missing_size: bool
    oversized: bool


def image_rows(archive: ArchiveReader, commit: int) -> Iterator[ImageRow]:
    """Every row of the unfiltered ``images`` list (``image_list``), in one pass and in no order.

    What a caller reading them all needs instead of paging through the list: one query, no count, no
    page skipped over again for the next one.
    """
    sql = (
        f"SELECT u.url, i.src, i.current_src, i.alt, {_MISSING_SIZE}, {_OVERSIZED} "
        "FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
        "JOIN image i ON i.state_id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 0"
    )
    for page, src, current, alt, missing, oversized in archive.tuples(sql, [commit]):
        yield ImageRow(page, src, current, alt, bool(missing), bool(oversized))


def image_list(
    archive: ArchiveReader,
    commit: int,
    url: str | None = None,
    missing_alt: bool = False,
    missing_size: bool = False,
    oversized: bool = False,
    lazy: bool | None = None,
    viewport_width: int | None = None,
    sort: str = "page",
    order: str = "asc",
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    unfiltered = (
        not (url or missing_alt or missing_size or oversized) and lazy is None and viewport_width is None
    )
    total = aggregates.value(archive, commit, "list_totals")["images"] if unfiltered else None
    sql, params = (_IMAGE_ROWS_BY_URL if sort == "page" else _IMAGE_ROWS), list[Any]([commit])
    if url:
        sql, params = sql + " AND instr(u.url, ?) > 0", [*params, url]
    if missing_alt:
        sql += " AND i.alt IS NULL"
    if missing_size:
        sql += f" AND {_MISSING_SIZE}"
    if oversized:
        sql += f" AND {_OVERSIZED}"
    if lazy is not None:
        sql, params = sql + " AND i.is_lazy = ?", [*params, int(lazy)]
    if viewport_width is not None:
        sql, params = sql + " AND i.viewport_width = ?", [*params, viewport_width]
    clause = order_by(IMAGE_SORTS, sort, order, tiebreak="u.url, i.viewport_width, i.ordinal")
    result = paged(archive, sql, params, clause, limit, offset, external_flag, total)
    for row in result["items"]:
        for key in ("is_lazy", "missing_size", "oversized"):
            row[key] = bool(row[key])
    return result
