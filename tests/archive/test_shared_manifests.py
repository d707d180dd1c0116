"""A commit's options and environment are stored once per distinct value; commits read them back whole."""

from __future__ import annotations

from pathlib import Path

from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, open_archive

OPTIONS = {"roots": ["https://example.org/"], "parallels": 2, "excludes": [], "timeouts": {"dom": 5.0}}
ENVIRONMENT = {
    "nitpicker": "1.0",
    "chromium": "Chromium 150",
    "python": "3.11.7 (CPython)",
    "plugins": {f"plugin-{n}": "nitpicker 1.0" for n in range(20)},
}


def _commit(writer: ArchiveWriter, environment: dict) -> int:
    commit = writer.begin_commit(options=OPTIONS, environment=environment)
    writer.put_pages(commit, [page(i, 3) for i in range(3)])
    writer.finish_commit(commit)
    return commit


def test_identical_manifests_are_stored_once_and_read_whole(tmp_path: Path) -> None:
    target = tmp_path / "m.nitpicker"
    with ArchiveWriter.open(target) as writer:
        for _ in range(3):
            _commit(writer, ENVIRONMENT)
        _commit(writer, {**ENVIRONMENT, "chromium": "Chromium 151"})  # new tools: one more environment
        writer.resume_commit(4, {**ENVIRONMENT, "chromium": "Chromium 152"})  # a resume with other tools
        writer.finish_commit(4)
        writer.write()
    with open_archive(target) as reader:
        commits = {c["id"]: c for c in reader.commits()}
        stored = reader.execute("SELECT COUNT(*), SUM(length(value)) FROM commit_manifest")[0]
        column_bytes = reader.execute("SELECT SUM(length(options) + length(environment)) FROM commits")[0][0]
    assert [commits[c]["options"] for c in (1, 2, 3, 4)] == [OPTIONS] * 4
    assert [commits[c]["environment"] for c in (1, 2, 3)] == [ENVIRONMENT] * 3
    assert commits[4]["environment"]["chromium"] == "Chromium 151"
    assert commits[4]["environment"]["later_runs"][0]["chromium"] == "Chromium 152"
    # the options once, the environment of 1-3 once, commit 4's before and after its resume
    assert stored[0] == 4
    assert column_bytes < 4 * 2 * 20  # each column holds a reference of a few bytes


def test_gc_drops_a_manifest_with_its_last_commit(tmp_path: Path) -> None:
    target = tmp_path / "m.nitpicker"
    with ArchiveWriter.open(target) as writer:
        _commit(writer, {**ENVIRONMENT, "chromium": "Chromium 149"})
        _commit(writer, ENVIRONMENT)
        _commit(writer, ENVIRONMENT)
        first = writer.drop_commits([1])
        second = writer.drop_commits([2])
        writer.write()
    assert (first.removed["manifests"], second.removed["manifests"]) == (1, 0)
    with open_archive(target) as reader:
        assert [c["environment"] for c in reader.commits()] == [ENVIRONMENT]
        assert (
            reader.execute("SELECT COUNT(*) FROM commit_manifest")[0][0] == 2
        )  # the options and environment
