"""A full disk: one clear line naming the archive, exit 1, and the archive as it was (issue 33).

The probe's full disk was reported as "internal error: cannot rollback - no transaction is active": SQLite
ends a transaction itself when a write finds no room, and the writer's own rollback then failed over the
real error. Without root there is no small file system to fill, so two real limits stand in: SQLite's
``max_page_count`` (the very SQLITE_FULL a full disk gives) and the process's RLIMIT_FSIZE (every write past
it fails with EFBIG, SQLite's SQLITE_IOERR_WRITE), in a child process that ignores SIGXFSZ.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.errors import OutOfSpace


def test_a_full_database_is_one_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    first = w.begin_commit(options={"roots": ["https://example.org/"]})
    w.put_pages(first, [page(i, 5) for i in range(5)])
    w.finish_commit(first, "complete", {"pages": 5})
    w.write()
    before = target.read_bytes()
    with open_archive(target) as r:
        rows = list(r.pages(first))
    pages = w._conn.execute("PRAGMA page_count").fetchone()[0]
    w._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
    with pytest.raises(OutOfSpace) as caught:
        second = w.begin_commit(options={"roots": ["https://example.org/"]})
        w.put_pages(second, [page(i, 400) for i in range(400)])
    message = str(caught.value)
    assert message.startswith("no space left on device while writing site.nitpicker; nothing was lost"), (
        message
    )
    w._conn.execute("PRAGMA max_page_count = 1073741823")  # room again
    w.close()
    assert target.read_bytes() == before
    with open_archive(target) as r:
        assert [c["id"] for c in r.commits()] == [first] and list(r.pages(first)) == rows


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _crawl(cwd: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NITPICKER_TAR_CACHE_DIR=str(cwd / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "nitpicker_cli.main", "crawl", "--render", "never", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=None if limit is None else lambda: _limited(limit),
    )


@pytest.mark.parametrize("limit", [20_000, 100_000, 300_000])
def test_a_crawl_out_of_room_says_so_in_one_line(site: str, tmp_path: Path, limit: int) -> None:
    """At the archive's creation (20 kB), its first commit (100 kB) and mid-crawl (300 kB)."""
    done = _crawl(tmp_path, "-o", "a.nitpicker", f"{site}/generations/full-{limit}/", limit=limit)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("nitpicker: error: "), lines
    assert "while writing a.nitpicker; nothing was lost" in lines[0], lines
    assert "internal error" not in done.stderr


def test_an_update_out_of_room_leaves_the_archive_as_it_was(site: str, tmp_path: Path) -> None:
    url = f"{site}/generations/full-update/"
    first = _crawl(tmp_path, "-o", "a.nitpicker", url)
    assert first.returncode == 0, first.stderr
    target = tmp_path / "a.nitpicker"
    before = target.read_bytes()
    for limit in (100_000, target.stat().st_size - 1):  # unpacking it; writing the new file (never smaller)
        done = _crawl(tmp_path, "--update", "a.nitpicker", limit=limit)
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("nitpicker: error: "), done.stderr
        assert "while writing a.nitpicker; nothing was lost" in done.stderr, done.stderr
        assert target.read_bytes() == before
    again = _crawl(tmp_path, "--update", "a.nitpicker")  # room again: the update goes through
    assert again.returncode == 0, again.stderr
    with open_archive(target) as r:
        assert [c["status"] for c in r.commits()][-1] == "complete"
