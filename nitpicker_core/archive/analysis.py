"""Analyzer results per commit: cells, violations, errors, runs, the done-set that makes re-runs resumable,
and the results cache keyed by (sha256 of the HTML read, analyzer, version, settings hash) across commits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from nitpicker_core.types import Cell, PageReport, Violation

from .hashing import canonical_json, sha256_text, to_json
from .models import AnalysisCache
from .store import Store, utc_now

AnalysisItem = tuple[str, Mapping[str, Any], Iterable[Violation]]
CacheKey = tuple[str, str, str]  # analyzer, version, settings hash
_VIOLATION_FIELDS = ("severity", "rule", "message", "location", "snippet", "help_url")


def settings_hash(settings: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of an analyzer's settings: part of the results cache key."""
    return sha256_text(canonical_json(dict(settings)))


def cache_key(
    analyzer: str, version: str, settings: Mapping[str, Any], html_kind: str = "rendered"
) -> CacheKey:
    """The key of ``analyzer``'s cached results for pages read as ``html_kind`` (the row's sha is that HTML's).

    Results made on the server's HTML get their own key: an analyzer may say in its findings which HTML
    it read, so a source page and a rendered page with the same bytes must not share a result. Results
    made on rendered HTML keep the key they always had.
    """
    digest = settings_hash(settings)
    return analyzer, str(version), digest if html_kind == "rendered" else f"{digest}+{html_kind}"


def _cell_rows(cells: Mapping[str, Any]) -> list[list[Any]]:
    rows = []
    for column, cell in cells.items():
        value, note = (cell.value, cell.note) if isinstance(cell, Cell) else (cell, "")
        rows.append([column, value, note or ""])
    return rows


class Analyses:
    """Analyzer runs, their results and the cache of results by HTML, over the writer's store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def _ensure_analysis_schema(self) -> None:
        """Archives written before the cache existed get its table and column when analyzers first run."""
        conn = self._store.conn
        columns = {r[1] for r in conn.execute("PRAGMA table_info(analyzer_run)")}
        if "settings_hash" not in columns:
            conn.execute("ALTER TABLE analyzer_run ADD COLUMN settings_hash TEXT NOT NULL DEFAULT ''")
        self._ensure_error_traceback()
        with self._store.db.bind_ctx([AnalysisCache]):
            self._store.db.create_tables([AnalysisCache], safe=True)

    def _ensure_error_traceback(self) -> None:
        """An error row keeps the traceback behind its message (NULL in rows of archives written before)."""
        columns = {r[1] for r in self._store.conn.execute("PRAGMA table_info(analyzer_error)")}
        if "traceback" not in columns:
            self._store.conn.execute("ALTER TABLE analyzer_error ADD COLUMN traceback TEXT")

    def begin_analysis(
        self, commit_id: int, analyzer: str, version: str, settings: Mapping[str, Any], keep: bool = True
    ) -> bool:
        """Record a run of ``analyzer`` on ``commit_id``; returns True when earlier results were kept.

        Results of an earlier run on the same commit stay (and its done-set resumes) only when that run
        had the same version and settings and ``keep`` is true; otherwise they are dropped first.
        """
        digest = settings_hash(settings)
        with self._store.db.atomic():
            self._ensure_analysis_schema()
            before = self._store.conn.execute(
                "SELECT version, settings_hash FROM analyzer_run WHERE commit_id = ? AND analyzer = ?",
                (commit_id, analyzer),
            ).fetchone()
            kept = keep and before is not None and (before[0], before[1]) == (str(version), digest)
            if not kept:
                for table in ("analysis_cell", "violation", "analyzer_error", "analyzer_done"):
                    self._store.conn.execute(
                        f"DELETE FROM {table} WHERE commit_id = ? AND analyzer = ?", (commit_id, analyzer)
                    )
            self._store.conn.execute(
                "INSERT INTO analyzer_run (commit_id, analyzer, version, settings, settings_hash, started_at, "
                "finished_at, status) VALUES (?, ?, ?, ?, ?, ?, NULL, 'running') "
                "ON CONFLICT (commit_id, analyzer) DO UPDATE SET version = excluded.version, "
                "settings = excluded.settings, settings_hash = excluded.settings_hash, "
                "started_at = excluded.started_at, finished_at = NULL, status = 'running'",
                (commit_id, analyzer, str(version), to_json(dict(settings)), digest, utc_now()),
            )
        self._store.touch()
        return kept

    def put_analysis(
        self,
        commit_id: int,
        analyzer: str,
        url: str,
        cells: Mapping[str, Any],
        violations: Iterable[Violation] = (),
    ) -> None:
        self.put_analyses(commit_id, analyzer, [(url, cells, violations)])

    def put_analyses(self, commit_id: int, analyzer: str, items: Iterable[AnalysisItem]) -> None:
        """Replace ``analyzer``'s cells, violations and error of each URL, and mark the URL done."""
        batch = [(url, dict(cells), list(violations)) for url, cells, violations in items]
        if not batch:
            return
        with self._store.db.atomic():
            ids = self._store.url_ids(url for url, _, _ in batch)
            keys = [(commit_id, ids[url], analyzer) for url, _, _ in batch]
            for table in ("analysis_cell", "violation", "analyzer_error"):
                self._store.conn.executemany(
                    f"DELETE FROM {table} WHERE commit_id = ? AND url_id = ? AND analyzer = ?", keys
                )
            cell_rows = []
            violation_rows = []
            for url, cells, violations in batch:
                for column, value, note in _cell_rows(cells):
                    cell_rows.append((commit_id, ids[url], analyzer, column, to_json(value), note))
                for v in violations:
                    violation_rows.append(
                        (
                            commit_id,
                            ids[url],
                            analyzer,
                            v.severity,
                            v.rule,
                            v.message,
                            v.location or "",
                            v.snippet or "",
                            v.help_url or "",
                        )
                    )
            self._store.conn.executemany(
                'INSERT INTO analysis_cell (commit_id, url_id, analyzer, "column", value, note) '
                "VALUES (?, ?, ?, ?, ?, ?)",
                cell_rows,
            )
            self._store.conn.executemany(
                "INSERT INTO violation (commit_id, url_id, analyzer, severity, rule, message, location, snippet, "
                "help_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                violation_rows,
            )
            self._store.conn.executemany(
                "INSERT OR IGNORE INTO analyzer_done (commit_id, analyzer, url_id) VALUES (?, ?, ?)",
                [(c, a, u) for c, u, a in keys],
            )
        self._store.touch()

    def put_analyzer_error(
        self, commit_id: int, analyzer: str, url: str | None, message: str, traceback: str | None = None
    ) -> None:
        """Record an error (with the traceback behind it, if any); a URL's error replaces that URL's earlier
        error for the analyzer (retries)."""
        with self._store.db.atomic():
            self._ensure_error_traceback()
            url_id = self._store.url_id(url) if url is not None else None
            if url_id is not None:
                self._store.conn.execute(
                    "DELETE FROM analyzer_error WHERE commit_id = ? AND url_id = ? AND analyzer = ?",
                    (commit_id, url_id, analyzer),
                )
            self._store.conn.execute(
                "INSERT INTO analyzer_error (commit_id, url_id, analyzer, message, traceback) VALUES (?, ?, ?, ?, ?)",
                (commit_id, url_id, analyzer, message, traceback or None),
            )
        self._store.touch()

    def finish_analysis(self, commit_id: int, analyzer: str, status: str = "complete") -> None:
        with self._store.db.atomic():
            self._store.conn.execute(
                "UPDATE analyzer_run SET status = ?, finished_at = ? WHERE commit_id = ? AND analyzer = ?",
                (status, utc_now(), commit_id, analyzer),
            )
        self._store.touch()

    def done_urls(self, commit_id: int, analyzer: str) -> set[str]:
        rows = self._store.conn.execute(
            "SELECT u.url FROM analyzer_done d JOIN url u ON u.id = d.url_id WHERE d.commit_id = ? AND d.analyzer = ?",
            (commit_id, analyzer),
        )
        return {r[0] for r in rows}

    def violation_count(self, commit_id: int, analyzer: str) -> int:
        row = self._store.conn.execute(
            "SELECT COUNT(*) FROM violation WHERE commit_id = ? AND analyzer = ?", (commit_id, analyzer)
        ).fetchone()
        return int(row[0])

    def skipped_count(self, commit_id: int, analyzer: str) -> int:
        """Pages on which ``analyzer`` left a check out (its ``skipped`` findings, see ``PageReport.skipped``)."""
        row = self._store.conn.execute(
            "SELECT COUNT(DISTINCT url_id) FROM violation WHERE commit_id = ? AND analyzer = ? "
            "AND rule = 'skipped'",
            (commit_id, analyzer),
        ).fetchone()
        return int(row[0])

    # --- results cache --------------------------------------------------------------------------------

    def cached_report(self, html_sha256: str, key: CacheKey) -> PageReport | None:
        """The stored each_page result for the HTML read (its sha256) and ``key`` (see ``cache_key``), if any."""
        row = self._store.conn.execute(
            "SELECT cells, violations FROM analysis_cache WHERE html_sha256 = ? AND analyzer = ? AND version = ? "
            "AND settings_hash = ?",
            (html_sha256, *key),
        ).fetchone()
        if row is None:
            return None
        cells = {column: Cell(value, note) if note else value for column, value, note in json.loads(row[0])}
        violations, skipped = [], {}
        for v in json.loads(row[1]):
            if (
                "skipped" in v
            ):  # a check the analyzer did not make (PageReport.skipped), kept in the same list
                skipped[v["skipped"]] = v.get("reason", "")
            else:
                violations.append(Violation(**{f: v.get(f, "") for f in _VIOLATION_FIELDS}))
        return PageReport(cells, violations, skipped)

    def put_cached_reports(self, key: CacheKey, items: Iterable[tuple[str, PageReport]]) -> None:
        """Store each_page results by the sha256 of the HTML read (before each_url's findings are merged in)."""
        now = utc_now()
        rows = [
            (
                sha,
                *key,
                to_json(_cell_rows(report.cells)),
                to_json(
                    [{f: getattr(v, f) or "" for f in _VIOLATION_FIELDS} for v in report.violations]
                    + [{"skipped": what, "reason": why} for what, why in report.skipped.items()]
                ),
                now,
            )
            for sha, report in items
        ]
        if not rows:
            return
        with self._store.db.atomic():
            self._store.conn.executemany(
                "INSERT OR REPLACE INTO analysis_cache (html_sha256, analyzer, version, settings_hash, cells, "
                "violations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        self._store.touch()

    def gc_analysis_cache(self) -> int:
        """Delete cached results whose HTML no page state holds any more; returns the rows deleted."""
        kept = "SELECT html_sha256 FROM page_state WHERE html_sha256 IS NOT NULL"
        if "source_sha256" in {r[1] for r in self._store.conn.execute("PRAGMA table_info(page_state)")}:
            kept += " UNION SELECT source_sha256 FROM page_state WHERE source_sha256 IS NOT NULL"
        with self._store.db.atomic():
            self._ensure_analysis_schema()
            deleted = self._store.conn.execute(
                f"DELETE FROM analysis_cache WHERE html_sha256 NOT IN ({kept})"
            ).rowcount
        self._store.touch()
        return int(deleted)
