"""Link aggregates stored as shared sets: identical commits point at one set, gc drops it with its last user."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, aggregates, open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

PAGES = 12
# The stored link answers and digests: each must read the same from the set as computed on demand.
QUERIES = (
    ("link-graph", {"limit": 1000}),
    ("external-links", {}),
    ("isolated-pages", {}),
    ("isolated-clusters", {"singletons": True}),
    ("broken-links", {"group": "anchor"}),
    ("summary", {}),
    ("diff", {}),
    ("pages", {}),
)


def _set_bytes(target: Path) -> int:
    """Bytes in use by the set tables (every agg_* table but the per-commit agg_commit)."""
    with open_archive(target) as reader:
        rows = reader.execute("SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name")
    return sum(size for name, size in rows if name.startswith("agg_") and not name.startswith("agg_commit"))


def _commit(writer: ArchiveWriter, variant: str = "") -> int:
    commit = writer.begin_commit()
    # page 3 of a changed commit gets new text: its state differs, its links do not
    writer.put_pages(commit, [page(i, PAGES + 2, variant=variant if i == 3 else "") for i in range(PAGES)])
    writer.finish_commit(commit)
    return commit


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    """Commits 1 and 2 identical, 3 with one page changed and one page more; set bytes after 1 and after 2."""
    target = tmp_path_factory.mktemp("sets") / "sets.nitpicker"
    sizes = []
    for variant in ("", "", " changed"):
        with ArchiveWriter.open(target) as writer:
            commit = _commit(writer, variant)
            if variant:
                writer.put_page(commit, page(PAGES, PAGES + 2))
                writer.finish_commit(commit)
            writer.write()
        sizes.append(_set_bytes(target))
    return target, sizes


@pytest.fixture(scope="module")
def registry():
    return query_registry(make_plugin_manager())


def _answers(registry, target: Path, commit: int, monkeypatch, stored: bool) -> dict:
    monkeypatch.setenv(aggregates.ENV_SWITCH, "1" if stored else "0")
    with open_archive(target) as reader:
        assert (aggregates.stored(reader, commit) is not None) == stored
        return {name: run_query(registry, reader, name, params, commit) for name, params in QUERIES}


def _sets(target: Path) -> tuple[dict[int, int], int]:
    with open_archive(target) as reader:
        by_commit = {r[0]: r[1] for r in reader.execute("SELECT commit_id, set_id FROM agg_commit")}
        return by_commit, reader.execute("SELECT COUNT(*) FROM agg_set")[0][0]


def _rows_of_set(target: Path, set_id: int) -> int:
    with open_archive(target) as reader:
        return sum(
            reader.execute(f"SELECT COUNT(*) FROM {t} WHERE set_id = ?", [set_id])[0][0]
            for t in aggregates.SET_TABLES
        )


def test_identical_commits_share_one_set(archive, registry, monkeypatch) -> None:
    target, sizes = archive
    by_commit, count = _sets(target)
    assert by_commit[1] == by_commit[2] != by_commit[3] and count == 2
    assert sizes[1] == sizes[0] < sizes[2]  # the second commit stored no aggregate row, the third did
    for commit in (1, 2, 3):
        stored = _answers(registry, target, commit, monkeypatch, stored=True)
        assert stored == _answers(registry, target, commit, monkeypatch, stored=False), commit
    # the diff against the parent is the commit's own, though 1 and 2 share everything else
    diffs = {c: _answers(registry, target, c, monkeypatch, stored=True)["diff"] for c in (1, 2, 3)}
    assert diffs[1]["base"] is None and (diffs[2]["base"], diffs[2]["modified"]) == (1, [])
    # p12 was linked but not crawled before (a placeholder row): crawled now, it is modified, not added
    assert (diffs[3]["base"], diffs[3]["modified"]) == (
        2,
        [f"https://example.org/p/{PAGES}", "https://example.org/p/3"],
    )
    graphs = [
        _answers(registry, target, c, monkeypatch, stored=True)["link-graph"]["total"] for c in (1, 2, 3)
    ]
    assert graphs == [PAGES * 6, PAGES * 6, (PAGES + 1) * 6]  # six links a page, p12's own in commit 3


def test_gc_drops_a_set_with_its_last_commit(archive, tmp_path, registry, monkeypatch) -> None:
    target = tmp_path / "gc.nitpicker"
    shutil.copy(archive[0], target)
    shared = _sets(target)[0][1]
    with ArchiveWriter.open(target) as writer:
        writer.drop_commits([1])
        writer.write()
    assert _sets(target) == ({2: shared, 3: _sets(archive[0])[0][3]}, 2) and _rows_of_set(target, shared) > 0
    with ArchiveWriter.open(target) as writer:
        pruned = writer.drop_commits([2])  # commit 3 is re-parented onto nothing: its diff is built again
        writer.write()
    assert pruned.removed["aggregate_sets"] == 1 and _rows_of_set(target, shared) == 0
    assert _sets(target)[1] == 1
    answers = _answers(registry, target, 3, monkeypatch, stored=True)
    assert answers == _answers(registry, target, 3, monkeypatch, stored=False)
    assert answers["diff"]["base"] is None


def test_rebuilding_one_sharer_keeps_the_set_of_the_other(archive, tmp_path, registry, monkeypatch) -> None:
    target = tmp_path / "resume.nitpicker"
    shutil.copy(archive[0], target)
    before = _sets(target)
    with ArchiveWriter.open(target) as writer:
        writer.resume_commit(2)  # what --append does: commit 2's aggregates go, commit 1's stay
        assert writer._conn.execute("SELECT commit_id FROM agg_commit ORDER BY 1").fetchall() == [(1,), (3,)]
        assert writer._conn.execute("SELECT diff FROM agg_commit WHERE commit_id = 3").fetchone()[0] is None
        writer.finish_commit(2)  # the same content again: the same set
        writer.write()
    assert _sets(target) == before
    for commit in (1, 2, 3):
        stored = _answers(registry, target, commit, monkeypatch, stored=True)
        assert stored == _answers(registry, target, commit, monkeypatch, stored=False), commit


# Version 4 stored one copy per commit, keyed by commit_id (two of its tables are enough to stand for it).
_VERSION4 = (
    "CREATE TABLE agg_commit (commit_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, built_at TEXT NOT NULL, "
    "seconds REAL NOT NULL, totals TEXT NOT NULL)",
    "CREATE TABLE agg_edge (commit_id INTEGER NOT NULL, src_rank INTEGER NOT NULL, dst_rank INTEGER NOT NULL, "
    "anchors INTEGER NOT NULL, PRIMARY KEY (commit_id, src_rank, dst_rank)) WITHOUT ROWID",
    "INSERT INTO agg_commit VALUES (1, 4, '2026-01-01T00:00:00Z', 0.1, '{\"graph_edges\": 0}')",
)


def test_an_archive_of_version_4_answers_on_demand_and_migrates(
    archive, tmp_path, registry, monkeypatch
) -> None:
    target = tmp_path / "old.nitpicker"
    shutil.copy(archive[0], target)
    expected = _answers(registry, target, 1, monkeypatch, stored=False)
    with ArchiveWriter.open(target) as writer:
        for table in aggregates.TABLES:
            writer._conn.execute(f"DROP TABLE {table}")
        for statement in _VERSION4:
            writer._conn.execute(statement)
        writer.write()
    assert _answers(registry, target, 1, monkeypatch, stored=False) == expected  # a reader computes on demand
    monkeypatch.setenv(aggregates.ENV_SWITCH, "1")
    with open_archive(target) as reader:
        assert aggregates.stored(reader, 1) is None  # version 4: outdated, never read
    with ArchiveWriter.open(target) as writer:  # a writer drops the old layout and stores sets again
        writer.build_aggregates(1)
        writer.write()
    assert _answers(registry, target, 1, monkeypatch, stored=True) == expected
    assert _sets(target)[1] == 1
