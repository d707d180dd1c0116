"""The robots.txt files a commit read: stored by the writer, judged for well-known crawlers on reading."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from nitpicker_core.crawler_access import RobotsFile, access, blocked_summary, written_on

if TYPE_CHECKING:
    from .reader import ArchiveReader

__all__ = ["crawler_access", "crawler_summary", "has_robots_files", "robots_files", "store_robots_files"]

# The pages judged per crawler: internal URLs in the scope that answered HTML, and those the crawl's own
# robots.txt check skipped (a page of the site all the same)
_PAGES = (
    "SELECT u.url FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id JOIN url u ON u.id = cp.url_id "
    "WHERE cp.commit_id = ? AND ps.is_external = 0 AND COALESCE(ps.outside_scope, 0) = 0 AND ("
    "(ps.scraped = 1 AND ps.content_type LIKE 'text/html%') "
    "OR (ps.is_skipped = 1 AND ps.skip_reason LIKE 'blocked by robots.txt%')) ORDER BY u.url"
)


def store_robots_files(conn: Any, commit_id: int, files: Sequence[RobotsFile]) -> None:
    """Store ``files`` for ``commit_id`` (inside the caller's transaction); an origin read again replaces its row."""
    conn.executemany(
        "INSERT OR REPLACE INTO robots_txt (commit_id, origin, status, failure, body) VALUES (?, ?, ?, ?, ?)",
        [(commit_id, f.origin, f.status, f.failure, f.text) for f in files],
    )


def has_robots_files(archive: ArchiveReader) -> bool:
    """Whether the archive has the robots_txt table (a writer creates it on open; older archives lack it)."""
    return bool(archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'robots_txt'"))


def robots_files(archive: ArchiveReader, commit: int) -> list[RobotsFile]:
    """The commit's robots.txt files by origin (none with ``--ignore-robots``, or in an archive written before they were kept)."""
    if not has_robots_files(archive):
        return []
    return [
        RobotsFile(row["origin"], row["status"], row["failure"], row["body"] or "")
        for row in archive.execute(
            "SELECT origin, status, failure, body FROM robots_txt WHERE commit_id = ? ORDER BY origin",
            [commit],
        )
    ]


def _roots(archive: ArchiveReader, commit: int) -> list[str]:
    for row in archive.commits():
        if row["id"] == commit:
            return [str(r) for r in (row.get("options") or {}).get("roots") or []]
    return []


def _pages(archive: ArchiveReader, commit: int) -> Iterable[str]:
    return [row["url"] for row in archive.execute(_PAGES, [commit])]


def crawler_access(archive: ArchiveReader, commit: int, agent: str | None = None) -> dict[str, Any]:
    """Per well-known crawler: robots.txt's verdict on the start URLs' origins and on each page of the commit;
    with ``agent`` only that crawler, with the disallowed page URLs listed."""
    files = robots_files(archive, commit)
    roots = _roots(archive, commit)
    rows = access(
        files,
        roots,
        _pages(archive, commit),
        tokens=[agent] if agent else None,
        list_disallowed=agent is not None,
    )
    return {
        "written": written_on(),
        "robots_txt": [
            {"url": f"{f.origin}/robots.txt", "status": f.status, "failure": f.failure} for f in files
        ],
        "crawlers": rows,
    }


def crawler_summary(archive: ArchiveReader, commit: int) -> dict[str, Any] | None:
    """The site-wide verdicts in a few numbers (``blocked_summary``); None when no start origin's robots.txt
    was read or answered."""
    files = robots_files(archive, commit)
    if not files:
        return None
    found = blocked_summary(access(files, _roots(archive, commit)))
    return found if found["crawlers"] else None
