"""Unwritable destinations fail before any work starts: one line, no absolute path, exit 1, nothing left or lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from archives import SITE, build_archive
from support import read_only, run_cli

from nitpicker_core.archive import ArchiveWriter

NOWHERE = "http://127.0.0.1:9/"  # never fetched: every case fails before the crawl starts


def listing(directory: Path) -> dict[str, bytes | None]:
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in sorted(directory.iterdir())}


def one_line_error(result: subprocess.CompletedProcess[str], tmp_path: Path, *expected: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("nitpicker: error: "), line
    assert "internal error" not in line and "Traceback" not in result.stderr
    assert str(tmp_path) not in line and "/tmp" not in line  # no absolute path
    for text in expected:
        assert text in line, line
    return line


def archive_with_roots(path: Path, interrupted: bool = False) -> Path:
    """A small archive whose crawl options name its root (so --update/--resume can go on from it)."""
    build_archive(path)
    writer = ArchiveWriter.open(path)
    try:
        writer.set_info("options", {"roots": [SITE + "/"], "parallels": 1})
        if interrupted:
            writer.finish_commit(writer.begin_commit(), "interrupted")
        writer.write()
    finally:
        writer.close(remove_stub=True)
    return path


@pytest.fixture
def rodir(tmp_path) -> Path:
    directory = tmp_path / "ro"
    directory.mkdir()
    return directory


def test_crawl_into_a_read_only_directory_is_one_line_and_makes_nothing(rodir, tmp_path):
    with read_only(rodir):
        result = run_cli("crawl", "-o", "ro/new.nitpicker", NOWHERE, cwd=tmp_path)
        one_line_error(result, tmp_path, "cannot write new.nitpicker", "not writable")
        assert listing(rodir) == {}


@pytest.mark.parametrize("mode", ["--resume", "--update", "--retry-failed"])
def test_continuing_an_archive_in_a_read_only_directory_loses_nothing(mode, rodir, tmp_path):
    archive = archive_with_roots(rodir / "site.nitpicker", interrupted=mode == "--resume")
    before = listing(rodir)
    with read_only(rodir):
        result = run_cli("crawl", mode, "ro/site.nitpicker", cwd=tmp_path)
        one_line_error(result, tmp_path, "cannot write site.nitpicker", "not writable")
        assert listing(rodir) == before  # the archive untouched, no stub, no temporary file
    assert archive.exists()


def test_analyze_of_an_archive_in_a_read_only_directory_is_one_line(rodir, tmp_path):
    build_archive(rodir / "site.nitpicker")
    before = listing(rodir)
    with read_only(rodir):
        result = run_cli("analyze", "ro/site.nitpicker", "--plugin", "text", cwd=tmp_path)
        one_line_error(result, tmp_path, "cannot write site.nitpicker", "not writable")
        assert listing(rodir) == before


def test_analyze_of_a_missing_commit_leaves_no_stub(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    before = listing(tmp_path)
    result = run_cli("analyze", "site.nitpicker", "--commit", "99", "--plugin", "text", cwd=tmp_path)
    one_line_error(result, tmp_path, "site.nitpicker has no commit 99")
    assert listing(tmp_path) == before and archive.exists()  # no .stub with a copy of the database


@pytest.mark.parametrize(
    "flag,target,shown",
    [
        ("--xlsx", "ro/out.xlsx", "cannot write ro/out.xlsx"),
        ("--csv", "ro/csv", "cannot write into ro/csv"),
        ("--csv", "ro", "cannot write into ro"),
    ],
)
def test_report_into_a_read_only_directory_fails_before_rendering(flag, target, shown, rodir, tmp_path):
    build_archive(tmp_path / "site.nitpicker")
    (rodir / "out.xlsx").write_bytes(b"an earlier report")
    with read_only(rodir):
        result = run_cli("report", "site.nitpicker", flag, target, "--all", cwd=tmp_path)
        one_line_error(result, tmp_path, shown, "not writable")
        assert listing(rodir) == {"out.xlsx": b"an earlier report"}


def test_xlsx_that_cannot_be_saved_is_one_line_without_tracebacks(tmp_path):
    """Writable at the check, then the save fails (here: the temporary name is taken by a directory)."""
    build_archive(tmp_path / "site.nitpicker")
    (tmp_path / "out.xlsx.partial").mkdir()
    result = run_cli("-s", "report", "site.nitpicker", "--xlsx", "out.xlsx", "--all", cwd=tmp_path)
    one_line_error(result, tmp_path, "cannot write out.xlsx")
    assert "Exception ignored" not in result.stderr and not (tmp_path / "out.xlsx").exists()


@pytest.mark.parametrize(
    "outputs",
    [
        ("-o", "ro/run.nitpicker"),
        ("-o", "run.nitpicker", "--xlsx", "ro/out.xlsx"),
        ("-o", "run.nitpicker", "--csv", "ro/csv"),
        ("-o", "run.nitpicker", "--journal-dir", "ro/runs"),
    ],
)
def test_pipeline_checks_every_output_before_the_crawl(outputs, rodir, tmp_path):
    with read_only(rodir):
        result = run_cli("pipeline", NOWHERE, "--no-analyze", *outputs, cwd=tmp_path)
        one_line_error(result, tmp_path, "not writable")
        assert listing(rodir) == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]  # no archive, stub or journal started
