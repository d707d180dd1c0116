"""Analyzer results per commit: cells, violations, errors, runs and the done-set that makes re-runs resumable."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nitpicker_core.types import Cell, Violation

from .hashing import to_json
from .store import Store, utc_now

AnalysisItem = tuple[str, Mapping[str, Any], Iterable[Violation]]


class AnalysisMixin(Store):
    def begin_analysis(self, commit_id: int, analyzer: str, version: str, settings: Mapping[str, Any]) -> None:
        with self._db.atomic():
            self._conn.execute(
                "INSERT INTO analyzer_run (commit_id, analyzer, version, settings, started_at, finished_at, status) "
                "VALUES (?, ?, ?, ?, ?, NULL, 'running') ON CONFLICT (commit_id, analyzer) DO UPDATE SET "
                "version = excluded.version, settings = excluded.settings, started_at = excluded.started_at, "
                "finished_at = NULL, status = 'running'",
                (commit_id, analyzer, str(version), to_json(dict(settings)), utc_now()),
            )
        self._touch()

    def put_analysis(
        self, commit_id: int, analyzer: str, url: str, cells: Mapping[str, Any], violations: Iterable[Violation] = ()
    ) -> None:
        self.put_analyses(commit_id, analyzer, [(url, cells, violations)])

    def put_analyses(self, commit_id: int, analyzer: str, items: Iterable[AnalysisItem]) -> None:
        """Replace ``analyzer``'s cells, violations and error of each URL, and mark the URL done."""
        batch = [(url, dict(cells), list(violations)) for url, cells, violations in items]
        with self._db.atomic():
            ids = self._url_ids(url for url, _, _ in batch)
            keys = [(commit_id, ids[url], analyzer) for url, _, _ in batch]
            for table in ("analysis_cell", "violation", "analyzer_error"):
                self._conn.executemany(
                    f"DELETE FROM {table} WHERE commit_id = ? AND url_id = ? AND analyzer = ?", keys
                )
            cell_rows = []
            violation_rows = []
            for url, cells, violations in batch:
                for column, cell in cells.items():
                    value, note = (cell.value, cell.note) if isinstance(cell, Cell) else (cell, "")
                    cell_rows.append((commit_id, ids[url], analyzer, column, to_json(value), note or ""))
                for v in violations:
                    violation_rows.append(
                        (commit_id, ids[url], analyzer, v.severity, v.rule, v.message, v.location or "",
                         v.snippet or "", v.help_url or "")
                    )
            self._conn.executemany(
                'INSERT INTO analysis_cell (commit_id, url_id, analyzer, "column", value, note) '
                "VALUES (?, ?, ?, ?, ?, ?)", cell_rows,
            )
            self._conn.executemany(
                "INSERT INTO violation (commit_id, url_id, analyzer, severity, rule, message, location, snippet, "
                "help_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", violation_rows,
            )
            self._conn.executemany(
                "INSERT OR IGNORE INTO analyzer_done (commit_id, analyzer, url_id) VALUES (?, ?, ?)",
                [(c, a, u) for c, u, a in keys],
            )
        self._touch()

    def put_analyzer_error(self, commit_id: int, analyzer: str, url: str | None, message: str) -> None:
        with self._db.atomic():
            url_id = self._url_id(url) if url is not None else None
            self._conn.execute(
                "INSERT INTO analyzer_error (commit_id, url_id, analyzer, message) VALUES (?, ?, ?, ?)",
                (commit_id, url_id, analyzer, message),
            )
        self._touch()

    def finish_analysis(self, commit_id: int, analyzer: str, status: str = "complete") -> None:
        with self._db.atomic():
            self._conn.execute(
                "UPDATE analyzer_run SET status = ?, finished_at = ? WHERE commit_id = ? AND analyzer = ?",
                (status, utc_now(), commit_id, analyzer),
            )
        self._touch()

    def done_urls(self, commit_id: int, analyzer: str) -> set[str]:
        rows = self._conn.execute(
            "SELECT u.url FROM analyzer_done d JOIN url u ON u.id = d.url_id WHERE d.commit_id = ? AND d.analyzer = ?",
            (commit_id, analyzer),
        )
        return {r[0] for r in rows}
