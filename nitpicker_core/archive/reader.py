"""ArchiveReader: read-only access to one archive (a .nitpicker file through the cache, or a live stub)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from nitpicker_core.errors import ArchiveError, watch_signals
from nitpicker_core.layout import stub_path
from nitpicker_core.records import BOOLEAN_METADATA
from nitpicker_core.serp import pixel_width

from . import counts, files, manifest, referrers, times
from .lock import live_pid
from .models import PROMOTED, PROMOTED_NAMES, promoted_from_extra_sql

# a page state that is gone: an error status, or fetched (not skipped, not a placeholder) with no status
GONE_SQL = "{s}.status >= 400 OR ({s}.status IS NULL AND {s}.scraped = 1 AND {s}.is_skipped = 0)"

_PAGE_SELECT = (
    "SELECT u.url, ps.*, d.url AS redirect_dest, {first} AS first_seen_at, {last} AS last_crawled_at, "
    'cp."order" FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id '
    "LEFT JOIN url d ON d.id = ps.redirect_dest_url_id WHERE cp.commit_id = ?"
)
_FLAGS = ("scraped", "is_target", "is_external", "is_skipped", *sorted(BOOLEAN_METADATA))
_JSON_COLUMNS = ("headers", "extra")
_HIDDEN = ("id", "url_id", "redirect_dest_url_id")


def open_archive(path: Path | str) -> ArchiveReader:
    return ArchiveReader(Path(path))


def locate(path: Path) -> tuple[Path, str]:
    """What to read for ``path`` and whether it is a ``"file"`` or a ``"dir"``, by ``stat`` alone.

    A FIFO, a device or a socket is refused before anything could block opening it (``files.archive_kind``);
    a missing .nitpicker whose first crawl is still running is read from its stub.
    """
    try:
        return path, files.archive_kind(path)
    except ArchiveError:
        stub = stub_path(path)
        if os.path.lexists(path) or not os.path.isdir(stub):
            raise
        return stub, "dir"


class ArchiveReader:
    """Opens read-only and never writes; ``live_pid`` is the writer's pid when reading a live stub."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self.live_pid: int | None = None
        self.resolved_fallback = False
        self._cache_key: str | None = None
        self._private_dir: Path | None = None
        path, kind = locate(path)
        if kind == "dir":
            uri = self._open_stub(path)
        else:
            self._cache_key, directory = files.acquire_unpacked(path, self.name)
            uri = f"file:{directory / files.DB_NAME}?mode=ro&immutable=1"
        try:
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            watch_signals(self._conn)  # Ctrl-C and SIGTERM stop a long statement
            # a title's or description's width in a search result, for the page list to show, sort and filter
            self._conn.create_function("serp_px", 2, pixel_width, deterministic=True)
            self.format_version = self._check()
            self._present_promoted()
            self._page_select = _PAGE_SELECT.format(
                first=times.iso_sql(self, "cp.first_seen_at"), last=times.iso_sql(self, "cp.last_crawled_at")
            )
            self._columns = self._schema()
        except BaseException:
            self._release()
            raise

    def _open_stub(self, stub: Path) -> str:
        db = stub / files.DB_NAME
        if not db.is_file():
            raise ArchiveError(f"{self.name} is a directory but not a nitpicker working directory")
        self.live_pid = live_pid(stub)
        if self.live_pid is not None:
            return f"file:{db}?mode=ro"  # the writer keeps -wal/-shm alive; share them, never create them
        wal = stub / (files.DB_NAME + "-wal")
        if wal.exists():
            # A crashed writer left committed pages in its WAL; read a private copy so the stub stays as is.
            self._private_dir = Path(tempfile.mkdtemp(prefix="nitpicker-stub-"))
            shutil.copyfile(db, self._private_dir / files.DB_NAME)
            shutil.copyfile(wal, self._private_dir / (files.DB_NAME + "-wal"))
            return f"file:{self._private_dir / files.DB_NAME}?mode=ro"
        return f"file:{db}?mode=ro&immutable=1"

    def _check(self) -> int:
        try:
            row = self._conn.execute("SELECT value FROM info WHERE key = 'format_version'").fetchone()
            files.check_schema(self._conn, self.name)
        except sqlite3.DatabaseError as exc:
            detail = (
                "no info table" if "no such table" in str(exc) else "archive.db is not an SQLite database"
            )
            raise ArchiveError(f"{self.name} is not a nitpicker archive ({detail})") from None
        return files.check_version(row[0] if row else None, self.name)

    def _present_promoted(self) -> None:
        """Give an archive older than format 5 the promoted columns of page_state, read from its extra.

        A temporary view named page_state shadows the table for this connection alone (the archive stays
        as it is: readers never migrate); SQLite flattens it into every query, so lookups by id still use
        the table's key, and a key of extra is parsed only where a query reads its column.
        """
        have = {row[1] for row in self._conn.execute("PRAGMA main.table_info(page_state)")}
        if not have or PROMOTED_NAMES[0] in have:
            return
        self._conn.execute(
            f"CREATE TEMP VIEW page_state AS SELECT *, {promoted_from_extra_sql()} FROM main.page_state"
        )

    def _schema(self) -> dict[str, set[str]]:
        """Columns of the tables whose shape changed between formats (an older archive lacks some)."""
        out = {}
        for table in ("page_state", "anchor", "heading", "commit_resource", "commit_page"):
            out[table] = {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}
        return out

    def has_column(self, table: str, column: str) -> bool:
        """Whether this archive's ``table`` has ``column`` (older formats lack what newer ones added)."""
        return column in self._columns.get(table, set())

    @property
    def has_headings(self) -> bool:
        """Whether headings were kept (format 2 on); an older archive has no heading table."""
        return bool(self._columns.get("heading"))

    def _release(self) -> None:
        if self._cache_key is not None:
            files.release_unpacked(self._cache_key)
            self._cache_key = None
        if self._private_dir is not None:
            shutil.rmtree(self._private_dir, ignore_errors=True)
            self._private_dir = None

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]
        self._release()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- generic --------------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Abort the statement another thread runs on this reader now, if any (it fails as "interrupted");
        safe from any thread."""
        with contextlib.suppress(sqlite3.ProgrammingError):  # closed meanwhile: nothing runs
            self._conn.interrupt()

    def map_for_scans(self, size: int = 1 << 31) -> None:
        """Read the database through a memory map of up to ``size`` bytes from now on, for a pass that scans
        most tables several times (a commit's checks): SQLite reads its pages straight from the OS's cache
        instead of copying each into its own, a tenth less CPU for the checks of 100,000 pages (measured).
        Not the default: a long-lived reader (the viewer) would count every page it ever touched as its own.
        """
        self._conn.execute(f"PRAGMA mmap_size = {int(size)}")

    def execute(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        return self._conn.execute(sql, params).fetchall()

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Write ``rows`` into one of this connection's temporary tables (the archive itself is read-only)."""
        if not sql.split("INTO", 1)[-1].strip().startswith("temp."):
            raise ValueError("a reader writes only into temp tables")
        self._conn.executemany(sql, rows)

    def stream(self, sql: str, params: Any = ()) -> Iterator[sqlite3.Row]:
        """The rows of ``sql`` as the caller takes them (the read model's paths that never hold a commit)."""
        yield from self._conn.execute(sql, params)

    def tuples(self, sql: str, params: Any = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` as plain tuples, as the caller takes them (millions of rows: no Row objects)."""
        cursor = self._conn.cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)  # the cursor itself: no generator step per row

    def info(self) -> dict[str, Any]:
        return {r[0]: json.loads(r[1]) for r in self._conn.execute("SELECT key, value FROM info")}

    def commits(self) -> list[dict[str, Any]]:
        """Every commit, newest first, with its analyzer runs (the manifest's analyzers) and whole counts."""
        rows = self._conn.execute("SELECT * FROM commits ORDER BY id DESC").fetchall()
        runs: dict[int, list[dict[str, Any]]] = {}
        for run in self._conn.execute("SELECT * FROM analyzer_run ORDER BY analyzer"):
            runs.setdefault(run["commit_id"], []).append(dict(run))
        commits = []
        shared = manifest.shared_values(self._conn)
        for row in rows:
            commit = _decode(dict(row), ("options", "stats", "environment"))
            for column in manifest.COLUMNS:  # stored once per distinct value (manifest.share)
                commit[column] = manifest.resolve(commit[column], shared)
            commit["analyzers"] = manifest.analyzer_manifest(runs.get(commit["id"], []))
            stats = commit.get("stats") or {}
            if commit["status"] != "complete" or "runs" not in stats:
                # live or interrupted, or finished before stats counted the whole commit: count its rows now
                commit["stats"] = {**stats, **counts.commit_counts(self._conn, commit["id"])}
            commits.append(commit)
        return commits

    def head(self) -> int | None:
        row = self._conn.execute("SELECT commit_id FROM ref WHERE name = 'HEAD'").fetchone()
        return row[0] if row else None

    def resolve(self, commit: int | str | None = None) -> int:
        """A commit id from an id, "HEAD" or None; without a complete commit, the newest one (flagged)."""
        self.resolved_fallback = False
        if commit is None or (isinstance(commit, str) and commit.upper() == "HEAD"):
            head = self.head()
            if head is not None:
                return head
            row = self._conn.execute("SELECT MAX(id) FROM commits").fetchone()
            if row[0] is None:
                raise ArchiveError(f"{self.name} has no commits")
            self.resolved_fallback = True
            return int(row[0])
        try:
            wanted = int(commit)
        except (TypeError, ValueError):
            raise ArchiveError(f"{self.name} has no commit {commit!r}") from None
        if (
            not 1 <= wanted < 2**63
        ):  # ids are positive SQLite integers; a bigger int would overflow the binding
            raise ArchiveError(f"{self.name} has no commit {wanted}")
        if self._conn.execute("SELECT 1 FROM commits WHERE id = ?", (wanted,)).fetchone() is None:
            raise ArchiveError(f"{self.name} has no commit {wanted}")
        return wanted

    # --- pages ----------------------------------------------------------------------------------------

    def pages(
        self,
        commit: int | str | None = None,
        *,
        scraped: bool | None = None,
        external: bool | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Iterator[dict[str, Any]]:
        sql, params = self._page_select, [self.resolve(commit)]
        if scraped is not None:
            sql, params = sql + " AND ps.scraped = ?", [*params, int(scraped)]
        if external is not None:
            sql, params = sql + " AND ps.is_external = ?", [*params, int(external)]
        sql += ' ORDER BY cp."order" IS NULL, cp."order", u.url'
        if limit is not None:
            sql, params = sql + " LIMIT ? OFFSET ?", [*params, limit, offset]
        for row in self._conn.execute(sql, params):
            yield _page(row)

    def page(self, url: str, commit: int | str | None = None) -> dict[str, Any] | None:
        row = self._conn.execute(self._page_select + " AND u.url = ?", (self.resolve(commit), url)).fetchone()
        return _page(row) if row else None

    def _state_id(self, url: str, commit: int | str | None) -> int | None:
        row = self._conn.execute(
            "SELECT cp.state_id FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "WHERE cp.commit_id = ? AND u.url = ?",
            (self.resolve(commit), url),
        ).fetchone()
        return row[0] if row else None

    def anchors(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        """Anchors in order: href (absolute, normalised), fragment, text, and raw_href, line, col (None when
        the archive is older than format 2 or the position is not known)."""
        extra = (
            "a.raw_href, a.line, a.col"
            if self.has_column("anchor", "raw_href")
            else "NULL AS raw_href, NULL AS line, NULL AS col"
        )
        return self._children(
            url,
            commit,
            f"SELECT a.ordinal, t.url AS href, a.fragment, a.text, {extra} "
            "FROM anchor a JOIN url t ON t.id = a.target_url_id "
            "WHERE a.state_id = ? ORDER BY a.ordinal",
        )

    def headings(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        """The page's h1–h6 in document order (ordinal, level, text); [] in archives older than format 2."""
        if not self.has_headings:
            return []
        return self._children(
            url, commit, "SELECT ordinal, level, text FROM heading WHERE state_id = ? ORDER BY ordinal"
        )

    def images(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        return self._children(url, commit, "SELECT * FROM image WHERE state_id = ? ORDER BY ordinal")

    def jsonld(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        rows = self._children(url, commit, "SELECT * FROM jsonld WHERE state_id = ? ORDER BY ordinal")
        return [_decode(r, ("parsed", "types")) for r in rows]

    def tags(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        return self._children(url, commit, "SELECT * FROM tag WHERE state_id = ? ORDER BY ordinal")

    def page_errors(self, url: str, commit: int | str | None = None) -> list[dict[str, Any]]:
        return self._children(url, commit, "SELECT * FROM page_error WHERE state_id = ? ORDER BY ordinal")

    def page_resources(self, url: str, commit: int | str | None = None) -> list[str]:
        rows = self._children(
            url,
            commit,
            "SELECT r.url FROM page_resource p JOIN url r ON r.id = p.resource_url_id "
            "WHERE p.state_id = ? ORDER BY p.id",
        )
        return [r["url"] for r in rows]

    def _children(self, url: str, commit: int | str | None, sql: str) -> list[dict[str, Any]]:
        state = self._state_id(url, commit)
        if state is None:
            return []
        rows = [dict(r) for r in self._conn.execute(sql, (state,))]
        for r in rows:
            r.pop("id", None)
            r.pop("state_id", None)
        return rows

    def html(self, url: str, commit: int | str | None = None) -> str | None:
        row = self._conn.execute(
            "SELECT b.codec, b.data FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "JOIN page_state ps ON ps.id = cp.state_id JOIN blob b ON b.sha256 = ps.html_sha256 "
            "WHERE cp.commit_id = ? AND u.url = ?",
            (self.resolve(commit), url),
        ).fetchone()
        if row is None:
            return None
        data = zlib.decompress(row[1]) if row[0] == "zlib" else bytes(row[1])
        return data.decode("utf-8")

    def source(self, url: str, commit: int | str | None = None) -> str | None:
        """The HTML the server sent for ``url`` (None when not kept: older archives, non-HTML, too large)."""
        page = self.page(url, commit)
        sha = page.get("source_sha256") if page else None
        return self.html_by_sha256(sha) if sha else None

    def html_by_sha256(self, sha256: str) -> str | None:
        """A stored HTML body by its content hash (what analyzer workers read: no URL or commit needed)."""
        row = self._conn.execute("SELECT codec, data FROM blob WHERE sha256 = ?", (sha256,)).fetchone()
        if row is None:
            return None
        data = zlib.decompress(row[1]) if row[0] == "zlib" else bytes(row[1])
        return data.decode("utf-8")

    def row_hashes(self, commit: int | str | None = None) -> dict[str, str]:
        rows = self._conn.execute(
            "SELECT u.url, ps.hash FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ?",
            (self.resolve(commit),),
        )
        return {r[0]: r[1] for r in rows}

    # --- resources, analysis, errors ------------------------------------------------------------------

    def resources(self, commit: int | str | None = None) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            "SELECT u.url, rs.hash, rs.status, rs.status_text, rs.content_type, rs.content_length, "
            "rs.compression, rs.cdn, rs.headers, rs.is_external, "
            f"{referrers.count_sql(self)} AS referrers "
            "FROM commit_resource cr JOIN url u ON u.id = cr.url_id JOIN resource_state rs ON rs.id = cr.state_id "
            "WHERE cr.commit_id = ? ORDER BY u.url",
            (self.resolve(commit),),
        )
        return [_decode(dict(r), ("headers",)) for r in rows]

    def analysis(self, commit: int | str | None = None, analyzer: str | None = None) -> list[dict[str, Any]]:
        sql = (
            'SELECT u.url, c.analyzer, c."column", c.value, c.note FROM analysis_cell c '
            "JOIN url u ON u.id = c.url_id WHERE c.commit_id = ?"
        )
        return self._by_analyzer(sql, commit, analyzer, "c", ("value",))

    def violations(
        self, commit: int | str | None = None, analyzer: str | None = None
    ) -> list[dict[str, Any]]:
        sql = (
            "SELECT u.url, v.analyzer, v.severity, v.rule, v.message, v.location, v.snippet, v.help_url "
            "FROM violation v "
            "JOIN url u ON u.id = v.url_id WHERE v.commit_id = ?"
        )
        return self._by_analyzer(sql, commit, analyzer, "v", ())

    def analyzer_errors(
        self, commit: int | str | None = None, analyzer: str | None = None
    ) -> list[dict[str, Any]]:
        sql = (
            "SELECT u.url, e.analyzer, e.message FROM analyzer_error e "
            "LEFT JOIN url u ON u.id = e.url_id WHERE e.commit_id = ?"
        )
        return self._by_analyzer(sql, commit, analyzer, "e", ())

    def analyzer_runs(self, commit: int | str | None = None) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            "SELECT * FROM analyzer_run WHERE commit_id = ? ORDER BY analyzer", (self.resolve(commit),)
        )
        return [_decode(dict(r), ("settings",)) for r in rows]

    def _by_analyzer(
        self, sql: str, commit: int | str | None, analyzer: str | None, alias: str, json_cols: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        params: list[Any] = [self.resolve(commit)]
        if analyzer is not None:
            sql, params = sql + f" AND {alias}.analyzer = ?", [*params, analyzer]
        rows = self._conn.execute(sql + f" ORDER BY u.url, {alias}.rowid", params)
        return [_decode(dict(r), json_cols) for r in rows]

    def crawl_errors(self, commit: int | str | None = None) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            f"SELECT u.url, e.kind, e.message, e.phase, {times.iso_sql(self, 'e.at')} AS at "
            "FROM crawl_error e JOIN url u ON u.id = e.url_id "
            "WHERE e.commit_id = ? ORDER BY e.id",
            (self.resolve(commit),),
        )
        return [dict(r) for r in rows]

    def inventory_runs(self, commit: int | str | None = None) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            "SELECT sha256, counts, at FROM inventory_run WHERE commit_id = ? ORDER BY id",
            (self.resolve(commit),),
        )
        return [_decode(dict(r), ("counts",)) for r in rows]

    # --- generations ----------------------------------------------------------------------------------

    def diff(self, a: int | str | None, b: int | str | None) -> dict[str, Any]:
        """URLs added, removed and modified from commit ``a`` to ``b`` (set arithmetic on state ids)."""
        ca, cb = self.resolve(a), self.resolve(b)
        pages: dict[str, Any] = dict(self._diff_sets("commit_page", ca, cb))
        pages["resources"] = self._diff_sets("commit_resource", ca, cb)
        return pages

    def _diff_sets(self, table: str, a: int, b: int) -> dict[str, list[str]]:
        # A state id stands for a unique hash, so equal ids mean equal content.
        def urls(sql: str, params: tuple[int, ...]) -> list[str]:
            return [
                r[0]
                for r in self._conn.execute(
                    f"SELECT u.url FROM url u WHERE u.id IN ({sql}) ORDER BY u.url", params
                )
            ]

        return {
            "added": urls(
                f"SELECT url_id FROM {table} WHERE commit_id = ? EXCEPT "
                f"SELECT url_id FROM {table} WHERE commit_id = ?",
                (b, a),
            ),
            "removed": urls(
                f"SELECT url_id FROM {table} WHERE commit_id = ? EXCEPT "
                f"SELECT url_id FROM {table} WHERE commit_id = ?",
                (a, b),
            ),
            "modified": urls(
                f"SELECT x.url_id FROM {table} x JOIN {table} y ON y.url_id = x.url_id "
                f"AND y.commit_id = ? WHERE x.commit_id = ? AND x.state_id <> y.state_id",
                (b, a),
            ),
        }

    def gone(self, a: int | str | None, b: int | str | None) -> list[str]:
        """Pages of both commits that answered at ``a`` (2xx/3xx) and are gone at ``b``: an error status
        (404, 410, 5xx) or a failed fetch. A deleted page: "gone", not "modified"."""
        ca, cb = self.resolve(a), self.resolve(b)
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT u.url FROM commit_page x JOIN commit_page y ON y.url_id = x.url_id AND y.commit_id = ? "
                "JOIN page_state sx ON sx.id = x.state_id JOIN page_state sy ON sy.id = y.state_id "
                "JOIN url u ON u.id = x.url_id WHERE x.commit_id = ? AND x.state_id <> y.state_id "
                f"AND sx.status BETWEEN 200 AND 399 AND ({GONE_SQL.format(s='sy')}) ORDER BY u.url",
                (cb, ca),
            )
        ]

    def changed_fields(self, url: str, a: int | str | None, b: int | str | None) -> dict[str, list[Any]]:
        """Which page fields differ for ``url`` between two commits: {field: [old, new]}."""
        old, new = self.page(url, a) or {}, self.page(url, b) or {}
        skip = {"hash", "first_seen_at", "last_crawled_at", "order"}
        keys = (old.keys() | new.keys()) - skip
        return {k: [old.get(k), new.get(k)] for k in sorted(keys) if old.get(k) != new.get(k)}


def _decode(row: dict[str, Any], json_cols: tuple[str, ...]) -> dict[str, Any]:
    for col in json_cols:
        if row.get(col) is not None:
            row[col] = json.loads(row[col])
    return row


def _page(row: sqlite3.Row) -> dict[str, Any]:
    page = dict(row)
    for key in _HIDDEN:
        page.pop(key, None)
    for key in _FLAGS:
        if page.get(key) is not None:
            page[key] = bool(page[key])
    page.setdefault("source_sha256", None)  # an archive older than format 2 did not keep the sent HTML
    page = _decode(page, _JSON_COLUMNS)
    # A page's extra as it always read: the promoted columns (format 5) go back in, keys sorted as stored.
    extra = dict(page.get("extra") or {})
    for name, kind in PROMOTED:
        value = page.pop(name, None)
        if value is not None:
            extra[name] = bool(value) if kind == "flag" else json.loads(value) if kind == "json" else value
    page["extra"] = dict(sorted(extra.items()))
    return page
