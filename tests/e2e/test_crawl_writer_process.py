"""The archive writer in a child process of its own: a crawl stores there what it stores on a thread, and a child
that dies mid-crawl ends the crawl with one clear line and a working directory that ``--resume`` finishes.

Waits are on observable state (rows in the live working database, the child holding it open), never sleeps.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support import RunningCli, crawled_pages, run_cli, wait_until

from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.phases import ARCHIVE_WRITE_IN_PROCESS
from test_server.routes.stopping import campaign_urls

pytestmark = pytest.mark.browser

# sections with rendered pages, sub-resources, broken links and skipped URLs: every kind of event
SECTIONS = ("/checks-site/", "/meta/", "/structured-data/")
# page fields that differ between two crawls of the same pages whatever the writer
PER_CRAWL = {"first_seen_at", "last_crawled_at", "order", "headers", "response_ms", "load_ms", "http_version"}


def _stored(archive: Path) -> dict:
    """What the commit holds apart from times: pages, links, resources, errors, the checks' findings, stats."""
    with open_archive(archive) as reader:
        commit = reader.commits()[0]
        stats = {k: v for k, v in commit["stats"].items() if k not in ("seconds", "phases", "waited")}
        if "scope" in stats.get("start_links", {}):  # in the order the roots' pages came back
            stats["start_links"]["scope"] = sorted(stats["start_links"]["scope"])
        pages = {
            page["url"]: {k: v for k, v in page.items() if k not in PER_CRAWL} for page in reader.pages()
        }
        return {
            "pages": pages,
            "anchors": {url: list(reader.anchors(url)) for url in pages},
            "headings": {url: reader.headings(url) for url in pages},
            "resources": sorted(
                # a resource's headers (and so its state's hash) carry the response's date
                json.dumps({k: v for k, v in r.items() if k not in ("headers", "hash")}, sort_keys=True)
                for r in reader.resources()
            ),
            "errors": sorted((e["url"], e["kind"], e["message"]) for e in reader.crawl_errors()),
            "checks": sorted(
                tuple(row)
                for row in reader.execute(
                    "SELECT n.check_id, r.findings, r.urls, r.error FROM check_result r "
                    "JOIN finding_name n ON n.id = r.check_no"
                )
            ),
            "stats": stats,
            "phases": commit["stats"]["phases"],
        }


def test_a_crawl_stores_in_the_writer_process_what_the_writer_thread_stores(crawl, site):
    args = (*(site + section for section in SECTIONS), "--exclude", "/structured-data/scripted")
    # rendered, for every kind of event (the writer process is the default of the modes without a browser only)
    process = _stored(crawl(*args, name="process", ok=(1,), env={"NITPICKER_WRITER_PROCESS": "1"}).archive)
    thread = _stored(crawl(*args, name="thread", ok=(1,), env={"NITPICKER_WRITER_PROCESS": "0"}).archive)
    # where the events were stored: the child's phase in one commit, the thread's in the other, as many
    phases = process.pop("phases"), thread.pop("phases")
    assert "archive write" not in phases[0] and ARCHIVE_WRITE_IN_PROCESS not in phases[1]
    assert phases[0][ARCHIVE_WRITE_IN_PROCESS]["count"] == phases[1]["archive write"]["count"] > 20
    assert process["resources"] and process["errors"] and process["checks"]
    assert any(page["is_skipped"] for page in process["pages"].values())
    for key in thread:
        assert process[key] == thread[key], key


def _holders(path: Path) -> list[int]:
    """The processes that hold ``path`` open (the writer child holds the working database)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == str(path) for fd in (entry / "fd").iterdir()):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_a_writer_process_killed_mid_crawl_ends_the_crawl_in_one_line_and_resume_finishes_it(site, tmp_path):
    """A default `--render never` crawl stores in a writer process; killed, the crawl says so and stops."""
    archive = tmp_path / "killed.nitpicker"
    db = archive.with_name("killed.nitpicker.stub") / "archive.db"
    args = (
        "crawl",
        "-o",
        str(archive),
        f"{site}/stopping/campaign/",
        "--render",
        "never",
        "--parallels",
        "1",
    )
    running = RunningCli(*args, cwd=tmp_path)
    wait_until(lambda: crawled_pages(archive) >= 3 or running.proc.poll() is not None, "3 pages stored")
    assert running.proc.poll() is None, running.stderr  # the campaign's pages come slowly: far from the end
    writers = [pid for pid in _holders(db) if pid != running.proc.pid]
    assert len(writers) == 1 and running.proc.pid not in _holders(db)  # the crawler leaves the archive to it
    os.kill(writers[0], signal.SIGKILL)
    assert running.wait(timeout=120) == 1
    assert "Traceback" not in running.stderr
    last = running.lines[-1]
    assert last.startswith(
        "nitpicker: error: the archive writer process ended unexpectedly (killed by signal 9)"
    )
    assert "--resume" in last
    assert not archive.exists() and db.exists()  # the working directory, as a killed crawl leaves it
    resumed = run_cli("crawl", "--resume", str(archive), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    with open_archive(archive) as reader:
        assert [c["status"] for c in reader.commits()] == ["complete"]
        stored = {page["url"] for page in reader.pages() if page["scraped"]}
    assert stored == {site + path for path in campaign_urls()}
