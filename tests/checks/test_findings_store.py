"""Findings stored with the commit: `issues` and `issue-urls` read them and answer exactly what computing
every check in memory answers; a stored check whose token no longer matches is recomputed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nitpicker_core import Violation
from nitpicker_core.archive import open_archive
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.indexing import index_analysis
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import query_registry
from nitpicker_testing.archives import build_archive, page

SITE = "https://store.test"
# commit → (linked 404s, pages without a title); commit 3 brings back what commit 2 fixed (regressed)
SHAPES = {
    1: (("gone-1", "gone-2"), ("a",)),
    2: (("gone-2", "gone-3"), ("b",)),
    3: (("gone-1", "gone-3"), ("a", "b")),
}
# commit → the markup analyzer's duplicate ids by page
DUPLICATES = {1: {"/a": ["x"], "/b": ["y"]}, 2: {"/b": ["y"], "/c": ["z"]}, 3: {"/a": ["x"], "/c": ["z"]}}


def _pages(commit: int) -> list[Any]:
    gone, untitled = SHAPES[commit]
    children = ["a", "b", "c"]
    found = [page(SITE + "/", title="Home", links=[f"/{c}" for c in [*children, *gone]])]
    found += [page(f"{SITE}/{c}", title="" if c in untitled else c.upper(), links=["/"]) for c in children]
    found += [page(f"{SITE}/{g}", title="Not found", status=404) for g in gone]
    return found


def _analyse(target: Path, commit: int) -> None:
    """A finished markup run on ``commit`` with its duplicate ids (as `nitpicker analyze` would store them)."""
    w = ArchiveWriter.open(target)
    try:
        w.begin_analysis(commit, "markup", "1.0", {})
        for path, ids in DUPLICATES[commit].items():
            w.put_analysis(
                commit,
                "markup",
                SITE + path,
                {},
                [Violation("duplicate-id", f"Duplicate id {i}", snippet=f'<p id="{i}">') for i in ids],
            )
        w.finish_analysis(commit, "markup", "complete")
        index_analysis(w, commit, "markup", make_plugin_manager())  # what `nitpicker analyze` does next
        w.write()
    finally:
        w.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("findings-store") / "site.nitpicker"
    for commit in SHAPES:
        build_archive(target, _pages(commit), roots=[SITE + "/"])
        _analyse(target, commit)
    return target


@pytest.fixture(scope="module")
def registry() -> Any:
    return query_registry(make_plugin_manager())


def _ask(registry: Any, archive: Path, name: str, commit: int, **params: Any) -> Any:
    with open_archive(archive) as reader:
        return run_query(registry, reader, name, params, commit)


def test_commits_store_their_checks_and_counts_against_the_base(archive: Path) -> None:
    with open_archive(archive) as reader:
        stored = {
            (r[0], r[1])
            for r in reader.execute(
                "SELECT c.commit_id, n.check_id FROM check_result c JOIN finding_name n ON n.id = c.check_no"
            )
        }
        deltas = {
            (r[0], r[1], r[2]): tuple(r[3:])
            for r in reader.execute(
                "SELECT d.commit_id, d.base_id, n.check_id, d.new, d.fixed, d.persisting, d.regressed "
                "FROM finding_delta d JOIN finding_name n ON n.id = d.check_no"
            )
        }
    for commit in SHAPES:
        assert {
            (commit, "broken-link"),
            (commit, "title-missing"),
            (commit, "markup/duplicate-id"),
            (commit, "missing-content-security-policy"),
        } <= stored
    # (new, fixed, persisting, regressed)
    assert deltas[(2, 1, "broken-link")] == (1, 1, 1, 0)
    assert deltas[(3, 2, "broken-link")] == (1, 1, 1, 1)  # gone-1 is back: regressed
    assert deltas[(3, 2, "markup/duplicate-id")] == (1, 1, 1, 1)
    assert (1, 0, "broken-link") not in deltas  # a first commit has no base


def test_an_unchanged_commit_points_at_its_parents_finding_sets(tmp_path: Path, registry: Any) -> None:
    # the same findings again: no finding is stored twice, and the counts still say "all persisting"
    target = tmp_path / "same.nitpicker"
    for _ in range(3):
        build_archive(target, _pages(2), roots=[SITE + "/"])
    with open_archive(target) as reader:
        sets = {
            commit: sorted(
                r[0]
                for r in reader.execute(
                    "SELECT set_id FROM check_result WHERE commit_id = ? ORDER BY check_no", [commit]
                )
            )
            for commit in (1, 2, 3)
        }
        copies = reader.execute("SELECT count(*) FROM set_finding")[0][0]
        distinct = reader.execute("SELECT count(*) FROM (SELECT DISTINCT url, detail FROM set_finding)")[0][0]
        assert not reader.execute("SELECT 1 FROM finding_delta WHERE commit_id = 3")
    assert sets[1] == sets[2] == sets[3] and sets[1]
    assert copies == distinct  # each finding once, whatever the number of commits that found it
    rows = {r["id"]: r for r in _ask(registry, target, "issues", 3)["items"]}
    assert (
        rows["broken-link"]["findings"],
        rows["broken-link"]["new"],
        rows["broken-link"]["persisting"],
        rows["broken-link"]["fixed"],
    ) == (2, 0, 2, 0)
    urls = _ask(registry, target, "issue-urls", 3, check="broken-link", state="persisting")
    assert sorted(r["detail"].removeprefix(SITE) for r in urls["items"]) == ["/gone-2", "/gone-3"]


@pytest.mark.parametrize("commit,base", [(2, None), (3, None), (3, "1"), (3, "3"), (1, None)])
def test_stored_answers_equal_computed_answers(
    archive: Path, registry: Any, monkeypatch: pytest.MonkeyPatch, commit: int, base: str | None
) -> None:
    extra = {"base": base} if base else {}
    checks = ("broken-link", "title-missing", "client-error-page", "markup/duplicate-id", "duplicate-id")

    def answers() -> list[Any]:
        found = [_ask(registry, archive, "issues", commit, **extra)]
        for check in checks:
            for state in (None, "new", "persisting", "fixed", "all"):
                chosen = {"state": state} if state else {}
                found.append(_ask(registry, archive, "issue-urls", commit, check=check, **extra, **chosen))
                found += [
                    _ask(
                        registry,
                        archive,
                        "issue-urls",
                        commit,
                        check=check,
                        limit=1,
                        offset=offset,
                        **extra,
                        **chosen,
                    )
                    for offset in range(4)
                ]
        return found

    stored = answers()
    monkeypatch.setenv("NITPICKER_FINDINGS", "0")
    computed = answers()
    assert stored == computed
    rows = {r["id"]: r for r in stored[0]["items"]}
    assert rows["broken-link"]["findings"] == 2
    assert rows["duplicate-id"]["source_counts"]["markup/duplicate-id"]["findings"] == 2


@pytest.mark.parametrize("commit,base", [(2, None), (3, None), (3, "1"), (3, "3"), (1, None)])
def test_one_urls_findings_are_the_whole_lists_rows_of_that_url(
    archive: Path, registry: Any, monkeypatch: pytest.MonkeyPatch, commit: int, base: str | None
) -> None:
    """`issue-urls --url` (a page's issues, read by key from the stored sets) answers the same rows as the
    whole list filtered to the URL, states and regressed flags included, stored or computed."""
    extra = {"base": base} if base else {}
    urls = [SITE + "/", *(f"{SITE}/{p}" for p in ("a", "b", "c", "gone-1", "gone-2", "gone-3", "nowhere"))]
    checks = ("broken-link", "title-missing", "client-error-page", "markup/duplicate-id", "duplicate-id")
    for findings in ("1", "0"):
        monkeypatch.setenv("NITPICKER_FINDINGS", findings)
        for check in checks:
            whole = _ask(registry, archive, "issue-urls", commit, check=check, limit=1000, **extra)["items"]
            for url in urls:
                one = _ask(registry, archive, "issue-urls", commit, check=check, url=url, **extra)["items"]
                assert one == [item for item in whole if item["url"] == url], (findings, check, url)
    assert any(item["regressed"] for item in whole) or commit != 3 or base is not None


def test_a_stored_check_is_read_and_a_stale_one_recomputed(tmp_path: Path, registry: Any) -> None:
    target = tmp_path / "site.nitpicker"
    for commit in (1, 2):
        build_archive(target, _pages(commit), roots=[SITE + "/"])

    def broken_links() -> list[str]:
        answer = _ask(registry, target, "issue-urls", 2, check="broken-link", state="all")
        return sorted(f"{r['state']} {r['detail'].removeprefix(SITE)}" for r in answer["items"])

    assert broken_links() == ["fixed /gone-1", "new /gone-3", "persisting /gone-2"]
    w = ArchiveWriter.open(target)
    try:  # a stored finding removed behind the store's back: the answer follows what is stored
        broken = "commit_id = 2 AND check_no = (SELECT id FROM finding_name WHERE check_id = 'broken-link')"
        w._conn.execute(
            "DELETE FROM set_finding WHERE detail LIKE '%gone-3' AND set_id = "
            f"(SELECT set_id FROM check_result WHERE {broken})"
        )
        w._conn.execute("DELETE FROM finding_delta WHERE commit_id = 2")
        w._conn.execute(f"UPDATE check_result SET findings = 1 WHERE {broken}")
        w._touch()
        w.write()
    finally:
        w.close()
    assert broken_links() == ["fixed /gone-1", "persisting /gone-2"]
    w = ArchiveWriter.open(target)
    try:  # the commit finished again (as a resumed commit would): its stored findings no longer count
        w._conn.execute("UPDATE commits SET finished_at = '2999-01-01T00:00:00Z' WHERE id = 2")
        w._touch()
        w.write()
    finally:
        w.close()
    assert broken_links() == ["fixed /gone-1", "new /gone-3", "persisting /gone-2"]
