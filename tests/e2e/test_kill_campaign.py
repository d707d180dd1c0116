"""Kill campaign: SIGKILL a crawl, an analyze and the final archive write at random moments, then resume.

Whatever the moment, the archive must open, no page may be lost, and the final content must equal an
uninterrupted run's. Kill moments are chosen by a seeded RNG (the seed is in the test id, so a failure
is reproducible) and reached by watching the working database grow, never by sleeping.
"""

from __future__ import annotations

import random
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from support import RunningCli, crawled_pages, run_cli, run_cli_subprocess, stub_count, wait_until

from nitpicker_core.archive import open_archive
from test_server.routes.stopping import campaign_urls

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SEED = 20261201
CRAWL_KILLS = 3


def content(archive: Path) -> dict[str, Any]:
    """What an audit reads of the newest commit: per URL its answer, title, links and rendered HTML."""
    with open_archive(archive) as reader:
        commits = [(c["id"], c["status"]) for c in reader.commits()]
        pages = {}
        for page in reader.pages():
            pages[page["url"]] = (
                page["status"],
                page["content_type"],
                page["title"],
                page["scraped"],
                page["is_target"],
                page["is_external"],
                tuple(sorted(a["href"] for a in reader.anchors(page["url"]))),
                reader.html(page["url"]),
            )
        errors = sorted((e["url"], e["kind"]) for e in reader.crawl_errors())
        violations = sorted((v["url"], v["rule"], v["message"]) for v in reader.violations())
    return {"commits": commits, "pages": pages, "errors": errors, "violations": violations}


def crawl_args(site: str, archive: Path) -> list[str]:
    return ["crawl", "-o", str(archive), f"{site}/stopping/campaign/", "--no-image", "--parallels", "2"]


def kill_when(running: RunningCli, ready: Any, what: str) -> None:
    wait_until(lambda: ready() or running.proc.poll() is not None, what, timeout=300)
    if running.proc.poll() is None:
        running.signal(signal.SIGKILL)
    running.wait(timeout=120)


@pytest.fixture(scope="module")
def reference(site, tmp_path_factory):
    """The same site crawled and analyzed without interruption, and a copy of the crawl before its analysis."""
    workdir = tmp_path_factory.mktemp("reference")
    archive = workdir / "reference.nitpicker"
    result = run_cli(*crawl_args(site, archive), cwd=workdir, timeout=600)
    assert result.returncode == 0, result.stderr
    crawled = content(archive)
    unanalyzed = shutil.copy(archive, workdir / "crawled.nitpicker")
    result = run_cli("analyze", str(archive), "--plugin", "markup", cwd=workdir, timeout=600)
    assert result.returncode == 0, result.stderr
    return crawled, content(archive), unanalyzed


def test_reference_crawl_has_every_page(reference, site):
    crawled, _, _ = reference
    rendered = {url for url, page in crawled["pages"].items() if page[3]}
    assert rendered == {f"{site}{path}" for path in campaign_urls()}
    assert crawled["errors"] == [] and crawled["commits"] == [(1, "complete")]


def test_crawl_killed_three_times_then_resumed_equals_an_uninterrupted_crawl(reference, site, tmp_path):
    rng = random.Random(SEED)
    archive = tmp_path / "k.nitpicker"
    total = len(campaign_urls())
    moments = sorted(rng.sample(range(1, total - 2), CRAWL_KILLS))
    first = True
    for moment in moments:
        args = crawl_args(site, archive) if first else ["crawl", "--resume", str(archive), "--no-image"]
        running = RunningCli(*args, cwd=tmp_path)
        kill_when(running, lambda m=moment: crawled_pages(archive) >= m, f"{moment} pages crawled")
        first = False
        assert archive.with_name("k.nitpicker.stub").is_dir()
    resumed = run_cli("crawl", "--resume", str(archive), "--no-image", cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, f"kills at {moments}: {resumed.stderr}"
    assert content(archive) == reference[0], f"kills at {moments}"
    assert not list(tmp_path.glob(".k.nitpicker.*.tmp"))


@pytest.mark.parametrize("point", ["after-finish", "during-write"])
def test_kill_at_the_final_write_is_finished_by_resume(reference, site, tmp_path, point):
    archive = tmp_path / "w.nitpicker"
    killed = run_cli_subprocess(
        *crawl_args(site, archive), cwd=tmp_path, env={"NITPICKER_TEST_KILL_AT": point}, timeout=600
    )
    assert killed.returncode == -signal.SIGKILL
    assert not archive.exists()  # the first crawl's file was never written
    resumed = run_cli("crawl", "--resume", str(archive), "--no-image", cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert content(archive) == reference[0]
    assert not list(tmp_path.glob(".w.nitpicker.*.tmp"))
    assert not archive.with_name("w.nitpicker.stub").exists()


def test_analyze_killed_then_run_again_equals_an_uninterrupted_analyze(reference, tmp_path):
    rng = random.Random(SEED + 1)
    archive = Path(
        shutil.copy(reference[2], tmp_path / "a.nitpicker")
    )  # the reference crawl, not analyzed yet
    moment = rng.randrange(1, len(campaign_urls()) // 2)
    running = RunningCli("analyze", str(archive), "--plugin", "markup", cwd=tmp_path)
    kill_when(
        running,
        lambda: stub_count(archive, "SELECT COUNT(DISTINCT url_id) FROM analysis_cell") >= moment,
        f"{moment} pages analyzed",
    )
    with open_archive(archive) as reader:  # the archive still opens between the kill and the re-run
        assert reader.commits()[0]["status"] == "complete"
    again = run_cli("analyze", str(archive), "--plugin", "markup", cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stderr
    assert content(archive) == reference[1]
