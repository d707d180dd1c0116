"""Garbage collection: drop commits (re-parenting their children), then whatever no remaining commit reaches."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nitpicker_core.errors import UsageError

from . import aggregates, findings_store, manifest, page_facts, screenshots
from .analysis import Analyses
from .store import Store, utc_now

# Columns that tie a row to a commit in any table, the core's and plugins' stores alike (findings deltas
# name their base commit too): a dropped commit takes all of them along.
COMMIT_COLUMNS = ("commit_id", "base_id")


@dataclass
class Pruned:
    """What a gc removed (or would remove, with ``dry_run``) and the bytes it freed."""

    dropped: list[int] = field(default_factory=list)
    reparented: dict[int, int | None] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    bytes_freed: int = 0
    dry_run: bool = False


def plan_drop(
    commits: Sequence[Mapping[str, Any]],
    head: int | None,
    *,
    keep: int | None = None,
    drop: Iterable[str] = (),
    name: str = "archive",
) -> list[int]:
    """The commit ids to drop: all but the ``keep`` newest complete ones (and newer unfinished), or ``drop``."""
    ids = {int(c["id"]) for c in commits}
    if keep is not None:
        if keep < 1:
            raise UsageError("--keep must be 1 or more: gc never drops every commit")
        complete = sorted((int(c["id"]) for c in commits if c["status"] == "complete"), reverse=True)
        kept = set(complete[:keep]) | {i for i in ids if head is None or i > head}
        return sorted(ids - kept)
    wanted: list[int] = []
    for raw in drop:
        text = str(raw).strip()
        commit = head if text.upper() == "HEAD" else int(text) if text.isdigit() else None
        if commit is None or commit not in ids:
            raise UsageError(f"{name} has no commit {text!r} (see nitpicker log)")
        if commit == head:
            raise UsageError(f"cannot drop commit {commit}: it is HEAD, the newest complete commit")
        wanted.append(commit)
    return sorted(set(wanted))


def surviving_parents(parents: Mapping[int, int | None], dropped: set[int]) -> dict[int, int | None]:
    """New parent of every surviving commit whose parent is dropped: its nearest surviving ancestor."""
    moved: dict[int, int | None] = {}
    for commit, parent in parents.items():
        if commit in dropped or parent not in dropped:
            continue
        ancestor: int | None = parent
        seen: set[int] = set()
        while ancestor is not None and ancestor in dropped and ancestor not in seen:
            seen.add(ancestor)
            ancestor = parents.get(ancestor)
        moved[commit] = ancestor
    return moved


class Prune:
    """``drop_commits`` and ``gc`` (whatever no commit reaches) over the writer's store."""

    def __init__(self, store: Store, analyses: Analyses, count_finished: Callable[[], None]) -> None:
        # count_finished: inside the transaction that drops commits, so a writer killed before the file was
        # written leaves work the next writer recognises as unwritten and writes (issue 33)
        self._store, self._analyses, self._count_finished = store, analyses, count_finished

    def gc(self, vacuum: bool = False) -> dict[str, int]:
        """Delete page/resource states, their children, blobs and cached analyzer results no commit reaches."""
        counts = {}
        with self._store.db.atomic():
            conn = self._store.conn
            counts["page_states"] = conn.execute(
                "DELETE FROM page_state WHERE id NOT IN (SELECT state_id FROM commit_page)"
            ).rowcount
            counts["resource_states"] = conn.execute(
                "DELETE FROM resource_state WHERE id NOT IN (SELECT state_id FROM commit_resource)"
            ).rowcount
            counts["blobs"] = conn.execute(
                "DELETE FROM blob WHERE sha256 NOT IN "
                "(SELECT html_sha256 FROM page_state WHERE html_sha256 IS NOT NULL "
                "UNION SELECT source_sha256 FROM page_state WHERE source_sha256 IS NOT NULL)"
            ).rowcount
            counts["finding_sets"] = findings_store.gc(conn)
            counts["fact_sets"] = page_facts.gc(conn)
            counts["screenshots"] = screenshots.gc(conn)
            counts["aggregate_sets"] = aggregates.gc(conn)
            counts["manifests"] = manifest.gc(conn)
        # cached analyzer results of HTML that no page state holds any more can never be reused
        counts["analysis_cache"] = self._analyses.gc_analysis_cache()
        if vacuum:
            self._store.db.execute_sql("VACUUM")
        self._store.touch()
        return counts

    def used_bytes(self) -> int:
        """Bytes the database's tables and indexes hold (what a VACUUM would keep)."""
        row = self._store.conn.execute("SELECT COALESCE(SUM(pgsize - unused), 0) FROM dbstat").fetchone()
        return int(row[0])

    def _commit_tables(self) -> list[tuple[str, str]]:
        conn = self._store.conn
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found: list[tuple[str, str]] = []
        for table in tables:
            if table == "commits":
                continue
            columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            found.extend((table, col) for col in COMMIT_COLUMNS if col in columns)
        return found

    def drop_commits(self, dropped: Sequence[int], *, dry_run: bool = False) -> Pruned:
        """Drop ``dropped`` commits and every row of theirs, re-parent their children, collect the rest.

        With ``dry_run`` everything happens in a transaction that is rolled back: the counts are real,
        ``bytes_freed`` is the drop in bytes in use (the file shrinks by about that once vacuumed).
        """
        result = Pruned(dropped=sorted(dropped), dry_run=dry_run)
        conn = self._store.conn
        was_dirty = self._store.dirty
        before = self.used_bytes()
        with self._store.db.atomic() as txn:
            parents = {c: p for c, p in conn.execute("SELECT id, parent_id FROM commits")}
            result.dropped = [c for c in result.dropped if c in parents]  # only what this archive still holds
            result.reparented = surviving_parents(parents, set(result.dropped))
            conn.executemany(
                "UPDATE commits SET parent_id = ? WHERE id = ?",
                [(p, c) for c, p in result.reparented.items()],
            )
            marks = ",".join("?" * len(result.dropped))
            rows = 0
            for table, column in self._commit_tables():
                sql = f"DELETE FROM {table} WHERE {column} IN ({marks})"
                rows += conn.execute(sql, result.dropped).rowcount
            sql = f"DELETE FROM commits WHERE id IN ({marks})"
            result.removed["commits"] = conn.execute(sql, result.dropped).rowcount
            result.removed["commit_rows"] = rows
            # a re-parented commit's stored diff against its parent now compares with another commit
            for child in result.reparented:
                status = conn.execute("SELECT status FROM commits WHERE id = ?", (child,)).fetchone()
                if status and status[0] == "complete" and child not in self._store.unaggregated:
                    aggregates.build(conn, child, utc_now())
            result.removed.update(self.gc())
            result.bytes_freed = before - self.used_bytes()
            if dry_run:
                txn.rollback()
            elif any(result.removed.values()):
                self._count_finished()
        if dry_run or not any(result.removed.values()):
            self._store.dirty = was_dirty  # nothing changed: the file need not be written again
        return result

    def vacuum(self) -> None:
        """Give the pages gc freed back, so the archive file shrinks (outside any transaction)."""
        self._store.db.execute_sql("VACUUM")
        self._store.touch()
