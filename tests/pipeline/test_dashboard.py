"""The monitoring dashboard: the snapshot endpoint over hand-written journals, and the page in Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.request

import pytest

from nitpicker_core.pipeline import read_events
from nitpicker_dashboard import create_app, free_port, serve_in_thread

DONE, LIVE, HUNG, NET, HARD = (
    f"20261130T10000{i}Z-{name}" for i, name in enumerate(["done", "live", "hung", "net0", "hard"])
)


def decl(url: str) -> dict:
    return {"url": url, "archive": "/home/someone/audits/site.nitpicker", "stages": ["crawl", "analyze"]}


def write(path, *evs, ts: float, partial: str = "") -> None:
    with path.open("a") as handle:
        for i, ev in enumerate(evs):
            at = ts + i * 0.001
            handle.write(
                json.dumps(
                    {
                        "run": path.stem,
                        "ts": at,
                        "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)),
                        **ev,
                    }
                )
                + "\n"
            )
        handle.write(partial)


def started(n: int) -> dict:
    return {"event": "run_started", "declaration": decl(f"http://site{n}.test/")}


CRAWLING = {
    "event": "heartbeat",
    "stage": "crawl",
    "progress": {
        "internal_done": 3,
        "internal_rendered": 2,
        "internal_found": 9,
        "external_done": 0,
        "external_found": 1,
    },
}


@pytest.fixture
def runs(tmp_path):
    now = time.time()
    runs_dir = tmp_path / "site.nitpicker.runs"
    runs_dir.mkdir()
    write(
        runs_dir / f"{DONE}.jsonl",
        started(0),
        {"event": "stage_started", "stage": "crawl"},
        {
            "event": "stage_finished",
            "stage": "crawl",
            "outputs": {"commit": 1, "pages": 10, "rendered": 8, "internal_errors": 0},
        },
        {"event": "stage_started", "stage": "analyze"},
        {
            "event": "stage_finished",
            "stage": "analyze",
            "outputs": {"commit": 1, "pages": 8, "violations": 3},
        },
        {"event": "run_finished", "state": "complete", "exit_code": 0},
        ts=now - 3600,
    )
    write(
        runs_dir / f"{LIVE}.jsonl", started(1), {"event": "stage_started", "stage": "crawl"}, CRAWLING, ts=now
    )
    write(
        runs_dir / f"{HUNG}.jsonl",
        started(2),
        {"event": "stage_started", "stage": "crawl"},
        CRAWLING,
        ts=now - 120,
    )
    write(
        tmp_path / f"{NET}.jsonl",
        started(3),
        {"event": "stage_started", "stage": "crawl"},
        {
            "event": "stage_failed",
            "stage": "crawl",
            "reason": "network",
            "class": "retryable",
            "message": "no page could be rendered (refused) for /home/someone/audits/site.nitpicker",
        },
        {"event": "run_finished", "state": "failed", "exit_code": 1},
        ts=now - 60,
    )
    write(
        tmp_path / f"{HARD}.jsonl",
        started(4),
        {"event": "stage_started", "stage": "crawl"},
        {
            "event": "stage_failed",
            "stage": "crawl",
            "reason": "archive",
            "class": "hard",
            "message": "site.nitpicker is locked by pid 12",
        },
        {"event": "run_finished", "state": "failed", "exit_code": 1},
        ts=now - 60,
    )
    return tmp_path


def snapshot(client) -> dict:
    response = client.get("/api/snapshot")
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    return response.get_json()


def test_snapshot_has_every_run_with_its_state(runs):
    client = create_app([runs], stale_after=30).test_client()
    data = snapshot(client)
    assert data["totals"] == {
        "running": 1,
        "hung": 1,
        "complete": 1,
        "failed": 2,
        "stopped": 0,
        "interrupted": 0,
    }
    assert [r["id"] for r in data["runs"]] == [LIVE, HARD, NET, HUNG, DONE]  # newest first
    by_id = {r["id"]: r for r in data["runs"]}
    assert {k: r["state"] for k, r in by_id.items()} == {
        DONE: "complete",
        LIVE: "running",
        HUNG: "hung",
        NET: "failed",
        HARD: "failed",
    }
    assert by_id[DONE]["archive"] == "site.nitpicker" and by_id[DONE]["url"] == "http://site0.test/"
    assert by_id[DONE]["counts"] == {
        "pages": 10,
        "rendered": 8,
        "found": 10,
        "crawl_errors": 0,
        "analyzed": 8,
        "violations": 3,
    }
    assert [(s["name"], s["state"]) for s in by_id[DONE]["stages"]] == [
        ("crawl", "done"),
        ("analyze", "done"),
    ]
    live = by_id[LIVE]
    assert [(s["name"], s["state"]) for s in live["stages"]] == [("crawl", "running"), ("analyze", "pending")]
    assert live["stages"][0]["progress"] == CRAWLING["progress"]
    assert live["counts"]["pages"] == 3 and live["counts"]["found"] == 9 and live["heartbeat_age"] < 30
    assert by_id[HUNG]["heartbeat_age"] >= 119
    assert by_id[NET]["failure"] == {
        "reason": "network",
        "class": "retryable",
        "message": "no page could be rendered (refused) for site.nitpicker",
    }
    assert by_id[HARD]["failure"]["class"] == "hard" and by_id[HARD]["exit_code"] == 1
    assert "/home/" not in json.dumps(data)


def test_snapshot_follows_appended_events_and_keeps_its_boot_id(runs):
    app = create_app([runs], stale_after=30)
    client = app.test_client()
    first = snapshot(client)
    live = runs / "site.nitpicker.runs" / f"{LIVE}.jsonl"
    write(
        live,
        {"event": "stage_finished", "stage": "crawl", "outputs": {"commit": 1, "pages": 9, "rendered": 7}},
        ts=time.time(),
        partial='{"event": "stage_sta',
    )  # a line still being written is not read yet
    second = snapshot(client)
    assert second["boot_id"] == first["boot_id"]
    run = next(r for r in second["runs"] if r["id"] == LIVE)
    assert [(s["name"], s["state"]) for s in run["stages"]] == [("crawl", "done"), ("analyze", "pending")]
    assert run["counts"]["pages"] == 9 and run["state"] == "running"
    with live.open("a") as handle:
        handle.write(f'rted", "stage": "analyze", "run": "{LIVE}", "ts": {time.time()}}}\n')
    run = next(r for r in snapshot(client)["runs"] if r["id"] == LIVE)
    assert run["stages"][1]["state"] == "running"
    (runs / f"{HARD}.jsonl").unlink()
    assert HARD not in [r["id"] for r in snapshot(client)["runs"]]
    assert snapshot(create_app([runs]).test_client())["boot_id"] != first["boot_id"]  # a restarted server


@contextlib.contextmanager
def served(directory, **options):
    """The dashboard on a real port; yields a function that GETs /api/snapshot over HTTP."""
    server = serve_in_thread(create_app([directory], **options), "127.0.0.1", 0)

    def fetch() -> dict:
        url = f"http://127.0.0.1:{server.server_port}/api/snapshot"
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.headers["Cache-Control"] == "no-store"
            return json.load(response)

    try:
        yield fetch
    finally:
        server.shutdown()


def wait_for(fetch, run_id: str, predicate, what: str, deadline: float = 60) -> dict:
    end = time.monotonic() + deadline
    while True:
        run = next((r for r in fetch()["runs"] if r["id"] == run_id), None)
        if run is not None and predicate(run):
            return run
        if time.monotonic() > end:
            pytest.fail(f"{what} never happened; last view: {run}")
        time.sleep(0.05)


def test_a_stage_whose_progress_stopped_is_hung_while_its_heartbeats_continue(tmp_path):
    from nitpicker_core.pipeline import Context, Journal
    from nitpicker_core.pipeline.runner import Heartbeat

    journal = Journal(
        tmp_path / "frozen.nitpicker.runs" / "20261130T120000Z-frzn.jsonl", "20261130T120000Z-frzn"
    )
    ctx = Context(pm=None, config=None, declaration=decl("http://frozen.test/"), crawl_options=None)
    journal.append("run_started", declaration=ctx.declaration)
    journal.append("stage_started", stage="crawl")
    ctx.progress = dict(CRAWLING["progress"])  # the site froze: the counts stay where they are
    with served(tmp_path, stale_after=30, stall_after=2) as fetch, Heartbeat(journal, ctx, 0.1) as beat:
        beat.stage = "crawl"
        run = wait_for(fetch, journal.run_id, lambda r: r["state"] == "hung", "a hung verdict")
        assert run["heartbeat_age"] < 30  # the process is alive and journaling: this is no stale heartbeat
        assert run["hung"] == {"reason": "stalled", "stage": "crawl"} and run["progress_age"] >= 2
        assert run["stages"][0]["state"] == "running"
        beats = [e for e in read_events(journal.path) if e["event"] == "heartbeat"]
        assert len(beats) >= 2 and all(b["progress"] == CRAWLING["progress"] for b in beats)
        done = 3
        while True:  # the site answers again: each beat carries new counts, and the run is running again
            ctx.progress = {**ctx.progress, "internal_done": done}
            run = next(r for r in fetch()["runs"] if r["id"] == journal.run_id)
            if run["state"] == "running":
                break
            done += 1
            assert done < 2000, f"the run never came back from hung: {run}"
            time.sleep(0.05)
        assert run["hung"] is None and run["progress_age"] < 2
        assert fetch()["stall_after"] == 2


def test_a_finished_stage_shows_its_result_not_its_last_heartbeat(runs):
    live = runs / "site.nitpicker.runs" / f"{LIVE}.jsonl"
    with served(runs, stale_after=30) as fetch:
        before = next(r for r in fetch()["runs"] if r["id"] == LIVE)
        assert before["stages"][0]["progress"] == CRAWLING["progress"] and before["counts"]["found"] == 9
        outputs = {"commit": 1, "pages": 12, "rendered": 11, "internal_errors": 0}
        write(
            live,
            {"event": "stage_finished", "stage": "crawl", "outputs": outputs},
            CRAWLING,  # a heartbeat taken just before the stage ended, written just after
            ts=time.time(),
        )
        run = next(r for r in fetch()["runs"] if r["id"] == LIVE)
    crawl = run["stages"][0]
    assert crawl["state"] == "done" and crawl["outputs"] == outputs and crawl["progress"] == {}
    assert run["counts"] == {
        "pages": 12,
        "rendered": 11,
        "found": 12,
        "crawl_errors": 0,
        "analyzed": None,
        "violations": None,
    }


def test_free_port_skips_a_taken_port():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        assert free_port("127.0.0.1", port) != port


def wait_for_state(page, selector: str, state: str) -> None:
    # a function predicate: a string one is eval'd in the page, which the dashboard's CSP forbids
    page.wait_for_function(
        "([sel, state]) => document.querySelector(sel)?.dataset.state === state", arg=[selector, state]
    )


@pytest.mark.browser
def test_the_page_renders_runs_and_redraws_only_what_changed(runs):
    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    server = serve_in_thread(create_app([runs], stale_after=30, poll_ms=200), "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.server_port}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_browser(), args=browser_args())
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector(f'[data-run="{DONE}"]')
            states = page.eval_on_selector_all(
                "section.run", "els => els.map(e => [e.dataset.run, e.dataset.state])"
            )
            assert states == [
                [LIVE, "running"],
                [HARD, "failed"],
                [NET, "failed"],
                [HUNG, "hung"],
                [DONE, "complete"],
            ]
            assert page.text_content("#totals") == (
                "5 runs: 1 running, 1 hung, 1 complete, 2 failed, 0 stopped, 0 interrupted"
            )
            net = page.locator(f'[data-run="{NET}"] li[data-stage="crawl"]')
            hard = page.locator(f'[data-run="{HARD}"] li[data-stage="crawl"]')
            assert net.get_attribute("class") == "stage failure-retryable"
            assert hard.get_attribute("class") == "stage failure-hard"
            style = "e => getComputedStyle(e).borderTopStyle"
            assert (net.evaluate(style), hard.evaluate(style)) == ("dashed", "solid")
            assert "failed: network (retryable)" in net.text_content()
            assert (
                page.text_content(f'[data-run="{LIVE}"] li[data-stage="crawl"] .progress')
                == "3(2) / 9 URLs, +0/1 ext"
            )

            live = runs / "site.nitpicker.runs" / f"{LIVE}.jsonl"
            write(
                live,
                {
                    "event": "stage_finished",
                    "stage": "crawl",
                    "outputs": {"commit": 1, "pages": 9, "rendered": 7},
                },
                {"event": "stage_started", "stage": "analyze"},
                {"event": "stage_finished", "stage": "analyze", "outputs": {"pages": 7, "violations": 2}},
                {"event": "run_finished", "state": "complete", "exit_code": 0},
                ts=time.time(),
            )
            wait_for_state(page, f'[data-run="{LIVE}"]', "complete")
            redraws = page.eval_on_selector_all(
                "section.run", "els => els.map(e => [e.dataset.run, e.dataset.redraws])"
            )
            assert dict(redraws)[DONE] == "1" and int(dict(redraws)[LIVE]) >= 2
            assert "7 pages, 2 violations" in page.text_content(
                f'[data-run="{LIVE}"] li[data-stage="analyze"]'
            )
            browser.close()
    finally:
        server.shutdown()


@pytest.mark.browser
def test_cards_show_each_finished_stage_result_and_never_a_null(runs):
    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    server = serve_in_thread(create_app([runs], stale_after=30, poll_ms=200), "127.0.0.1", 0)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_browser(), args=browser_args())
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_port}/")
            page.wait_for_selector(f'[data-run="{DONE}"]')
            texts = page.eval_on_selector_all(
                "section.run", "els => els.map(e => [e.dataset.run, e.textContent])"
            )
            assert len(texts) == 5 and not [
                run for run, text in texts if "null" in text or "undefined" in text
            ]
            assert (
                page.text_content(f'[data-run="{DONE}"] li[data-stage="crawl"] .progress')
                == "10 URLs, 8 rendered (commit 1)"
            )

            live = runs / "site.nitpicker.runs" / f"{LIVE}.jsonl"
            write(
                live,
                {
                    "event": "stage_finished",
                    "stage": "crawl",
                    "outputs": {"commit": 1, "pages": 9, "rendered": 7},
                },
                ts=time.time(),
            )
            wait_for_state(page, f'[data-run="{LIVE}"] li[data-stage="crawl"]', "done")
            assert (
                page.text_content(f'[data-run="{LIVE}"] li[data-stage="crawl"] .progress')
                == "9 URLs, 7 rendered (commit 1)"
            )
            write(
                live,
                {
                    "event": "verdict",
                    "passed": False,
                    "checks": [{"check": "violations>0", "value": 2, "failed": True}],
                },
                {"event": "run_finished", "state": "stopped", "exit_code": 1},
                ts=time.time(),
            )
            wait_for_state(page, f'[data-run="{LIVE}"]', "stopped")
            assert (
                page.text_content(f'[data-run="{LIVE}"] .verdict') == "quality gate failed: violations>0 (2)"
            )
            assert "null" not in page.text_content(f'[data-run="{LIVE}"]')
            browser.close()
    finally:
        server.shutdown()


def test_dashboard_command_rejects_a_missing_directory(cli, tmp_path):
    result = cli(
        "dashboard", "nowhere", "--no-open", cwd=tmp_path, env={"NITPICKER_LOAD_PLUGINS": "cmd-dashboard"}
    )
    assert result.returncode == 1 and result.stderr == "nitpicker: error: not a directory: nowhere\n"
    assert os.environ.get("NITPICKER_LOAD_PLUGINS")  # the conftest allow list is untouched


def test_well_formed_lines_of_the_wrong_shape_are_passed_over_not_a_500(tmp_path):
    # issue 33: a JSON line of the wrong type ("ts": "abc", deep nesting) made the whole snapshot answer 500
    from nitpicker_core.pipeline import Journal

    runs = tmp_path / "odd.nitpicker.runs"
    journal = Journal(runs / "20261201T120000Z-odd1.jsonl", "20261201T120000Z-odd1")
    journal.append("run_started", declaration=decl("http://odd.test/"))
    nested: object = 1
    for _ in range(40):
        nested = {"a": nested}
    bad = [
        {"event": "heartbeat", "stage": "crawl", "ts": "abc"},
        {"event": "stage_started", "stage": ["crawl"], "ts": 1.0},
        {"event": "heartbeat", "stage": "crawl", "progress": "lots"},
        {"event": "run_started", "declaration": {"stages": "crawl"}},
        {"event": "run_finished", "exit_code": "zero"},
        {"event": 7},
        {"event": "heartbeat", "stage": "crawl", "progress": nested},  # deeper than any progress of ours
        ["event", "heartbeat"],
    ]
    with journal.path.open("a", encoding="utf-8") as fh:
        for event in bad:
            fh.write(json.dumps(event) + "\n")
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")  # nesting deeper than the parser goes
        fh.write('{"event": "heartbeat", "stage": "crawl", "p": ' + "[" * 3000 + "]" * 3000 + "}\n")
    journal.append("stage_started", stage="crawl")
    with served(tmp_path) as fetch:
        run = wait_for(fetch, journal.run_id, lambda r: r["state"] == "running", "the run")
    assert run["url"] == "http://odd.test/" and run["stages"][0]["name"] == "crawl"
    assert run["stages"][0]["state"] == "running"
    assert [e["event"] for e in read_events(journal.path)] == ["run_started", "stage_started"]
