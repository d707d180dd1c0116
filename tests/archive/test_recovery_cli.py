"""`nitpicker crawl` killed at the very end (real SIGKILL, real Chromium): `crawl --resume` writes the file."""

from __future__ import annotations

import signal
from pathlib import Path

from support import run_cli_subprocess

from nitpicker_core.archive import aggregates, open_archive, stub_path

KILL = "NITPICKER_TEST_KILL_AT"  # test-only hook, see nitpicker_core/archive/files.py


def _crawl(cli, tmp_path: Path, *args: str, kill_at: str | None = None):
    """The crawl; one the hook kills runs in a process of its own (the kill is what the test is about)."""
    run = run_cli_subprocess if kill_at else cli
    env = {KILL: kill_at} if kill_at else {}
    return run("crawl", "--parallels", "2", "--no-image", *args, cwd=tmp_path, env=env, timeout=300)


def _settled(target: Path) -> None:
    """Nothing a killed writer left remains: no working directory, no temp file, and the file opens."""
    assert target.is_file() and not stub_path(target).exists()
    assert list(target.parent.glob(f".{target.name}.*.tmp")) == []


def test_first_crawl_killed_after_finish_is_written_by_resume(cli, site, tmp_path):
    target = tmp_path / "site.nitpicker"
    killed = _crawl(cli, tmp_path, "--single", f"{site}/about", "-o", str(target), kill_at="after-finish")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not target.exists() and stub_path(target).is_dir()
    resumed = cli("crawl", "--resume", str(target), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "nothing left to crawl" in resumed.stderr and len(resumed.stderr.strip().splitlines()) == 1
    _settled(target)
    with open_archive(target) as r:
        assert r.head() == 1 and r.commits()[0]["status"] == "complete"
        assert r.page(f"{site}/about")["title"] and aggregates.stored(r, 1) is not None


def test_first_crawl_killed_while_writing_leaves_no_temp_file_after_resume(cli, site, tmp_path):
    target = tmp_path / "site.nitpicker"
    killed = _crawl(cli, tmp_path, "--single", f"{site}/about", "-o", str(target), kill_at="during-write")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not target.exists() and len(list(tmp_path.glob(".site.nitpicker.*.tmp"))) == 1
    resumed = cli("crawl", "--resume", str(target), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    _settled(target)
    with open_archive(target) as r:
        assert r.head() == 1 and r.page(f"{site}/about")["status"] == 200


def test_update_killed_after_finish_becomes_visible_after_resume(cli, site, tmp_path):
    target = tmp_path / "site.nitpicker"
    first = _crawl(cli, tmp_path, "--single", f"{site}/about", "-o", str(target))
    assert first.returncode == 0, first.stderr
    killed = _crawl(cli, tmp_path, "--update", str(target), kill_at="after-finish")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with open_archive(target) as r:
        assert r.head() == 1  # the finished update is not in the file yet
    resumed = cli("crawl", "--resume", str(target), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    _settled(target)
    with open_archive(target) as r:
        assert r.head() == 2 and [c["status"] for c in r.commits()] == ["complete", "complete"]
