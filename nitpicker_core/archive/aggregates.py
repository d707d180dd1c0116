"""Per-commit aggregates: resolved edges, components, isolated pages, broken and external links, digests.

Computed once when a commit completes and stored with it, so the link queries answer from indexes instead
of grouping millions of anchors per call (and the whole-commit digests of ``digest.py`` from one row). The SQL below is the single definition of what each aggregate
means: the queries run the same statements on demand for a commit without stored aggregates (older
archives, interrupted or running commits), and the build stores their rows. Any write into a commit drops
its aggregates; finishing it as complete builds them again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

from . import digest

# Set NITPICKER_AGGREGATES=0 to make readers ignore stored aggregates (tests compare both paths with it).
ENV_SWITCH = "NITPICKER_AGGREGATES"
# 5: the security header totals count Referrer-Policy and Permissions-Policy too
AGGREGATE_VERSION = 5

# "Page" semantics. Strict: rendered HTML. Loose (user-facing lists): strict plus rows without a content
# type that are not redirects, i.e. fetch failures and skipped URLs.
STRICT = digest.STRICT
LOOSE = digest.LOOSE

TABLES = ("agg_commit", "agg_value", "agg_url", "agg_edge", "agg_cluster", "agg_external", "agg_broken")
SCHEMA = (
    # One row per commit whose aggregates are stored; `totals` holds the counts lists report.
    "CREATE TABLE IF NOT EXISTS agg_commit (commit_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, "
    "built_at TEXT NOT NULL, seconds REAL NOT NULL, totals TEXT NOT NULL)",
    # Whole-commit digests (see digest.py) as JSON, by digest name.
    "CREATE TABLE IF NOT EXISTS agg_value (commit_id INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (commit_id, name)) WITHOUT ROWID",
    # Every URL of the commit with its rank in URL order (so lists stream in URL order through an index),
    # its weakly connected component (min rank of the component; internal HTML pages only) and whether no
    # other page links to it (internal HTML pages only).
    "CREATE TABLE IF NOT EXISTS agg_url (commit_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
    "url_id INTEGER NOT NULL, comp INTEGER, isolated INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY (commit_id, rank)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS agg_url_url ON agg_url (commit_id, url_id)",
    "CREATE INDEX IF NOT EXISTS agg_url_comp ON agg_url (commit_id, comp, rank) WHERE comp IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS agg_url_isolated ON agg_url (commit_id, rank) WHERE isolated = 1",
    # The link graph: resolved, deduplicated edges between internal pages, in (source, target) URL order.
    "CREATE TABLE IF NOT EXISTS agg_edge (commit_id INTEGER NOT NULL, src_rank INTEGER NOT NULL, "
    "dst_rank INTEGER NOT NULL, anchors INTEGER NOT NULL, PRIMARY KEY (commit_id, src_rank, dst_rank)) "
    "WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS agg_cluster (commit_id INTEGER NOT NULL, comp INTEGER NOT NULL, "
    "size INTEGER NOT NULL, PRIMARY KEY (commit_id, comp)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS agg_cluster_size ON agg_cluster (commit_id, size DESC, comp)",
    "CREATE TABLE IF NOT EXISTS agg_external (commit_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
    "dest_url_id INTEGER NOT NULL, referrers INTEGER NOT NULL, anchors INTEGER NOT NULL, "
    "PRIMARY KEY (commit_id, rank)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS agg_broken (commit_id INTEGER NOT NULL, src_rank INTEGER NOT NULL, "
    "ordinal INTEGER NOT NULL, anchor_id INTEGER NOT NULL, dest_url_id INTEGER NOT NULL, status INTEGER, "
    "PRIMARY KEY (commit_id, src_rank, ordinal)) WITHOUT ROWID",
)


def create_tables(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA:
        conn.execute(statement)


# --- the definitions (commit ids are formatted in as integers: they are never user text) -----------------


def redirects(commit: int) -> str:
    """A URL row of the commit that redirects (alias r), joined so only rows of the commit count."""
    return (
        f"page_state r CROSS JOIN commit_page rc ON rc.commit_id = {int(commit)} AND rc.url_id = r.url_id "
        "AND rc.state_id = r.id"
    )


def redirecting(commit: int) -> str:
    """(url_id, dest): the URLs of the commit whose current state redirects, with their destination."""
    return (
        "SELECT rc.url_id, r.redirect_dest_url_id AS dest FROM commit_page rc JOIN page_state r "
        f"ON r.id = rc.state_id WHERE rc.commit_id = {int(commit)} AND r.redirect_dest_url_id IS NOT NULL"
    )


def edges(commit: int) -> str:
    """Resolved edges from internal pages: (src, dst, anchors), the target followed through its redirect."""
    c = int(commit)
    # The few redirecting URLs are gathered once, not looked up per anchor among all page states.
    return (
        "SELECT sc.url_id AS src, COALESCE(rd.dest, a.target_url_id) AS dst, "
        "COUNT(*) AS anchors FROM commit_page sc JOIN page_state sps ON sps.id = sc.state_id "
        f"JOIN anchor a ON a.state_id = sc.state_id LEFT JOIN ({redirecting(c)}) rd ON rd.url_id = a.target_url_id "
        f"WHERE sc.commit_id = {c} AND sps.is_external = 0 GROUP BY 1, 2"
    )


def graph_edges(commit: int) -> str:
    """The link graph's edges (src, dst, anchors): no self-links, targets are internal (loose) pages."""
    c = int(commit)
    targets = (
        "SELECT cp.url_id FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
        f"WHERE cp.commit_id = {c} AND ps.is_external = 0 AND {LOOSE}"
    )
    return f"SELECT e.src, e.dst, e.anchors FROM ({edges(c)}) e WHERE e.src != e.dst AND e.dst IN ({targets})"


def nodes(commit: int) -> str:
    """The nodes of components and isolation: url ids of the commit's internal HTML pages."""
    return (
        "SELECT cp.url_id FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
        f"WHERE cp.commit_id = {int(commit)} AND ps.is_external = 0 AND {STRICT}"
    )


def isolated(commit: int) -> str:
    """Url ids of internal HTML pages no anchor of another page reaches, directly or through a redirect."""
    c = int(commit)
    return (
        f"{nodes(c)} AND NOT EXISTS (SELECT 1 FROM anchor a CROSS JOIN commit_page sc ON sc.commit_id = {c} "
        "AND sc.state_id = a.state_id WHERE a.target_url_id = cp.url_id AND sc.url_id != cp.url_id) "
        f"AND NOT EXISTS (SELECT 1 FROM {redirects(c)} CROSS JOIN anchor a ON a.target_url_id = r.url_id "
        f"CROSS JOIN commit_page sc ON sc.commit_id = {c} AND sc.state_id = a.state_id "
        "WHERE r.redirect_dest_url_id = cp.url_id AND sc.url_id != cp.url_id)"
    )


def broken(commit: int) -> str:
    """One row per anchor whose destination, followed through one redirect, is a 404 of the commit:
    (src_id, anchor_id, ordinal, dest_id, status)."""
    c = int(commit)
    d404 = (
        "SELECT cp.url_id, ps.status FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
        f"WHERE cp.commit_id = {c} AND ps.status = 404 AND ps.redirect_dest_url_id IS NULL"
    )
    dead = (
        f"SELECT url_id AS via_id, url_id AS dest_id, status FROM ({d404}) UNION ALL "
        f"SELECT r.url_id, d.url_id, d.status FROM ({d404}) d CROSS JOIN {redirects(c)} "
        "WHERE r.redirect_dest_url_id = d.url_id"
    )
    return (
        "SELECT sc.url_id AS src_id, a.id AS anchor_id, a.ordinal, dead.dest_id, dead.status "
        f"FROM ({dead}) dead CROSS JOIN anchor a ON a.target_url_id = dead.via_id "
        f"CROSS JOIN commit_page sc ON sc.commit_id = {c} AND sc.state_id = a.state_id"
    )


def external(commit: int) -> str:
    """Anchors whose written target is external, grouped by where it finally led: (dest_id, referrers, anchors)."""
    c = int(commit)
    ext = (
        "SELECT cp.url_id AS via_id, COALESCE(ps.redirect_dest_url_id, cp.url_id) AS dest_id "
        f"FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = {c} "
        "AND ps.is_external = 1"
    )
    return (
        "SELECT ext.dest_id, COUNT(DISTINCT sc.url_id) AS referrers, COUNT(*) AS anchors "
        f"FROM ({ext}) ext CROSS JOIN anchor a ON a.target_url_id = ext.via_id "
        f"CROSS JOIN commit_page sc ON sc.commit_id = {c} AND sc.state_id = a.state_id GROUP BY ext.dest_id"
    )


def components(node_ids: list[int], pairs: Any) -> dict[int, int]:
    """Weakly connected components (union-find): node → its smallest member; edges to non-nodes ignored."""
    parent = {n: n for n in node_ids}

    def find(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for src, dst in pairs:
        if src in parent and dst in parent:
            a, b = find(src), find(dst)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {n: find(n) for n in node_ids}


# --- reading -------------------------------------------------------------------------------------------


def stored(archive: Any, commit: int) -> dict[str, Any] | None:
    """The totals of ``commit``'s stored aggregates, or None (absent, outdated or switched off)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    if not archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agg_commit'"):
        return None
    rows = archive.execute("SELECT version, totals FROM agg_commit WHERE commit_id = ?", [commit])
    if not rows or rows[0][0] != AGGREGATE_VERSION:
        return None
    return json.loads(rows[0][1])


def value(archive: Any, commit: int, name: str) -> Any:
    """A digest of ``commit``: stored if the commit has its aggregates, else computed now."""
    if stored(archive, commit) is not None:
        rows = archive.execute("SELECT value FROM agg_value WHERE commit_id = ? AND name = ?", [commit, name])
        if rows:
            return json.loads(rows[0][0])
    return digest.DIGESTS[name](archive.execute, commit)


# --- writing -------------------------------------------------------------------------------------------


def drop(conn: sqlite3.Connection, commit: int) -> None:
    for table in TABLES:
        conn.execute(f"DELETE FROM {table} WHERE commit_id = ?", (commit,))


def changing(conn: sqlite3.Connection, commit: int) -> None:
    """``commit``'s content is about to change: drop its aggregates and its children's diff against it."""
    drop(conn, commit)
    conn.execute(
        "DELETE FROM agg_value WHERE name = 'diff_parent' AND commit_id IN "
        "(SELECT id FROM commits WHERE parent_id = ?)",
        (commit,),
    )


def build(conn: sqlite3.Connection, commit: int, now: str) -> float:
    """Compute and store every aggregate of ``commit`` (inside the caller's transaction); returns seconds."""
    started = last = time.perf_counter()
    cpu = time.process_time()
    steps: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal last
        now_ = time.perf_counter()
        steps[name] = round(now_ - last, 3)
        last = now_

    c = int(commit)
    drop(conn, c)
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS agg_rank (url_id INTEGER PRIMARY KEY, rank INTEGER NOT NULL)"
    )
    conn.execute("DELETE FROM temp.agg_rank")
    conn.execute("INSERT INTO temp.agg_rank SELECT id, ROW_NUMBER() OVER (ORDER BY url) FROM url")
    try:
        conn.execute(
            f"INSERT INTO agg_url (commit_id, rank, url_id) SELECT {c}, k.rank, cp.url_id "
            f"FROM commit_page cp JOIN temp.agg_rank k ON k.url_id = cp.url_id WHERE cp.commit_id = {c}"
        )
        lap("ranks")
        conn.execute(f"UPDATE agg_url SET isolated = 1 WHERE commit_id = {c} AND url_id IN ({isolated(c)})")
        lap("isolated")
        conn.execute(
            f"INSERT INTO agg_edge (commit_id, src_rank, dst_rank, anchors) SELECT {c}, s.rank, d.rank, g.anchors "
            f"FROM ({graph_edges(c)}) g CROSS JOIN agg_url s ON s.commit_id = {c} AND s.url_id = g.src "
            f"CROSS JOIN agg_url d ON d.commit_id = {c} AND d.url_id = g.dst ORDER BY 2, 3"
        )  # appends in key order
        lap("edges")
        node_ranks = [
            r[0]
            for r in conn.execute(
                f"SELECT n.rank FROM agg_url n WHERE n.commit_id = {c} AND n.url_id IN ({nodes(c)})"
            )
        ]
        # Graph edges reach every node pair the components need: nodes are strict pages, a subset of the
        # loose targets, and self-links do not connect anything.
        comp = components(
            node_ranks, conn.execute(f"SELECT src_rank, dst_rank FROM agg_edge WHERE commit_id = {c}")
        )
        conn.executemany(
            f"UPDATE agg_url SET comp = ? WHERE commit_id = {c} AND rank = ?",
            [(root, rank) for rank, root in comp.items()],
        )
        sizes: dict[int, int] = {}
        for root in comp.values():
            sizes[root] = sizes.get(root, 0) + 1
        conn.executemany(f"INSERT INTO agg_cluster (commit_id, comp, size) VALUES ({c}, ?, ?)", sizes.items())
        lap("components")
        conn.execute(
            f"INSERT INTO agg_external (commit_id, rank, dest_url_id, referrers, anchors) "
            f"SELECT {c}, k.rank, e.dest_id, e.referrers, e.anchors FROM ({external(c)}) e "
            "CROSS JOIN temp.agg_rank k ON k.url_id = e.dest_id"
        )
        lap("external")
        conn.execute(
            f"INSERT INTO agg_broken (commit_id, src_rank, ordinal, anchor_id, dest_url_id, status) "
            f"SELECT {c}, s.rank, b.ordinal, b.anchor_id, b.dest_id, b.status FROM ({broken(c)}) b "
            f"CROSS JOIN agg_url s ON s.commit_id = {c} AND s.url_id = b.src_id"
        )
        lap("broken")
    finally:
        conn.execute("DELETE FROM temp.agg_rank")

    def run(sql: str, params: Any) -> list[Any]:
        return conn.execute(sql, params).fetchall()

    for name, make in digest.DIGESTS.items():
        conn.execute(
            f"INSERT INTO agg_value (commit_id, name, value) VALUES ({c}, ?, ?)",
            (name, json.dumps(make(run, c))),
        )
        lap(name)

    def count(table: str) -> int:
        return conn.execute(f"SELECT COUNT(*) FROM {table} WHERE commit_id = {c}").fetchone()[0]

    isolated_total = conn.execute(
        f"SELECT COUNT(*) FROM agg_url WHERE commit_id = {c} AND isolated = 1"
    ).fetchone()[0]
    totals = {
        "graph_edges": count("agg_edge"),
        "external": count("agg_external"),
        "broken": count("agg_broken"),
        "isolated": isolated_total,
        "build_steps": steps,
        "build_cpu_seconds": round(time.process_time() - cpu, 3),
    }
    seconds = time.perf_counter() - started
    conn.execute(
        "INSERT INTO agg_commit (commit_id, version, built_at, seconds, totals) VALUES (?, ?, ?, ?, ?)",
        (c, AGGREGATE_VERSION, now, round(seconds, 3), json.dumps(totals, sort_keys=True)),
    )
    return seconds
