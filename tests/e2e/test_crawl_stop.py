"""End-to-end: SIGINT/SIGTERM stop a crawl in order, leave it resumable, and never record a stopped page as failed.

Every wait here is on observable state (a request reaching the test site, a line on stderr, a file), never
on a sleep, so the tests hold on a loaded machine.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from support import RunningCli, run_cli, server_hits, wait_until

from nitpicker_core.archive import open_archive
from test_server.hostile import TrickleServer
from test_server.routes.stopping import PAGES

pytestmark = pytest.mark.browser


def tagged_processes(tag: str) -> list[int]:
    """Live processes (browser, driver, crawler) whose environment carries ``tag``, wherever they were reparented."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"NITPICKER_TEST_TAG={tag}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def busy_images(site: str, busy: bool) -> None:
    """Hold the pages' images busy (a crawl to stop) or release them (a resume renders each page at once)."""
    import urllib.request

    request = urllib.request.Request(f"{site}/stopping/{'hold' if busy else 'release'}", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def child_hits(site: str) -> int:
    return sum(server_hits(site, f"/stopping/img/{n}.png") for n in range(1, PAGES + 1))


def start(
    site: str, tmp_path: Path, name: str, *flags: str, own_group: bool = False
) -> tuple[RunningCli, Path, str]:
    tag = uuid.uuid4().hex
    archive = tmp_path / f"{name}.nitpicker"
    busy_images(site, True)
    running = RunningCli(
        "crawl",
        "-o",
        str(archive),
        f"{site}/stopping/",
        "--no-image",
        *flags,
        cwd=tmp_path,
        env={"NITPICKER_TEST_TAG": tag},
        own_group=own_group,
    )
    return running, archive, tag


def resume_and_check(site: str, archive: Path, tmp_path: Path) -> None:
    """``--resume`` finishes the same commit: every page rendered, nothing failed."""
    busy_images(site, False)
    resumed = run_cli("crawl", "--resume", str(archive), "--no-image", cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    with open_archive(archive) as reader:
        commits = reader.commits()
        titles = {p["url"]: p["title"] for p in reader.pages() if p["scraped"]}
        errors = list(reader.crawl_errors())
    assert [(c["id"], c["status"]) for c in commits] == [(1, "complete")]
    assert errors == []
    assert all(titles.get(f"{site}/stopping/p/{n}") == f"Stopping {n}" for n in range(1, PAGES + 1)), titles


def test_terminal_ctrl_c_stops_cleanly_and_resume_gets_every_page(site, tmp_path):
    """Ctrl-C in a terminal signals the whole process group, the browser included."""
    before = child_hits(site)
    running, archive, tag = start(site, tmp_path, "t", "--parallels", "2", own_group=True)
    wait_until(lambda: child_hits(site) > before, "a child page in flight")
    running.interrupt_group()
    assert running.wait(timeout=120) == 130, running.stderr
    assert "resume with: nitpicker crawl --resume" in running.stderr
    assert "Future exception was never retrieved" not in running.stderr
    assert "Traceback" not in running.stderr
    wait_until(lambda: not tagged_processes(tag), "the browser and driver to exit", timeout=60)
    with open_archive(archive) as reader:
        assert reader.commits()[0]["status"] == "interrupted"
        assert list(reader.crawl_errors()) == []  # pages in flight went back to pending, none "failed"
    resume_and_check(site, archive, tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_stops_within_the_grace_and_says_how_to_resume(site, tmp_path, sig):
    # SIGHUP (a closed terminal or ssh session) stops like SIGTERM (issue 33: it killed the crawl outright)
    before = child_hits(site)
    running, archive, tag = start(site, tmp_path, "s", "--parallels", "2")
    wait_until(lambda: child_hits(site) > before, "a child page in flight")
    sent = time.monotonic()
    running.signal(sig)
    assert running.wait(timeout=120) == 130, running.stderr
    took = time.monotonic() - sent
    assert took < 20, f"took {took:.1f} s to stop"  # the bound; the grace is 5 s
    assert f"resume with: nitpicker crawl --resume {archive}" in running.stderr
    wait_until(lambda: not tagged_processes(tag), "the browser and driver to exit", timeout=60)
    with open_archive(archive) as reader:
        assert reader.commits()[0]["status"] == "interrupted"
        assert list(reader.crawl_errors()) == []
    resume_and_check(site, archive, tmp_path)


def test_second_signal_exits_at_once_and_stays_resumable(site, tmp_path):
    before = child_hits(site)
    running, archive, tag = start(site, tmp_path, "q", "--parallels", "1")
    wait_until(lambda: child_hits(site) > before, "a child page in flight")
    running.signal(signal.SIGINT)
    running.wait_for_line("stopping:")
    sent = time.monotonic()
    running.signal(signal.SIGINT)
    assert running.wait(timeout=60) == 130, running.stderr
    assert time.monotonic() - sent < 10  # not the page's own timeouts nor the grace
    assert "stopped at once; the crawl is resumable: nitpicker crawl --resume" in running.stderr
    wait_until(lambda: not tagged_processes(tag), "no Chromium or driver left behind", timeout=60)
    assert (tmp_path / "q.nitpicker.stub" / "archive.db").exists()
    resume_and_check(site, archive, tmp_path)


def test_a_signal_before_the_crawl_loop_still_ends_in_a_resumable_archive(site, tmp_path):
    """SIGTERM while the archive is being opened and the browser started: handled, not a crash."""
    running, archive, _tag = start(site, tmp_path, "e", "--parallels", "2")
    stub = tmp_path / "e.nitpicker.stub"
    wait_until(lambda: stub.exists() or running.proc.poll() is not None, "the working directory")
    running.signal(signal.SIGTERM)
    code = running.wait(timeout=120)
    assert code == 130, running.stderr
    assert "Traceback" not in running.stderr
    if archive.exists():  # the stop may land before anything was crawled: the archive says interrupted
        with open_archive(archive) as reader:
            assert reader.commits()[0]["status"] == "interrupted"
    resume_and_check(site, archive, tmp_path)


def test_exit_code_and_stats_describe_the_whole_commit_after_resume(site, tmp_path):
    """A failure before the interruption still fails the resumed crawl, and the stats count both runs."""
    archive = tmp_path / "f.nitpicker"
    busy_images(site, True)
    before = server_hits(site, "/stopping/img/1.png")
    running = RunningCli(
        "crawl",
        "-o",
        str(archive),
        f"{site}/stopping/flawed/",
        "--no-image",
        "--parallels",
        "1",
        "--retry",
        "1",
        cwd=tmp_path,
    )
    wait_until(
        lambda: server_hits(site, "/stopping/img/1.png") > before or running.proc.poll() is not None,
        "page 1 in flight, after the loop failed",
    )
    running.signal(signal.SIGINT)
    assert running.wait(timeout=120) == 130, running.stderr
    with open_archive(archive) as reader:
        assert [e["kind"] for e in reader.crawl_errors()] == ["redirect-loop"]
    busy_images(site, False)
    resumed = run_cli(
        "crawl", "--resume", str(archive), "--no-image", "--retry", "1", cwd=tmp_path, timeout=600
    )
    assert resumed.returncode == 1, resumed.stderr  # an uninterrupted crawl of this site exits 1 too
    assert "1 internal / 0 external errors" in resumed.stderr
    with open_archive(archive) as reader:
        stats = reader.commits()[0]["stats"]
        scraped = {p["url"] for p in reader.pages() if p["scraped"]}
    rendered = sum(f"{site}/stopping/flawed/p/{n}" in scraped for n in range(1, PAGES + 1))
    assert stats["internal_errors"] == 1 and stats["errors_by_kind"] == {"redirect-loop": 1}
    assert stats["runs"] == 2 and rendered == PAGES


def test_sigterm_while_the_site_withholds_headers_exits_in_time(tmp_path):
    """robots.txt and the preflight of a server sending headers one byte at a time must not hold the exit."""
    with TrickleServer(interval=0.5) as server:
        archive = tmp_path / "h.nitpicker"
        running = RunningCli("crawl", "-o", str(archive), f"{server.url}/", "--no-image", cwd=tmp_path)
        assert server.wait_for("connected", timeout=120), running.stderr
        sent = time.monotonic()
        running.signal(signal.SIGTERM)
        assert running.wait(timeout=120) == 130, running.stderr
        assert time.monotonic() - sent < 20
        assert server.wait_for("closed", timeout=30)  # nothing left talking to it
    with open_archive(archive) as reader:
        assert reader.commits()[0]["status"] == "interrupted"
        assert list(reader.crawl_errors()) == []


if os.name != "posix":  # pragma: no cover
    pytestmark = pytest.mark.skip("signals and process groups are POSIX")
