"""The sitemaps of a commit in the archive: stored by the writer, read back by checks and queries."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .lists import page_of, paged

if TYPE_CHECKING:
    from .reader import ArchiveReader

__all__ = [
    "SITEMAP_ROWS",
    "has_sitemaps",
    "sitemap_entries",
    "sitemap_list",
    "sitemap_rows",
    "store_sitemaps",
]

#: every sitemap of a commit, one row each, oldest first: the columns the checks and queries read
SITEMAP_ROWS = (
    "SELECT s.id, u.url, s.source, p.url AS parent, s.scope, s.kind, s.status, s.problems, s.entries "
    "FROM sitemap s JOIN url u ON u.id = s.url_id LEFT JOIN url p ON p.id = s.parent_url_id "
    "WHERE s.commit_id = ? ORDER BY s.id"
)


def _url_ids(conn: Any, urls: Iterable[str]) -> dict[str, int]:
    wanted = list(dict.fromkeys(urls))
    conn.executemany("INSERT OR IGNORE INTO url (url) VALUES (?)", [(u,) for u in wanted])
    ids: dict[str, int] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        ids.update(conn.execute(f"SELECT url, id FROM url WHERE url IN ({marks})", part).fetchall())
    return ids


def store_sitemaps(conn: Any, commit_id: int, files: Sequence[Any]) -> None:
    """Store ``SitemapFile``s for ``commit_id`` (inside the caller's transaction), replacing earlier ones."""
    conn.execute("DELETE FROM sitemap_alternate WHERE commit_id = ?", (commit_id,))
    conn.execute("DELETE FROM sitemap_entry WHERE commit_id = ?", (commit_id,))
    conn.execute("DELETE FROM sitemap WHERE commit_id = ?", (commit_id,))
    for file in files:
        alternates = getattr(file, "alternates", ())
        ids = _url_ids(
            conn,
            [
                file.url,
                *([file.parent] if file.parent else []),
                *(u for u, _ in file.entries),
                *(u for u, _, _ in alternates),
            ],
        )
        sitemap_id = conn.execute(
            "INSERT INTO sitemap (commit_id, url_id, source, parent_url_id, scope, kind, status, problems, "
            "entries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                commit_id,
                ids[file.url],
                file.source,
                ids[file.parent] if file.parent else None,
                file.scope,
                file.kind,
                file.status,
                json.dumps([list(p) for p in file.problems]),
                len(file.entries),
            ),
        ).lastrowid
        conn.executemany(
            "INSERT INTO sitemap_entry (commit_id, sitemap_id, url_id, lastmod) VALUES (?, ?, ?, ?)",
            [(commit_id, sitemap_id, ids[url], lastmod) for url, lastmod in dict(file.entries).items()],
        )
        conn.executemany(
            "INSERT INTO sitemap_alternate (commit_id, sitemap_id, url_id, hreflang, href) VALUES (?, ?, ?, ?, ?)",
            [(commit_id, sitemap_id, ids[url], code, href) for url, code, href in dict.fromkeys(alternates)],
        )


# --- reading (through nitpicker_core.read) --------------------------------------------------------------------


def has_sitemaps(archive: ArchiveReader) -> bool:
    """Whether the archive stores sitemaps at all (format 4 on)."""
    return bool(archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sitemap'"))


def _problems(row: dict[str, Any]) -> dict[str, Any]:
    row["problems"] = [tuple(p) for p in json.loads(row["problems"] or "[]")]
    return row


def sitemap_rows(archive: ArchiveReader, commit: int) -> list[dict[str, Any]]:
    """The commit's sitemaps in reading order (none before format 4): id, url, source, parent, scope, kind,
    status, problems as (kind, detail) pairs, entries."""
    if not has_sitemaps(archive):
        return []
    return [_problems(dict(row)) for row in archive.execute(SITEMAP_ROWS, [commit])]


_ENTRIES = (
    "SELECT e.sitemap_id, u.url FROM sitemap_entry e JOIN url u ON u.id = e.url_id "
    "JOIN sitemap s ON s.id = e.sitemap_id WHERE e.commit_id = ? AND s.kind != 'index' ORDER BY e.rowid"
)


def sitemap_entries(archive: ArchiveReader, commit: int) -> Iterator[tuple[int, str]]:
    """(sitemap id, URL listed) of the commit's URL sitemaps (indexes left out), in reading order."""
    if not has_sitemaps(archive):
        return iter(())
    return (tuple(row) for row in archive.execute(_ENTRIES, [commit]))  # type: ignore[misc]


def _listed(row: dict[str, Any]) -> dict[str, Any]:
    row = _problems(row)
    row.pop("id", None)
    row["problems"] = [{"kind": k, "detail": d} for k, d in row["problems"]]
    return row


def sitemap_list(archive: ArchiveReader, commit: int, limit: int, offset: int) -> dict[str, Any]:
    """One page of the commit's sitemaps in reading order, in the list shape (empty before format 4)."""
    if not has_sitemaps(archive):
        return page_of([], 0, limit, offset)
    sql = SITEMAP_ROWS.removesuffix(" ORDER BY s.id")
    return paged(archive, sql, [commit], " ORDER BY s.id", limit, offset, _listed)
