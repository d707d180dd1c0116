"""Per-URL facts a crawl check computes once per commit, stored with it: the pages list's content columns.

The duplicate checks (``plugins/nitpicker_checks/duplicates.py``) compare every page's main content with every
other's when a commit completes; what they find per page (its main-content words, how many pages share its
content, its near duplicates) cannot be recomputed by a reader for each page shown. The check hands them over
(``Check.page_facts``), indexing stores them beside the check's findings, in the same transaction, and the
pages list, the report rows and so the viewer and the sheets read them, so the columns say what the findings
say.

Like the aggregates and the findings, the rows are stored as a set, once per distinct content
(``fact_set``, named by the digest of its rows): an unchanged re-crawl points at its parent's set. A commit's
row (``fact_commit``) names the commit's ``finished_at`` when its facts were made: a resumed or re-finished
commit no longer matches, and its columns are empty until its checks run again. The tables came without a
new archive format: an archive without them, and a commit without its row, show empty columns (NULL), never
an error. gc drops sets no commit points at; dropping a commit drops its row (it has a ``commit_id``).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

#: The facts, in the pages list's order: each page's main-content words (``\\w+`` runs of its main content,
#: as the duplicate checks count them); how many other pages have the same main content, and the first URL
#: of that group of exact duplicates (the page itself when it comes first; sorting by it puts a group
#: together); how many pages are near duplicates of it, the closest of them and its similarity (the exact
#: Jaccard similarity of their 3-word shingles, in percent, rounded down to two decimals).
COLUMNS = (
    "main_words",
    "exact_duplicates",
    "duplicate_group",
    "near_duplicates",
    "closest_near_duplicate",
    "near_similarity",
)
#: The facts that are URLs (stored as URL ids).
URL_COLUMNS = ("duplicate_group", "closest_near_duplicate")
#: The numeric facts (a page list can bound and sort them).
NUMBERS = tuple(c for c in COLUMNS if c not in URL_COLUMNS)
_STORED = {name: f"{name}_url_id" if name in URL_COLUMNS else name for name in COLUMNS}

SCHEMA = (
    # one row per commit whose facts are stored: its set, the commit's finished_at then, the check's token
    "CREATE TABLE IF NOT EXISTS fact_commit (commit_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL, "
    "finished_at TEXT NOT NULL, token TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS fact_commit_set ON fact_commit (set_id)",
    "CREATE TABLE IF NOT EXISTS fact_set (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE)",
    "CREATE TABLE IF NOT EXISTS set_page_fact (set_id INTEGER NOT NULL, url_id INTEGER NOT NULL, "
    "main_words INTEGER, exact_duplicates INTEGER, duplicate_group_url_id INTEGER, near_duplicates INTEGER, "
    "closest_near_duplicate_url_id INTEGER, near_similarity REAL, PRIMARY KEY (set_id, url_id)) WITHOUT ROWID",
)
TABLES = ("fact_commit", "fact_set", "set_page_fact")


# --- reading -------------------------------------------------------------------------------------------


def fact_set(archive: Any, commit: int) -> int | None:
    """The set holding ``commit``'s facts, or None: no tables (an older archive), no row for the commit, or
    a row made before the commit last changed (resumed, finished again)."""
    if not archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fact_commit'"):
        return None
    rows = archive.execute(
        "SELECT f.set_id FROM fact_commit f JOIN commits c ON c.id = f.commit_id WHERE f.commit_id = ? "
        "AND c.status = 'complete' AND c.finished_at = f.finished_at",
        [commit],
    )
    return int(rows[0][0]) if rows else None


def join(archive: Any, commit: int, url_id: str) -> str:
    """LEFT JOINs of the commit's facts as ``pf`` (and their URLs) on the URL id SQL ``url_id``; empty
    without stored facts (``select`` then gives NULLs)."""
    found = fact_set(archive, commit)
    if found is None:
        return ""
    return (
        f"LEFT JOIN set_page_fact pf ON pf.set_id = {found} AND pf.url_id = {url_id} "
        "LEFT JOIN url pfg ON pfg.id = pf.duplicate_group_url_id "
        "LEFT JOIN url pfc ON pfc.id = pf.closest_near_duplicate_url_id"
    )


def value_sql(name: str, joined: bool) -> str:
    """The SQL of one fact over ``join``'s aliases, NULL when nothing is joined."""
    if not joined:
        return "NULL"
    return {"duplicate_group": "pfg.url", "closest_near_duplicate": "pfc.url"}.get(name, f"pf.{name}")


def select(joined: bool) -> str:
    """The facts for a select list (``joined``: ``join`` gave the tables)."""
    return ", ".join(f"{value_sql(name, joined)} AS {name}" for name in COLUMNS)


# --- writing -------------------------------------------------------------------------------------------


def create_tables(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA:
        conn.execute(statement)


def store(conn: sqlite3.Connection, commit: int, token: str, facts: Mapping[str, Mapping[str, Any]]) -> int:
    """Store ``facts`` (URL → {column: value}, URLs for URL_COLUMNS) as ``commit``'s, in the caller's
    transaction; how many URLs. URLs the archive does not know are left out."""
    create_tables(conn)
    finished = conn.execute("SELECT finished_at FROM commits WHERE id = ?", (commit,)).fetchone()
    if finished is None or finished[0] is None:
        return 0
    wanted = set(facts)
    for row in facts.values():
        wanted.update(str(row[name]) for name in URL_COLUMNS if row.get(name) is not None)
    ids: dict[str, int] = {}
    listed = sorted(wanted)
    for start in range(0, len(listed), 500):
        chunk = listed[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        ids.update(conn.execute(f"SELECT url, id FROM url WHERE url IN ({marks})", chunk).fetchall())
    rows = []
    for url, row in facts.items():
        if url not in ids:
            continue
        values = [
            ids.get(row[n]) if n in URL_COLUMNS and row.get(n) is not None else row.get(n) for n in COLUMNS
        ]
        rows.append((ids[url], *values))
    rows.sort()
    digest = hashlib.blake2b(repr(rows).encode(), digest_size=16).digest()
    found = conn.execute("SELECT id FROM fact_set WHERE digest = ?", (digest,)).fetchone()
    if found is not None:
        set_id = int(found[0])
    else:
        set_id = int(conn.execute("INSERT INTO fact_set (digest) VALUES (?)", (digest,)).lastrowid or 0)
        names = ", ".join(_STORED[n] for n in COLUMNS)
        conn.executemany(
            f"INSERT INTO set_page_fact (set_id, url_id, {names}) VALUES ({set_id}, ?, "
            f"{', '.join('?' * len(COLUMNS))})",
            rows,
        )
    conn.execute(
        "INSERT OR REPLACE INTO fact_commit (commit_id, set_id, finished_at, token) VALUES (?, ?, ?, ?)",
        (commit, set_id, finished[0], token),
    )
    gc(conn)  # the set the commit pointed at before, unless another commit shares it
    return len(rows)


def store_safely(
    conn: sqlite3.Connection, commit: int, token: str, facts: Mapping[str, Mapping[str, Any]]
) -> int:
    """``store`` that never raises: the commit is right without its facts (its columns are empty)."""
    conn.execute("SAVEPOINT page_facts")
    try:
        stored = store(conn, commit, token, facts)
    except Exception:  # noqa: BLE001 - a plugin's values: the archive stays right without them
        log.warning("page facts of commit %s not stored", commit, exc_info=True)
        if (
            not conn.in_transaction
        ):  # SQLite ended the transaction itself (a full disk): the writer's to report
            raise
        conn.execute("ROLLBACK TO page_facts")
        stored = 0
    conn.execute("RELEASE page_facts")
    return stored


def gc(conn: sqlite3.Connection) -> int:
    """Drop the fact sets no commit points at any more; how many."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fact_set'").fetchone():
        return 0
    unused = "SELECT id FROM fact_set WHERE id NOT IN (SELECT set_id FROM fact_commit)"
    conn.execute(f"DELETE FROM set_page_fact WHERE set_id IN ({unused})")
    return int(conn.execute(f"DELETE FROM fact_set WHERE id IN ({unused})").rowcount)
