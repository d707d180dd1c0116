"""`nitpicker gc`: drop commits, re-parent their children, collect what no commit reaches; bad input changes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, open_archive


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def three(tmp_path: Path) -> Path:
    """Three complete commits of a 20-page site; each later one changes five pages (new states and blobs)."""
    target = tmp_path / "three.nitpicker"
    writer = ArchiveWriter.open(target)
    for generation in range(3):
        commit = writer.begin_commit()
        variant = f" generation {generation}"
        writer.put_pages(commit, [page(i, 20, variant=variant if i < 5 else "") for i in range(20)])
        writer.finish_commit(commit)
    writer.write()
    writer.close()
    return target


def _state(archive: Path) -> dict:
    with open_archive(archive) as reader:
        one = lambda sql: reader.execute(sql)[0][0]  # noqa: E731
        return {
            "commits": {c["id"]: c["parent_id"] for c in reader.commits()},
            "head": reader.head(),
            "page_states": one("SELECT COUNT(*) FROM page_state WHERE scraped = 1"),
            "blobs": one("SELECT COUNT(*) FROM blob"),
            "orphans": one(
                "SELECT COUNT(*) FROM commit_page WHERE commit_id NOT IN (SELECT id FROM commits)"
            ),
            "aggregated": sorted(r[0] for r in reader.execute("SELECT commit_id FROM agg_commit")),
        }


def test_keep_one_drops_older_commits_and_their_content(three: Path, cli) -> None:
    assert _state(three)["page_states"] == 30  # 20 + 5 + 5
    size = three.stat().st_size
    result = cli("gc", str(three), "--keep", "1")
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("dropped commits: 1, 2; commit 3 now follows nothing; removed 2 commits")
    assert "10 page states" in line and "10 blobs" in line
    after = _state(three)
    assert after == {
        "commits": {3: None},
        "head": 3,
        "page_states": 20,
        "blobs": 20,
        "orphans": 0,
        "aggregated": [3],
    }
    freed = size - three.stat().st_size
    assert freed > 0 and f"freed {freed} bytes" in line
    with open_archive(three) as reader:  # the survivor reads as it did: 20 pages, the newest variant
        assert len(list(reader.pages(3, scraped=True))) == 20
        assert "generation 2" in reader.html("https://example.org/p/0", 3)


def test_drop_a_middle_commit_reparents_its_child(three: Path, cli) -> None:
    result = cli("gc", str(three), "--drop", "2")
    assert result.returncode == 0, result.stderr
    assert "commit 3 now follows 1" in result.stdout
    after = _state(three)
    assert after["commits"] == {1: None, 3: 1} and after["page_states"] == 25
    with open_archive(three) as reader:  # the diff of the child is now against its new parent
        assert len(reader.diff(1, 3)["modified"]) == 5


def test_dry_run_counts_the_same_and_changes_nothing(three: Path, cli) -> None:
    before = _digest(three)
    dry = cli("gc", str(three), "--keep", "1", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert _digest(three) == before
    assert not (three.parent / (three.name + ".stub")).exists()
    real = cli("gc", str(three), "--keep", "1", "--json")
    import json

    planned, done = json.loads(dry.stdout), json.loads(real.stdout)
    assert planned["removed"] == done["removed"] and planned["dropped"] == done["dropped"] == [1, 2]
    assert planned["bytes_freed"] > 0 and done["bytes_freed"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--keep", "0"), "--keep must be 1 or more"),
        (("--drop", "7"), "has no commit '7'"),
        (("--drop", "x"), "has no commit 'x'"),
        (("--drop", "3"), "cannot drop commit 3: it is HEAD"),
        (("--drop", "HEAD"), "cannot drop commit 3: it is HEAD"),
        (("--keep", "1", "--drop", "1"), "give --keep or --drop, not both"),
    ],
)
def test_bad_input_is_one_line_and_leaves_the_archive_alone(three: Path, cli, args, message) -> None:
    before = _digest(three)
    result = cli("gc", str(three), *args)
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert _digest(three) == before
    assert not (three.parent / (three.name + ".stub")).exists()


def test_refuses_while_a_crawl_writes(three: Path, cli) -> None:
    before = _digest(three)
    writer = ArchiveWriter.open(three)  # this process holds the archive's lock, as a running crawl does
    try:
        result = cli("gc", str(three), "--keep", "1")
    finally:
        writer.close()
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "locked" in result.stderr or "being written" in result.stderr
    assert _digest(three) == before
    assert _state(three)["commits"] == {1: None, 2: 1, 3: 2}


def test_not_an_archive(tmp_path: Path, cli) -> None:
    bogus = tmp_path / "bogus.nitpicker"
    bogus.write_text("not a tar")
    result = cli("gc", str(bogus), "--keep", "1")
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert bogus.read_text() == "not a tar"
    missing = cli("gc", str(tmp_path / "missing.nitpicker"))
    assert missing.returncode == 1 and not (tmp_path / "missing.nitpicker").exists()


def test_an_older_format_archive_logs_and_collects(three: Path, cli) -> None:
    from archive_testdata import downgrade_to_format1

    downgrade_to_format1(three)
    log = cli("log", str(three))
    assert log.returncode == 0 and [line.split()[0] for line in log.stdout.splitlines()] == ["HEAD", "2", "1"]
    result = cli("gc", str(three), "--drop", "1")
    assert result.returncode == 0, result.stderr
    assert "commit 2 now follows nothing" in result.stdout
    assert _state(three)["commits"] == {2: None, 3: 2}


_KILLED_GC = """
import os, signal, sys
from nitpicker_core.archive import ArchiveWriter
writer = ArchiveWriter.open(sys.argv[1])
writer.drop_commits([1])
writer.vacuum()
os.kill(os.getpid(), signal.SIGKILL)  # dead before the file was written, as gc killed in its final write
"""


def test_a_gc_killed_before_its_write_is_finished_by_the_next_command(three: Path, cli) -> None:
    # issue 33: the next gc said "dropped commits: 1 … freed 0 bytes" and left the commit in the file
    import subprocess
    import sys

    before = _digest(three)
    killed = subprocess.run([sys.executable, "-c", _KILLED_GC, str(three)], check=False, timeout=120)
    assert killed.returncode == -9
    assert _digest(three) == before and _state(three)["commits"] == {1: None, 2: 1, 3: 2}
    result = cli("gc", str(three), "--drop", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "finished writing what an interrupted command had left in the working directory"
    assert lines[1].startswith("dropped commits: none; removed 0 commits")
    freed = int(lines[1].split("freed ")[1].split(" bytes")[0])
    assert freed > 0
    assert _state(three)["commits"] == {2: None, 3: 2}
    again = cli("gc", str(three), "--drop", "1")
    assert (again.returncode, again.stderr.strip()) == (
        1,
        "nitpicker: error: three.nitpicker has no commit '1' (see nitpicker log)",
    )
