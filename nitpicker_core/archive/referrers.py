"""Who referenced each sub-resource of a commit: derived from page states, counted once per finished commit.

Format 3 keeps no per-commit rows of referrers: ``commit_resource_referrer`` is a view over ``commit_page``
and ``page_resource`` (models.REFERRER_VIEW), so an unchanged re-crawl stores nothing here. Counting through
the view costs a lookup per reference, too slow for a resource list sorted by referrers at 100,000 pages, so
``commit_resource.referrers`` holds each resource's count: written when the commit finishes, cleared when
its content changes again (resume, append). Readers use it when set and count through the view otherwise
(a commit still running or killed); a format-2 archive has no such column and counts its table.
"""

from __future__ import annotations

import sqlite3
from typing import Any

# One pass over the commit's pages and the resources their states loaded, then one update by primary key.
_COUNT = (
    "UPDATE commit_resource SET referrers = COALESCE(n.referrers, 0) FROM ("
    " SELECT cr.url_id, x.referrers FROM commit_resource cr LEFT JOIN ("
    "  SELECT pr.resource_url_id, COUNT(*) AS referrers FROM commit_page cp "
    "  JOIN page_resource pr ON pr.state_id = cp.state_id WHERE cp.commit_id = ?1 GROUP BY pr.resource_url_id"
    " ) x ON x.resource_url_id = cr.url_id WHERE cr.commit_id = ?1"
    ") n WHERE commit_resource.commit_id = ?1 AND commit_resource.url_id = n.url_id"
)


def count(conn: sqlite3.Connection, commit_id: int) -> None:
    """Store the referrer count of every resource of ``commit_id`` (inside the caller's transaction)."""
    conn.execute(_COUNT, (commit_id,))


def clear(conn: sqlite3.Connection, commit_id: int) -> None:
    """The commit's content is about to change: its counts no longer hold."""
    conn.execute(
        "UPDATE commit_resource SET referrers = NULL WHERE commit_id = ? AND referrers IS NOT NULL",
        (commit_id,),
    )


def count_sql(archive: Any, alias: str = "cr") -> str:
    """SQL for the referrer count of the ``commit_resource`` row ``alias``, for this archive's format."""
    counted = (
        f"(SELECT COUNT(*) FROM commit_resource_referrer r WHERE r.commit_id = {alias}.commit_id "
        f"AND r.resource_url_id = {alias}.url_id)"
    )
    has_column = getattr(archive, "has_column", None)
    if has_column is None or has_column("commit_resource", "referrers"):
        return f"COALESCE({alias}.referrers, {counted})"
    return counted
