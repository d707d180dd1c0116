"""The content columns stored with a commit: shared by equal commits, dropped with their last one, empty once
the commit is resumed, back when its checks run again (indexing, the real checks, no crawl)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.indexing import index_commit
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

P = "https://example.org/p/"


def _pages() -> list[Any]:
    pages = [page(i, 4) for i in range(4)]
    pages[2] = replace(pages[2], html=pages[1].html.replace("Page 1", "Page 2"))  # /1's text under /2's title
    return pages


def _columns(target: Path, commit: int) -> dict[str, tuple[Any, ...]]:
    registry = query_registry(make_plugin_manager())
    with open_archive(target) as reader:
        rows = run_query(registry, reader, "pages", {"strict": True}, commit)["items"]
    return {r["url"]: (r["main_words"], r["exact_duplicates"], r["duplicate_group"]) for r in rows}


def _sets(target: Path) -> dict[int, int]:
    with open_archive(target) as reader:
        return {r[0]: r[1] for r in reader.execute("SELECT commit_id, set_id FROM fact_commit")}


def test_equal_commits_share_one_set_which_goes_with_the_last_of_them(tmp_path: Path) -> None:
    target = tmp_path / "facts.nitpicker"
    pm = make_plugin_manager()
    with ArchiveWriter.open(target) as writer:
        for _ in range(2):
            commit = writer.begin_commit()
            writer.put_pages(commit, _pages())
            writer.finish_commit(commit)
            assert index_commit(writer, commit, pm) > 0
        writer.write()
    words = _columns(target, 1)[f"{P}0"][0]
    assert words and words > 500  # ten paragraphs of prose
    expected = {
        f"{P}0": (words, 0, None),
        f"{P}1": (_columns(target, 1)[f"{P}1"][0], 1, f"{P}1"),
        f"{P}2": (_columns(target, 1)[f"{P}1"][0], 1, f"{P}1"),
        f"{P}3": (_columns(target, 1)[f"{P}3"][0], 0, None),
    }
    assert _columns(target, 1) == expected == _columns(target, 2)
    sets = _sets(target)
    assert sets[1] == sets[2]
    with ArchiveWriter.open(target) as writer:
        assert writer.drop_commits([1]).removed["fact_sets"] == 0
        assert writer.drop_commits([2]).removed["fact_sets"] == 1
        writer.write()
    assert _sets(target) == {}


def test_a_resumed_commit_shows_empty_columns_until_its_checks_run_again(tmp_path: Path) -> None:
    target = tmp_path / "resumed.nitpicker"
    pm = make_plugin_manager()
    with ArchiveWriter.open(target) as writer:
        commit = writer.begin_commit()
        writer.put_pages(commit, _pages())
        writer.finish_commit(commit)
        index_commit(writer, commit, pm)
        writer.write()
    stored = _columns(target, commit)
    assert stored[f"{P}2"][1:] == (1, f"{P}1")
    with ArchiveWriter.open(target) as writer:
        writer.resume_commit(commit)
        writer.finish_commit(commit)
        writer.write()
    assert set(_columns(target, commit).values()) == {(None, None, None)}
    with ArchiveWriter.open(target) as writer:
        index_commit(writer, commit, pm)
        writer.write()
    assert _columns(target, commit) == stored
