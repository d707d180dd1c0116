"""The sitemaps of a commit in the archive: stored by the writer, read back by checks and queries."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["SITEMAP_ROWS", "store_sitemaps"]

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
    conn.execute("DELETE FROM sitemap_entry WHERE commit_id = ?", (commit_id,))
    conn.execute("DELETE FROM sitemap WHERE commit_id = ?", (commit_id,))
    for file in files:
        ids = _url_ids(
            conn, [file.url, *([file.parent] if file.parent else []), *(u for u, _ in file.entries)]
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
