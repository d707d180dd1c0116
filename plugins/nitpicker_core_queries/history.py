"""The `history` query: one page across the commits that lead to a commit, and where it changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError, read
from nitpicker_core.archive import pagediff

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# Row keys that are no field of the page (how it was reached, or the row's own bookkeeping).
_NOT_FIELDS = frozenset({"url", "first_seen_at", "last_crawled_at", "order"})


def _ancestry(archive: ArchiveReader, commit: int) -> list[dict[str, Any]]:
    """``commit`` and its parents back to the first, oldest first: the generations that led to it."""
    by_id = {row["id"]: row for row in archive.commits()}
    chain, seen, current = [], set(), commit
    while current is not None and current in by_id and current not in seen:  # a cycle cannot loop forever
        seen.add(current)
        chain.append(by_id[current])
        current = by_id[current]["parent_id"]
    return chain[::-1]


def _value(archive: ArchiveReader, url: str, commit: int, page: dict[str, Any], field: str) -> Any:
    if _is_cell(field):  # an analyzer's cell: "extract/price"; None where that analyzer left none
        return read.url_cells(archive, commit, url).get(field)
    return pagediff.FACETS[field](archive, url, commit) if field in pagediff.FACETS else page[field]


def _is_cell(field: str | None) -> bool:
    return field is not None and "/" in field


def _history(archive: ArchiveReader, commit: int, url: str, field: str | None = None) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    previous: tuple[int, dict[str, Any] | None, Any] | None = None  # (commit, page, value) of the last one
    for row in _ancestry(archive, commit):
        page = archive.page(url, row["id"])
        if (
            page is not None
            and field is not None
            and not _is_cell(field)
            and field not in pagediff.FACETS
            and field not in page
        ):
            raise UsageError(f"no field {field!r}; fields: {', '.join(_fields(page))}")
        entry: dict[str, Any] = {
            "commit": row["id"],
            "started_at": row["started_at"],
            "status": row["status"],
            "present": page is not None,
        }
        value: Any = None  # the field's value (any JSON), or the page's hash
        if page is not None:
            value = _value(archive, url, row["id"], page, field) if field else page["hash"]
            entry["value" if field else "state"] = value
        if previous is not None and _changed(field, previous[1:], (page, value)):
            change: dict[str, Any] = {"commit": row["id"], "base": previous[0]}
            if field in pagediff.FACETS and previous[1] is not None and page is not None:
                change.update(pagediff.set_diff(previous[2], value))
            elif field:
                change.update(old=previous[2], new=value)
            else:
                delta = pagediff.page_diff(
                    pagediff.Side(archive, previous[0]), pagediff.Side(archive, row["id"]), url
                )
                change.update(status=delta["status"], changed=delta["changed"])
            changes.append(change)
        entries.append(entry)
        previous = (row["id"], page, value)
    if not any(e["present"] for e in entries):
        raise UsageError(f"{url} is in no commit up to {commit}")
    if _is_cell(field):
        known = {key for e in entries if e["present"] for key in read.url_cells(archive, e["commit"], url)}
        if field not in known:  # a typo, or an analyzer never run on the page: say which cells there are
            raise UsageError(
                f"no analyzer cell {field!r} for {url}; cells: {', '.join(sorted(known)) or 'none'}"
            )
    return {"url": url, "field": field, "commits": entries, "changes": changes}


def _changed(field: str | None, before: tuple[Any, Any], after: tuple[Any, Any]) -> bool:
    """Whether the page appeared, disappeared or changed its value; links, images… are compared as sets."""
    if (before[0] is None) != (after[0] is None):
        return True
    if before[0] is None or before[1] == after[1]:
        return False
    return field not in pagediff.FACETS or bool(pagediff.set_diff(before[1], after[1]))


def _fields(page: dict[str, Any]) -> list[str]:
    return sorted((set(page) - _NOT_FIELDS) | set(pagediff.FACETS))


QUERIES = [
    Query(
        "history",
        "One page across the commits that led to the commit (oldest first): with field, the field's "
        'value per commit and the commits where it changed ("when did this title change?"); without, its '
        "state per commit and what changed where it did.",
        _history,
        {
            "url": {"type": "string", "description": "the page's URL"},
            "field": {
                "type": "string",
                "default": None,
                "description": "a field of the page (title, status, description, headers…), one of "
                "anchors, images, resources, jsonld, tags, headings, errors, or an analyzer's cell as "
                "ANALYZER/COLUMN (extract/price: when did the extracted price change?)",
            },
        },
        required=("url",),
        order=5,
    ),
]
