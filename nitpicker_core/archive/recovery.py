"""How a writer knows a killed writer's finished work never reached the file: a count of finished changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .store import Store

# info key counting finished changes (commits and analyzer runs finished), bumped inside the transaction
# that finishes them; the stub's WRITTEN_FILE holds the count the target file was last written with.
FINISHED_KEY = "finished_changes"
WRITTEN_FILE = "written"


class Recovery:
    """Counts finished changes and which of them the file holds, so a killed writer's work is written later."""

    def __init__(self, store: Store, target: Path, stub: Path) -> None:
        self._store, self.target, self.stub = store, target, stub

    def finished_changes(self) -> int:
        row = self._store.conn.execute("SELECT value FROM info WHERE key = ?", (FINISHED_KEY,)).fetchone()
        return int(json.loads(row[0])) if row else 0

    def count_finished(self) -> None:
        """Inside the transaction that finishes something: one more change the file must receive."""
        self._store.conn.execute(
            "INSERT INTO info (key, value) VALUES (?, '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (FINISHED_KEY,),
        )

    def written_mark(self) -> int:
        try:
            return int((self.stub / WRITTEN_FILE).read_text().strip())
        except (OSError, ValueError):
            return 0

    def mark_written(self, finished: int) -> None:
        # Recorded only after the file's rename: a kill before it makes the next writer write again (harmless).
        tmp = self.stub / f"{WRITTEN_FILE}.{os.getpid()}.tmp"
        tmp.write_text(f"{finished}\n")
        os.replace(tmp, self.stub / WRITTEN_FILE)

    def unwritten(self) -> bool:
        """Whether the working directory holds finished work (a finished commit or analysis) the file lacks."""
        if self.finished_changes() > self.written_mark():
            return True
        if self.target.exists():
            return False
        # a stub of a nitpicker that did not count changes yet: any finished commit belongs in a file
        return (
            self._store.conn.execute("SELECT 1 FROM commits WHERE status != 'running' LIMIT 1").fetchone()
            is not None
        )

    def unaggregated_complete(self) -> list[int]:
        """Complete commits without stored aggregates (a kill came between their finish and the build)."""
        return [
            r[0]
            for r in self._store.conn.execute(
                "SELECT id FROM commits WHERE status = 'complete' AND id NOT IN (SELECT commit_id FROM agg_commit) "
                "ORDER BY id"
            )
        ]
