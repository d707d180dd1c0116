"""A run killed with SIGKILL mid-crawl resumes: the same commit completes and the journal shows the rerun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from pipeline_helpers import events, journal_of, kinds, process_tree
from support import run_cli, wait_until

from nitpicker_core.archive import open_archive
from nitpicker_core.pipeline import Monitor

pytestmark = pytest.mark.browser


def kill_mid_crawl(site, env, work):
    """Start a run with --dashboard, read its snapshot once two pages are done, then SIGKILL it."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nitpicker_cli.main",
            "pipeline",
            f"{site}/pipeline-site/",
            "-o",
            "k.nitpicker",
            "--no-image",
            "--parallels",
            "1",
            "--plugin",
            "pipe-words",
            "--heartbeat",
            "0.2",
            "--dashboard",
        ],
        cwd=work,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs = work / "k.nitpicker.runs"
    deadline = time.monotonic() + 60
    try:
        while not any(
            e["event"] == "heartbeat" and e["progress"].get("internal_done", 0) >= 2
            for p in runs.glob("*.jsonl")
            for e in events(p)
        ):
            if time.monotonic() > deadline:
                pytest.fail("the crawl never got two pages done")
            time.sleep(0.1)
        line = proc.stderr.readline()  # --dashboard serves the run's journal directory while it runs
        assert line.startswith("dashboard: http://127.0.0.1:"), line
        with urllib.request.urlopen(line.split()[1] + "api/snapshot", timeout=10) as response:
            return json.load(response)
    finally:
        for pid in reversed(process_tree(proc.pid)):  # the run and its browser, by id
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
        proc.stderr.close()


def test_a_killed_run_resumes_and_completes_the_same_commit(site, pipe_env, tmp_path):
    live = kill_mid_crawl(site, pipe_env, tmp_path)
    (run,) = live["runs"]
    assert run["state"] == "running" and run["archive"] == "k.nitpicker"
    assert [(s["name"], s["state"]) for s in run["stages"]] == [("crawl", "running"), ("analyze", "pending")]
    assert run["counts"]["pages"] >= 2 and run["counts"]["found"] == 8
    archive = tmp_path / "k.nitpicker"
    journal = journal_of(archive)
    killed = events(journal)
    assert "run_finished" not in kinds(killed) and kinds(killed)[-1] in ("stage_started:crawl", "heartbeat")
    assert not archive.exists() and (tmp_path / "k.nitpicker.stub").is_dir()

    # the dashboard's view of the dead run: running while its heartbeat is fresh, hung once it is stale
    assert Monitor([tmp_path], stale_after=60).snapshot()["runs"][0]["state"] == "running"
    wait_until(  # the dead run's last heartbeat ages past the limit
        lambda: Monitor([tmp_path], stale_after=0.5).snapshot()["totals"]["hung"] == 1, "a hung verdict"
    )
    hung = Monitor([tmp_path], stale_after=0.5).snapshot()
    assert hung["totals"]["hung"] == 1 and hung["runs"][0]["stages"][0]["state"] == "running"

    result = run_cli(
        "pipeline", "--resume", journal.stem, "-o", "k.nitpicker", cwd=tmp_path, env=pipe_env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stages"] == {"crawl": "done", "analyze": "done"}
    # the stats describe the whole commit, the pages crawled before the kill included
    assert summary["crawl"]["commit"] == 1 and summary["crawl"]["status"] == "complete"
    assert (summary["crawl"]["pages"], summary["crawl"]["rendered"]) == (8, 8)
    resumed = [e for e in events(journal)[len(killed) :] if e["event"] != "heartbeat"]
    assert kinds(resumed) == [
        "run_resumed",
        "stage_mismatch:crawl",
        "stage_started:crawl",
        "stage_finished:crawl",
        "stage_mismatch:analyze",
        "stage_started:analyze",
        "stage_finished:analyze",
        "run_finished",
    ]
    assert resumed[1]["reason"] == "not finished earlier (running)"
    assert resumed[3]["outputs"]["mode"] == "resume" and resumed[3]["outputs"]["commit"] == 1
    assert resumed[4]["reason"] == "crawl ran again"
    with open_archive(archive) as reader:
        assert [(c["id"], c["status"]) for c in reader.commits()] == [(1, "complete")]
        statuses = {p["url"].split("/pipeline-site/", 1)[1]: p["status"] for p in reader.pages(1)}
        counts = {
            r["url"].split("/pipeline-site/", 1)[1]: r["value"]
            for r in reader.analysis(analyzer="pipe-words")
        }
    assert statuses == {"": 200, **{f"p{n}": 200 for n in range(1, 7)}, "missing": 404}
    assert counts == {"": 6, **{f"p{n}": 2 for n in range(1, 7)}, "missing": 0}
    assert not (tmp_path / "k.nitpicker.stub").exists()
