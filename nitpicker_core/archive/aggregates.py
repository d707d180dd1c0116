"""Per-commit aggregates: resolved edges, components, isolated pages, broken and external links, digests.

Computed once when a commit completes and stored with it, so the link queries answer from indexes instead
of grouping millions of anchors per call (and the whole-commit digests of ``digest.py`` from one row). The SQL below is the single definition of what each aggregate
means: the queries run the same statements on demand for a commit without stored aggregates (older
archives, interrupted or running commits), and the build stores their rows. Any write into a commit drops
its aggregates; finishing it as complete builds them again.

The rows are stored as a set, once per distinct content (``agg_set``, named by the digest of its rows): a
re-crawl whose aggregates come out the same as an earlier commit's points at that commit's set, so an
unchanged commit costs one ``agg_commit`` row, not a copy of its link graph. The one per-commit value, the
diff against the parent (it names the parent), is kept in ``agg_commit`` itself. gc drops sets no commit
points at.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from array import array
from collections.abc import Iterable
from typing import Any

from . import digest, seo

# Set NITPICKER_AGGREGATES=0 to make readers ignore stored aggregates (tests compare both paths with it).
ENV_SWITCH = "NITPICKER_AGGREGATES"
# 5: rows stored as shared sets (set_id), the parent diff in agg_commit
AGGREGATE_VERSION = 5

# "Page" semantics. Strict: rendered HTML. Loose (user-facing lists): strict plus rows without a content
# type that are not redirects, i.e. fetch failures and skipped URLs.
STRICT = digest.STRICT
LOOSE = digest.LOOSE

# The digest stored per commit rather than in the shared set: it names the commit's parent.
PER_COMMIT = "diff_parent"
# Digests that name their commit first (``{"commit": id, ...}``): stored without it, given it back on read.
NAMING = ("summary",)
# Tables of a set's rows (keyed by set_id, in their primary key's order) and the columns after set_id.
SET_TABLES: dict[str, tuple[str, ...]] = {
    "agg_value": ("name", "value"),
    "agg_url": ("rank", "url_id", "comp", "isolated"),
    "agg_edge": ("src_rank", "dst_rank", "anchors"),
    "agg_cluster": ("comp", "size"),
    "agg_external": ("rank", "dest_url_id", "referrers", "anchors"),
    "agg_broken": ("src_rank", "ordinal", "anchor_id", "dest_url_id", "status"),
    # added after version 5 without a new version: a set built before has none of these rows, and its
    # readers compute the facts on demand (has_seo)
    "agg_seo": ("url_id", *seo.FACT_COLUMNS),
    # added after agg_seo the same way (a set without these rows: its readers walk the anchors, has_graph)
    "agg_graph": ("url_id", "targets"),
}
TABLES = ("agg_commit", "agg_set", *SET_TABLES)
_SET_SCHEMA = (
    # Whole-commit digests (see digest.py) as JSON, by digest name.
    "CREATE TABLE IF NOT EXISTS {s}agg_value (set_id INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (set_id, name)) WITHOUT ROWID",
    # Every URL of the commit with its rank in URL order (so lists stream in URL order through an index),
    # its weakly connected component (min rank of the component; internal HTML pages only) and whether no
    # other page links to it (internal HTML pages only).
    "CREATE TABLE IF NOT EXISTS {s}agg_url (set_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
    "url_id INTEGER NOT NULL, comp INTEGER, isolated INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY (set_id, rank)) WITHOUT ROWID",
    # The link graph: resolved, deduplicated edges between internal pages, in (source, target) URL order.
    "CREATE TABLE IF NOT EXISTS {s}agg_edge (set_id INTEGER NOT NULL, src_rank INTEGER NOT NULL, "
    "dst_rank INTEGER NOT NULL, anchors INTEGER NOT NULL, PRIMARY KEY (set_id, src_rank, dst_rank)) "
    "WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS {s}agg_cluster (set_id INTEGER NOT NULL, comp INTEGER NOT NULL, "
    "size INTEGER NOT NULL, PRIMARY KEY (set_id, comp)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS {s}agg_external (set_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
    "dest_url_id INTEGER NOT NULL, referrers INTEGER NOT NULL, anchors INTEGER NOT NULL, "
    "PRIMARY KEY (set_id, rank)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS {s}agg_broken (set_id INTEGER NOT NULL, src_rank INTEGER NOT NULL, "
    "ordinal INTEGER NOT NULL, anchor_id INTEGER NOT NULL, dest_url_id INTEGER NOT NULL, status INTEGER, "
    "PRIMARY KEY (set_id, src_rank, ordinal)) WITHOUT ROWID",
    # Each URL's SEO facts: depth, inlinks and outlinks, indexability (archive/seo.py says what each means)
    "CREATE TABLE IF NOT EXISTS {s}agg_seo (set_id INTEGER NOT NULL, url_id INTEGER NOT NULL, "
    + ", ".join(f"{c} {'TEXT' if c == 'indexability_reason' else 'INTEGER'}" for c in seo.FACT_COLUMNS)
    + ", PRIMARY KEY (set_id, url_id)) WITHOUT ROWID",
    # Each internal page's link targets inside the crawl's scope, as ``linkgraph.anchor_graph`` reads them
    # (see ``pack_targets``): the checks read the graph from 100,000 rows instead of 3,000,000 anchors
    "CREATE TABLE IF NOT EXISTS {s}agg_graph (set_id INTEGER NOT NULL, url_id INTEGER NOT NULL, "
    "targets BLOB NOT NULL, PRIMARY KEY (set_id, url_id)) WITHOUT ROWID",
)
SCHEMA = (
    # One row per commit whose aggregates are stored: its set, how long the build took (``build``: CPU
    # seconds, and seconds per step when it took over a second) and its diff against its parent (the
    # ``diff_parent`` digest, JSON).
    "CREATE TABLE IF NOT EXISTS agg_commit (commit_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, "
    "set_id INTEGER NOT NULL, built_at TEXT NOT NULL, seconds REAL NOT NULL, build TEXT NOT NULL, "
    "diff TEXT)",
    "CREATE INDEX IF NOT EXISTS agg_commit_set ON agg_commit (set_id)",
    # A distinct set of aggregate rows, named by the digest of its content; `totals` holds the counts lists
    # report.
    "CREATE TABLE IF NOT EXISTS agg_set (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, "
    "totals TEXT NOT NULL)",
    *(statement.format(s="") for statement in _SET_SCHEMA),
    "CREATE UNIQUE INDEX IF NOT EXISTS agg_url_url ON agg_url (set_id, url_id)",
    "CREATE INDEX IF NOT EXISTS agg_url_comp ON agg_url (set_id, comp, rank) WHERE comp IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS agg_url_isolated ON agg_url (set_id, rank) WHERE isolated = 1",
    "CREATE INDEX IF NOT EXISTS agg_cluster_size ON agg_cluster (set_id, size DESC, comp)",
)
# Where a build puts its rows before it knows whether an equal set is stored already (connection-local).
_BUILD_PREFIX = "temp.build_"
# Tables of version 4 and before (rows per commit_id): derived data, dropped when a writer opens the archive.
RETIRED_LAYOUT = (
    "agg_commit",
    "agg_value",
    "agg_url",
    "agg_edge",
    "agg_cluster",
    "agg_external",
    "agg_broken",
)


def create_tables(conn: sqlite3.Connection) -> None:
    """Create the tables; an archive of version 4 or before loses its per-commit rows (readers compute
    those commits' aggregates on demand, as for any outdated version; new commits store sets)."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(agg_commit)")}
    if columns and "set_id" not in columns:
        for table in RETIRED_LAYOUT:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
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
    """The totals of ``commit``'s stored aggregates with their set's id under ``set``, or None (absent,
    outdated or switched off)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    if not archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agg_commit'"):
        return None
    # the version first: an archive of version 4 or before has no set_id column
    rows = archive.execute("SELECT version FROM agg_commit WHERE commit_id = ?", [commit])
    if not rows or rows[0][0] != AGGREGATE_VERSION:
        return None
    rows = archive.execute(
        "SELECT s.id, s.totals FROM agg_commit c JOIN agg_set s ON s.id = c.set_id WHERE c.commit_id = ?",
        [commit],
    )
    return {**json.loads(rows[0][1]), "set": rows[0][0]} if rows else None


def seo_set(archive: Any, commit: int) -> int | None:
    """The set whose ``agg_seo`` rows hold ``commit``'s SEO facts, or None (compute them on demand)."""
    return _set_with(archive, commit, "agg_seo")


def graph_set(archive: Any, commit: int) -> int | None:
    """The set whose ``agg_graph`` rows hold ``commit``'s link targets, or None (walk the anchors)."""
    return _set_with(archive, commit, "agg_graph")


def _set_with(archive: Any, commit: int, table: str) -> int | None:
    """``commit``'s stored set when it has rows in ``table`` (a table added after version 5: a set built
    before it, or an archive without the table, has none)."""
    totals = stored(archive, commit)
    if totals is None or not archive.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]
    ):
        return None
    found = archive.execute(f"SELECT 1 FROM {table} WHERE set_id = ? LIMIT 1", [totals["set"]])
    return int(totals["set"]) if found else None


# Link targets as stored in agg_graph: URL ids in ascending order, each a little-endian signed 32-bit integer.
_PACKED = "i"
_PACKED_MAX = 2**31 - 1


def pack_targets(targets: Iterable[int]) -> bytes:
    """URL ids as an ``agg_graph`` blob (ascending, 4 bytes each, little-endian)."""
    packed = array(_PACKED, sorted(targets))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack_targets(blob: bytes) -> array[int]:
    """The URL ids of an ``agg_graph`` blob."""
    ids = array(_PACKED)
    ids.frombytes(blob)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids


def value(archive: Any, commit: int, name: str) -> Any:
    """A digest of ``commit``: stored if the commit has its aggregates, else computed now."""
    totals = stored(archive, commit)
    if totals is not None:
        if name == PER_COMMIT:
            rows = archive.execute("SELECT diff FROM agg_commit WHERE commit_id = ?", [commit])
        else:
            rows = archive.execute(
                "SELECT value FROM agg_value WHERE set_id = ? AND name = ?", [totals["set"], name]
            )
        if rows and rows[0][0] is not None:
            found = json.loads(rows[0][0])
            return {"commit": commit, **found} if name in NAMING else found
    return digest.DIGESTS[name](archive.execute, commit)


# --- writing -------------------------------------------------------------------------------------------


def gc(conn: sqlite3.Connection) -> int:
    """Drop the sets no commit points at any more; how many."""
    unused = [
        r[0] for r in conn.execute("SELECT id FROM agg_set WHERE id NOT IN (SELECT set_id FROM agg_commit)")
    ]
    for table in SET_TABLES:
        conn.executemany(f"DELETE FROM {table} WHERE set_id = ?", [(i,) for i in unused])
    conn.executemany("DELETE FROM agg_set WHERE id = ?", [(i,) for i in unused])
    return len(unused)


def _drop_if_unused(conn: sqlite3.Connection, set_id: int | None) -> None:
    if (
        set_id is not None
        and not conn.execute("SELECT 1 FROM agg_commit WHERE set_id = ? LIMIT 1", (set_id,)).fetchone()
    ):
        for table in SET_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE set_id = ?", (set_id,))
        conn.execute("DELETE FROM agg_set WHERE id = ?", (set_id,))


def _forget(conn: sqlite3.Connection, commit: int) -> int | None:
    """Delete ``commit``'s agg_commit row; the set it pointed at (kept, maybe unused now)."""
    row = conn.execute("DELETE FROM agg_commit WHERE commit_id = ? RETURNING set_id", (commit,)).fetchone()
    return None if row is None else int(row[0])


def drop(conn: sqlite3.Connection, commit: int) -> None:
    """Forget ``commit``'s aggregates, and its set unless another commit shares it."""
    _drop_if_unused(conn, _forget(conn, commit))


def changing(conn: sqlite3.Connection, commit: int) -> None:
    """``commit``'s content is about to change: drop its aggregates and its children's diff against it."""
    drop(conn, commit)
    conn.execute(
        "UPDATE agg_commit SET diff = NULL WHERE commit_id IN (SELECT id FROM commits WHERE parent_id = ?)",
        (commit,),
    )


def _set_digest(conn: sqlite3.Connection, totals: dict[str, Any]) -> bytes:
    """What names a built set: the version, its totals and every row of it in key order."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"v{AGGREGATE_VERSION}|{json.dumps(totals, sort_keys=True)}".encode())
    for table, columns in SET_TABLES.items():
        h.update(f"|{table}".encode())
        order = ", ".join(columns)
        rows = conn.execute(f"SELECT {order} FROM {_BUILD_PREFIX}{table} ORDER BY {order}")
        while chunk := rows.fetchmany(10_000):  # repr of a chunk: one call per chunk, not per row
            h.update(repr(chunk).encode("utf-8", "surrogatepass"))
    return h.digest()


def build(conn: sqlite3.Connection, commit: int, now: str) -> float:
    """Compute and store every aggregate of ``commit`` (inside the caller's transaction); returns seconds.

    The rows are built in temporary tables (set_id 0) and stored only when no stored set has the same
    content; otherwise the commit points at that set.
    """
    started = last = time.perf_counter()
    cpu = time.process_time()
    steps: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal last
        now_ = time.perf_counter()
        steps[name] = round(now_ - last, 3)
        last = now_

    c = int(commit)
    # the set it had stays until the new one is known: a rebuild that comes out the same reuses it
    previous = _forget(conn, c)
    b = _BUILD_PREFIX
    for statement in _SET_SCHEMA:
        conn.execute(statement.format(s=b))
    conn.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {b}agg_url_url ON build_agg_url (set_id, url_id)")
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS agg_rank (url_id INTEGER PRIMARY KEY, rank INTEGER NOT NULL)"
    )
    for table in ("agg_rank", *(f"build_{t}" for t in SET_TABLES)):
        conn.execute(f"DELETE FROM temp.{table}")
    conn.execute("INSERT INTO temp.agg_rank SELECT id, ROW_NUMBER() OVER (ORDER BY url) FROM url")
    try:
        conn.execute(
            f"INSERT INTO {b}agg_url (set_id, rank, url_id) SELECT 0, k.rank, cp.url_id "
            f"FROM commit_page cp JOIN temp.agg_rank k ON k.url_id = cp.url_id WHERE cp.commit_id = {c}"
        )
        lap("ranks")
        conn.execute(f"UPDATE {b}agg_url SET isolated = 1 WHERE url_id IN ({isolated(c)})")
        lap("isolated")
        conn.execute(
            f"INSERT INTO {b}agg_edge (set_id, src_rank, dst_rank, anchors) SELECT 0, s.rank, d.rank, g.anchors "
            f"FROM ({graph_edges(c)}) g CROSS JOIN {b}agg_url s ON s.set_id = 0 AND s.url_id = g.src "
            f"CROSS JOIN {b}agg_url d ON d.set_id = 0 AND d.url_id = g.dst ORDER BY 2, 3"
        )  # appends in key order
        lap("edges")
        node_ranks = [
            r[0] for r in conn.execute(f"SELECT n.rank FROM {b}agg_url n WHERE n.url_id IN ({nodes(c)})")
        ]
        # Graph edges reach every node pair the components need: nodes are strict pages, a subset of the
        # loose targets, and self-links do not connect anything.
        comp = components(node_ranks, conn.execute(f"SELECT src_rank, dst_rank FROM {b}agg_edge"))
        conn.executemany(
            f"UPDATE {b}agg_url SET comp = ? WHERE set_id = 0 AND rank = ?",
            [(root, rank) for rank, root in comp.items()],
        )
        sizes: dict[int, int] = {}
        for root in comp.values():
            sizes[root] = sizes.get(root, 0) + 1
        conn.executemany(f"INSERT INTO {b}agg_cluster (set_id, comp, size) VALUES (0, ?, ?)", sizes.items())
        lap("components")
        conn.execute(
            f"INSERT INTO {b}agg_external (set_id, rank, dest_url_id, referrers, anchors) "
            f"SELECT 0, k.rank, e.dest_id, e.referrers, e.anchors FROM ({external(c)}) e "
            "CROSS JOIN temp.agg_rank k ON k.url_id = e.dest_id"
        )
        lap("external")
        conn.execute(
            f"INSERT INTO {b}agg_broken (set_id, src_rank, ordinal, anchor_id, dest_url_id, status) "
            f"SELECT 0, s.rank, b.ordinal, b.anchor_id, b.dest_id, b.status FROM ({broken(c)}) b "
            f"CROSS JOIN {b}agg_url s ON s.set_id = 0 AND s.url_id = b.src_id"
        )
        lap("broken")
        facts, targets = seo.facts_and_targets(lambda sql, params: conn.execute(sql, params), c)
        conn.executemany(
            f"INSERT INTO {b}agg_seo VALUES (0, ?, {', '.join('?' * len(seo.FACT_COLUMNS))})",
            ((url_id, *(fact[k] for k in seo.FACT_COLUMNS)) for url_id, fact in sorted(facts.items())),
        )
        del facts
        lap("seo")
        # ids beyond 32 bits (never seen): no rows, and the checks walk the anchors as for an older set
        if all(max(found, default=0) <= _PACKED_MAX for found in targets.values()):
            conn.executemany(
                f"INSERT INTO {b}agg_graph VALUES (0, ?, ?)",
                ((url_id, pack_targets(found)) for url_id, found in sorted(targets.items())),
            )
        del targets
        lap("graph")

        def run(sql: str, params: Any) -> list[Any]:
            return conn.execute(sql, params).fetchall()

        diff = None
        for name, make in digest.DIGESTS.items():
            made_value = make(run, c)
            if name in NAMING:
                made_value = {k: v for k, v in made_value.items() if k != "commit"}
            made = json.dumps(made_value)
            if name == PER_COMMIT:
                diff = made
            else:
                conn.execute(f"INSERT INTO {b}agg_value (set_id, name, value) VALUES (0, ?, ?)", (name, made))
            lap(name)

        def count(table: str, where: str = "") -> int:
            return int(conn.execute(f"SELECT COUNT(*) FROM {b}{table} {where}").fetchone()[0])

        totals = {
            "graph_edges": count("agg_edge"),
            "external": count("agg_external"),
            "broken": count("agg_broken"),
            "isolated": count("agg_url", "WHERE isolated = 1"),
        }
        key = _set_digest(conn, totals)
        found = conn.execute("SELECT id FROM agg_set WHERE digest = ?", (key,)).fetchone()
        if found is not None:
            set_id = int(found[0])
        else:
            cur = conn.execute(
                "INSERT INTO agg_set (digest, totals) VALUES (?, ?)", (key, json.dumps(totals))
            )
            set_id = int(cur.lastrowid or 0)
            for table, columns in SET_TABLES.items():
                names = ", ".join(columns)
                conn.execute(
                    f"INSERT INTO {table} (set_id, {names}) SELECT {set_id}, {names} FROM {b}{table} "
                    f"ORDER BY {names}"
                )
        lap("store")
    finally:
        for table in ("agg_rank", *(f"build_{t}" for t in SET_TABLES)):
            conn.execute(f"DELETE FROM temp.{table}")
    seconds = time.perf_counter() - started
    conn.execute(
        "INSERT INTO agg_commit (commit_id, version, set_id, built_at, seconds, build, diff) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            c,
            AGGREGATE_VERSION,
            set_id,
            now,
            round(seconds, 3),
            # a build worth looking into keeps its steps; a quick one is not worth 200 bytes per commit
            json.dumps(
                {
                    "cpu_seconds": round(time.process_time() - cpu, 3),
                    **({"steps": steps} if seconds > 1 else {}),
                }
            ),
            diff,
        ),
    )
    _drop_if_unused(conn, previous)
    return seconds
