"""A writer killed at the very end: the next writer (or `crawl --resume`) writes the file, and temp files go.

Kills are real: a writer runs in a subprocess and SIGKILLs itself at the named point (the test-only
NITPICKER_TEST_KILL_AT hook in nitpicker_core/archive/files.py), so the stub is exactly what a kill leaves.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter, aggregates, open_archive, stub_path
from nitpicker_core.records import CrawlErrorRecord, ScrapeResult

HERE = Path(__file__).resolve().parent

# One writer run: open, one commit of pages (a new one, or the latest resumed), finish, write, close.
_WRITER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from archive_testdata import page
from nitpicker_core.archive import ArchiveWriter

target, variant = Path(sys.argv[1]), sys.argv[2]
w = ArchiveWriter.open(target)
c = w.begin_commit(options={"roots": ["https://example.org/"]})
w.put_pages(c, [page(i, 12, variant=variant) for i in range(12)])
w.finish_commit(c, "complete", {"seconds": 1.0})
w.write()
w.close()
"""


def run_writer(target: Path, variant: str = "", kill_at: str | None = None) -> int:
    env = dict(os.environ)
    env.pop("NITPICKER_TEST_KILL_AT", None)
    if kill_at:
        env["NITPICKER_TEST_KILL_AT"] = kill_at
    done = subprocess.run(
        [sys.executable, "-c", _WRITER, str(target), variant, str(HERE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode


def temps(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.glob(f".{target.name}.*.tmp"))


def test_kill_after_finish_of_a_first_crawl_the_next_writer_writes_the_file(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    assert run_writer(target, kill_at="after-finish") == -signal.SIGKILL
    assert not target.exists() and stub_path(target).is_dir()  # the defect's state: complete, never written
    with open_archive(target) as live:  # the stub: complete, but its aggregates were never built
        assert live.commits()[0]["status"] == "complete" and aggregates.stored(live, 1) is None
    w = ArchiveWriter.open(target)
    w.close()
    assert target.exists() and not stub_path(target).exists() and temps(target) == []
    assert w.recovered
    with open_archive(target) as r:
        assert r.head() == 1 and r.commits()[0]["status"] == "complete"
        assert len(list(r.pages(scraped=True))) == 12
        assert aggregates.stored(r, 1) is not None  # built by the recovery, as a finish would have


def test_kill_after_finish_of_an_update_then_readers_see_it_once_a_writer_opened(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    assert run_writer(target) == 0
    assert run_writer(target, variant=" v2", kill_at="after-finish") == -signal.SIGKILL
    with open_archive(target) as r:
        assert r.head() == 1  # the finished update is only in the working directory yet
    w = ArchiveWriter.open(target)
    w.close()
    with open_archive(target) as r:
        assert r.head() == 2 and [c["status"] for c in r.commits()] == ["complete", "complete"]
        assert " v2" in (r.html("https://example.org/p/3") or "")
    assert not stub_path(target).exists() and w.recovered


def test_kill_during_the_write_leaves_a_temp_file_the_next_writer_removes(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    assert run_writer(target) == 0
    before = target.read_bytes()
    assert run_writer(target, variant=" v2", kill_at="during-write") == -signal.SIGKILL
    left = temps(target)
    assert len(left) == 1 and target.read_bytes() == before  # killed between the temp file and its rename
    w = ArchiveWriter.open(target)
    w.close()
    assert temps(target) == [] and not stub_path(target).exists()
    with open_archive(target) as r:
        assert r.head() == 2
    assert w.recovered


def test_kill_during_the_first_write_then_the_next_writer_writes_it(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    assert run_writer(target, kill_at="during-write") == -signal.SIGKILL
    assert not target.exists() and len(temps(target)) == 1
    ArchiveWriter.open(target).close()
    assert temps(target) == [] and not stub_path(target).exists()
    with open_archive(target) as r:
        assert r.head() == 1 and aggregates.stored(r, 1) is not None


def test_temp_files_of_other_targets_are_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    others = [
        tmp_path / ".site.nitpicker.old.nitpicker.k2j4h5g6.tmp",  # temp of site.nitpicker.old.nitpicker
        tmp_path / ".other.nitpicker.k2j4h5g6.tmp",
        tmp_path / "site.nitpicker.k2j4h5g6.tmp",
    ]
    mine = tmp_path / ".site.nitpicker.k2j4h5g6.tmp"
    for path in [*others, mine]:
        path.write_bytes(b"partial")
    ArchiveWriter.open(target).close()
    assert all(p.exists() for p in others) and not mine.exists()


def test_a_written_stub_is_not_written_again(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, [page(i, 5) for i in range(5)])
    w.finish_commit(c, "interrupted", {})
    w.write()
    w.close()  # interrupted: the stub stays for --resume
    stamp = target.stat().st_mtime_ns, target.stat().st_ino
    ArchiveWriter.open(target).close()
    ArchiveWriter.open(target).close(remove_stub=True)
    ArchiveWriter.open(target).close()  # and from a freshly extracted file (no stub) neither
    assert (target.stat().st_mtime_ns, target.stat().st_ino) == stamp


def test_an_interrupted_finish_killed_before_its_write_is_written_then_resumable(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    script = _WRITER.replace('"complete", {"seconds": 1.0}', '"interrupted", {"seconds": 1.0}')
    env = dict(os.environ, NITPICKER_TEST_KILL_AT="after-finish")
    done = subprocess.run([sys.executable, "-c", script, str(target), "", str(HERE)], env=env, timeout=120)
    assert done.returncode == -signal.SIGKILL and not target.exists()
    w = ArchiveWriter.open(target)
    w.close()
    assert target.exists() and stub_path(target).is_dir()  # interrupted: the stub stays
    with open_archive(target) as r:
        assert r.commits()[0]["status"] == "interrupted"
    assert w.recovered


_ANALYZER = """
import sys
from pathlib import Path
from nitpicker_core.archive import ArchiveWriter
from nitpicker_core.types import Violation

w = ArchiveWriter.open(Path(sys.argv[1]))
w.begin_analysis(1, "demo", "1", {})
w.put_analysis(1, "demo", "https://example.org/p/1", {"words": 3}, [Violation("short", "too short")])
w.finish_analysis(1, "demo")
w.write()
w.close()
"""


def test_analysis_killed_after_its_finish_is_written_by_the_next_writer(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    assert run_writer(target) == 0
    env = dict(os.environ, NITPICKER_TEST_KILL_AT="after-analysis")
    done = subprocess.run(
        [sys.executable, "-c", _ANALYZER, str(target)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    with open_archive(target) as r:
        assert r.violations() == []  # finished, but only in the working directory
    ArchiveWriter.open(target).close()
    with open_archive(target) as r:
        assert [v["rule"] for v in r.violations()] == ["short"]
    assert not stub_path(target).exists()


# -- whole-commit stats ------------------------------------------------------------------------------------


def _error(url: str, kind: str, external: bool) -> tuple[ScrapeResult, CrawlErrorRecord]:
    record = ScrapeResult(
        url=url, is_external=external, is_target=not external, extra={"error_kind": kind, "permanent": False}
    )
    return record, CrawlErrorRecord(url=url, kind=kind, message=f"{kind} at {url}", phase="preflight")


def _run(
    w: ArchiveWriter,
    c: int,
    first: int,
    last: int,
    errors: list[tuple[str, str, bool]],
    skipped: list[str],
    external_status: dict[str, int],
) -> None:
    """What one crawler run records: rendered pages, failures, skipped URLs and checked external links."""
    w.put_pages(c, [page(i, 40) for i in range(first, last)])
    for url, kind, external in errors:
        record, error = _error(url, kind, external)
        w.put_crawl_error(c, error)
        w.put_page(c, record)
    for url in skipped:
        w.put_skipped(c, url, "robots.txt")
    w.put_pages(
        c,
        [
            ScrapeResult(
                url=url,
                status=status,
                content_type="text/html",
                is_external=True,
                is_target=False,
                anchors=[],
                images=[],
            )
            for url, status in external_status.items()
        ],
    )


def test_stats_of_a_commit_built_in_two_runs_describe_the_whole_commit(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    _run(
        w,
        c,
        0,
        10,
        [("https://example.org/broken", "timeout", False), ("https://gone.example/", "dns", True)],
        ["https://example.org/private/a"],
        {"https://external.example/": 200, "https://ext.example/404": 404},
    )
    w.finish_commit(
        c,
        "interrupted",
        {"status": "interrupted", "pages": 15, "seconds": 2.5, "browser_restarts": 1, "internal_errors": 1},
    )
    w.write()
    w.close()

    w = ArchiveWriter.open(target)
    assert w.resume_commit(w.latest_commit()) == c
    _run(
        w,
        c,
        10,
        20,
        [("https://example.org/slow", "timeout", False)],
        ["https://example.org/private/b"],
        {"https://ext.example/500": 500},
    )
    # what this run's own counters say: only what it did itself
    w.finish_commit(
        c,
        "complete",
        {
            "status": "complete",
            "pages": 11,
            "rendered": 10,
            "internal_errors": 1,
            "seconds": 4.25,
            "browser_restarts": 0,
            "errors_by_kind": {"timeout": 1},
        },
    )
    whole = w.commit_stats(c)
    w.write()
    w.close()
    # 20 rendered + 3 failed + 3 external checked (the placeholder of the pages' external link counts once)
    assert whole == {
        "pages": 26,
        "rendered": 20,
        "skipped": 2,
        "internal_errors": 2,
        "external_errors": 3,
        "errors_by_kind": {"dns": 1, "timeout": 2},
        "unextracted": 0,
        "parsed": 0,  # pages read without a browser (--render never)
    }
    with open_archive(target) as r:
        stats = r.commits()[0]["stats"]
    assert {k: stats[k] for k in whole} == whole
    assert stats["seconds"] == 6.75 and stats["browser_restarts"] == 1 and stats["runs"] == 2
    assert stats["status"] == "complete"


def test_retried_urls_count_by_their_current_state(tmp_path: Path) -> None:
    with ArchiveWriter.open(tmp_path / "site.nitpicker") as w:
        c = w.begin_commit()
        _run(w, c, 0, 3, [("https://example.org/p/1", "timeout", False)], [], {})
        assert w.commit_stats(c)["internal_errors"] == 1 and w.commit_stats(c)["rendered"] == 2
        w.put_page(c, page(1, 40))  # --retry-failed fetched it again, fine this time
        assert w.commit_stats(c) == {
            "pages": 3,
            "rendered": 3,
            "skipped": 0,
            "internal_errors": 0,
            "external_errors": 0,
            "errors_by_kind": {},
            "unextracted": 0,
            "parsed": 0,
        }
        # a placeholder (a URL known only as a link target) is no recorded URL
        assert w.commit_stats(c)["pages"] == 3 and len(w.pending_urls(c)) >= 1


def test_pages_stored_without_their_extraction_are_counted(tmp_path: Path) -> None:
    """A page that answered but did not answer the extraction is no failure, yet its data is missing: counted."""
    from nitpicker_core import PageError

    with ArchiveWriter.open(tmp_path / "site.nitpicker") as w:
        c = w.begin_commit()
        _run(w, c, 0, 3, [], [], {})
        assert w.commit_stats(c)["unextracted"] == 0
        empty = page(7, 40)
        empty.errors = [PageError(step="extract", message="the page did not answer in time")]
        empty.anchors, empty.metadata = [], {}
        w.put_page(c, empty)
        stats = w.commit_stats(c)
    assert stats["unextracted"] == 1 and stats["internal_errors"] == 0
