"""Analyze on Dask workers (issue 20): a real LocalCluster of worker processes on 127.0.0.1 runs each_page.

The findings and table rows must be the ones a local run stores; the HTML reaches workers from the archive
path or shipped with each page; a page over its time limit is an error row; a worker killed mid-run loses
no page; a cluster that goes away leaves an interrupted run that the next run finishes.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archives import SITE, build_archive, page_html
from hand_cluster import hand_cluster
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, RunningCli, run_cli, wait_until

from nitpicker_core import ScrapeResult
from nitpicker_core.analyze import analyze, dask_pool
from nitpicker_core.analyze.dask_pool import Batches
from nitpicker_core.analyze.pool import Task, WorkerSpec
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config
from nitpicker_core.executors import dask_client, parse_executor
from nitpicker_core.plugins import make_plugin_manager

# A test analyzer loaded by name on the workers: logs each page it starts (and, in the recording process,
# each page recorded), holds "gate" pages until a file exists, hangs on "hang" pages, raises on "boom" pages,
# kills its worker process on "die" pages.
SOURCE = """
import os
import time
from pathlib import Path

from nitpicker_core import Analyzer, Column, PageReport, Violation, hookimpl


class SlowProbe(Analyzer):
    name = "slowprobe"
    label = "Slow probe"
    version = "1"
    columns = (Column("length", "Length"), Column("pid", "Worker pid"))
    timeout = 120

    def setup(self, settings):
        self.log = settings["log"]
        self.write(f"setup {os.getpid()}")

    def write(self, line):
        with open(self.log, "a") as f:
            f.write(line + "\\n")

    def each_page(self, page):
        self.write(f"start {os.getpid()} {page.url}")
        if "gate" in page.url:
            deadline = time.monotonic() + 300
            while not Path(page.settings["gate"]).exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        if "hang" in page.url:
            time.sleep(600)  # the scenario: a page that never finishes (the pool must time it out)
        if "boom" in page.url:
            raise ValueError("boom page")
        if "die" in page.url:
            os._exit(1)  # the scenario: a page that kills its worker process every time
        return PageReport({"length": len(page.html), "pid": os.getpid()}, [Violation("seen", "seen", "info")])


_settings = {}


@hookimpl
def configure(config):
    _settings.update(config.settings_for("slowprobe"))


@hookimpl
def analyze_page_reported(url, analyzer, report, run):
    if analyzer == "slowprobe" and _settings.get("log"):  # in the CLI: the pages it has recorded so far
        with open(_settings["log"], "a") as f:
            f.write(f"reported {url}\\n")


@hookimpl
def register_settings(register):
    register("log", default="")
    register("gate", default="")


@hookimpl
def register_analyzers(register):
    register(SlowProbe())
"""
PLUGINS = {*BUILTIN_PLUGINS, "slowprobe"}


def scraped(path: str, body: str) -> ScrapeResult:
    html = page_html(path.strip("/").title() or "Home", body, ["/", "/a"])
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html),
        metadata={"title": path},
        html=html,
    )


def findings_site() -> list[ScrapeResult]:
    """Pages with markup and proofreading problems, so both analyzers have findings to compare."""
    bodies = [
        "A plain page with nothing wrong in it at all.",
        "<center>Centred</center> and <font color=red>red</font> text, the the end.",
        "Two  spaces here and <tt>old</tt> markup; <img src=x.png> without alt.",
        "<table align=center><tr><td>cell</td></tr></table> is is a table.",
        "本サービスはサイトを点検します。新製品は来月の予定である。ﾒﾝﾃﾅﾝｽ中です。",
        "<h3>Skipped</h3><p id=d>one</p><p id=d>two</p> and and more.",
        "<marquee>moving</marquee> words words words.",
        "A fine page with a <a href='/b'>link</a> and a <strong>strong</strong> word.",
    ]
    return [scraped(f"/p{i}", body) for i, body in enumerate(bodies)]


def probe_site(*names: str) -> list[ScrapeResult]:
    return [scraped(f"/{name}", f"Page {name}, with a little text.") for name in names]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = make_dist(
        tmp_path_factory.mktemp("dist"), "nitpicker-slowprobe", "slowprobe", "slowprobe_plugin", SOURCE
    )
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


def _with_path(dist: Path) -> dict[str, str]:
    """The environment that makes the test plugin importable in processes started from it."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(dist), os.environ.get("PYTHONPATH")]))}


@pytest.fixture(scope="module")
def cluster(dist: Path) -> Iterator[Any]:
    """A LocalCluster of 2 worker processes whose workers (and their restarts) can load the test plugin."""
    saved = os.environ.get("PYTHONPATH")
    os.environ.update(_with_path(dist))  # worker processes take the environment of this one as they start
    try:
        with dask_client(parse_executor("dask-local:2")) as client:
            yield client
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def pm(dist: Path) -> Any:
    return make_plugin_manager(allow=PLUGINS, deny=set())


def address(client: Any) -> str:
    return "dask://" + str(client.scheduler.address).removeprefix("tcp://")


def stored(archive: Path, analyzer: str) -> dict[str, Any]:
    with open_archive(archive) as reader:
        return {
            "cells": reader.analysis(analyzer=analyzer),
            "violations": reader.violations(analyzer=analyzer),
            "errors": reader.analyzer_errors(analyzer=analyzer),
        }


def probe_config(pm: Any, log: Path, gate: Path | None = None) -> Any:
    return load_config(pm, data={"plugins": {"slowprobe": {"log": str(log), "gate": str(gate or "")}}})


def log_lines(log: Path, kind: str) -> list[list[str]]:
    text = log.read_text() if log.exists() else ""
    return [line.split(" ")[1:] for line in text.splitlines() if line.startswith(kind + " ")]


@pytest.fixture(scope="module")
def reference(pm, tmp_path_factory) -> tuple[Path, Path, Any]:
    """(an archive not analyzed yet, the same archive analyzed here by markup and text, that local run)."""
    work = tmp_path_factory.mktemp("reference")
    here = build_archive(work / "here.nitpicker", findings_site())
    pristine = shutil.copy(here, work / "pristine.nitpicker")
    return pristine, here, analyze(pm, load_config(pm, data={}), here, ["markup", "text"])


def test_markup_and_text_on_the_cluster_store_what_a_local_run_stores(
    pm, cluster, reference, tmp_path
) -> None:
    pristine, here, local = reference
    there = shutil.copy(pristine, tmp_path / "there.nitpicker")
    config = load_config(pm, data={})
    remote = analyze(pm, config, there, ["markup", "text"], executor=cluster)
    for name in ("markup", "text"):
        expected = stored(here, name)
        assert stored(there, name) == expected
        assert len(expected["violations"]) >= 4 and len(expected["cells"]) >= 8 and not expected["errors"]
        assert local.summaries[name].mode == "pool" and remote.summaries[name].mode == "dask"
        assert {**remote.summaries[name].as_dict(), "mode": "pool"} == local.summaries[name].as_dict()
    workers = remote.stats["executor"]
    assert workers["executor"] == "dask-local:2" and workers["worker_restarts"] == 0
    assert set(workers["html"].values()) == {"archive"}  # same machine: read at the archive's path
    assert {k: v for k, v in remote.stats.items() if k != "executor"} == local.stats
    again = analyze(pm, config, there, ["markup"], executor=cluster)  # done pages: settled in the client
    assert again.summaries["markup"].cached == 8 and again.stats["executor"]["html"] == {}


def test_workers_that_cannot_read_the_archive_get_the_html_with_each_page(
    cluster, dist, reference, tmp_path
) -> None:
    pristine, here, _ = reference
    there = shutil.copy(pristine, tmp_path / "there.nitpicker")
    # the switch makes every worker answer as one on another machine would: it cannot open the path
    result = run_cli(
        "analyze",
        "--executor",
        address(cluster),
        "--plugin",
        "markup",
        "--plugin",
        "text",
        "--json",
        str(there),
        cwd=tmp_path,
        env={"NITPICKER_DASK_SHIP_HTML": "1", **_with_path(dist)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert set(summary["executor"]["html"].values()) == {"shipped"}, summary
    assert summary["analyzers"]["markup"]["mode"] == "dask" and summary["analyzers"]["markup"]["pages"] == 8
    for name in ("markup", "text"):
        assert stored(there, name) == stored(here, name)


def test_time_limit_and_exceptions_are_error_rows_with_tracebacks(pm, cluster, tmp_path) -> None:
    archive = build_archive(tmp_path / "a.nitpicker", probe_site("one", "hang", "boom", "two"))
    log = tmp_path / "log"
    run = analyze(pm, probe_config(pm, log), archive, ["slowprobe"], timeout=3, executor=cluster)
    summary = run.summaries["slowprobe"]
    assert (summary.pages, summary.errors, summary.timeouts, summary.violations) == (4, 2, 1, 2)
    assert run.stats["executor"]["worker_restarts"] == 1  # the worker whose page went over time is replaced
    with open_archive(archive) as reader:
        errors = {
            row[0].removeprefix(SITE): (row[1], row[2] or "")
            for row in reader.execute(
                "SELECT u.url, e.message, e.traceback FROM analyzer_error e JOIN url u ON u.id = e.url_id"
            )
        }
    assert errors["/hang"] == ("timed out after 3 s", "")
    assert (
        errors["/boom"][0] == "ValueError: boom page"
        and 'raise ValueError("boom page")' in errors["/boom"][1]
    )
    assert len(log_lines(log, "setup")) >= 2  # the timed-out instance is replaced by a fresh one


def test_a_worker_killed_mid_run_loses_no_page(pm, cluster, tmp_path) -> None:
    names = ["gate", *(f"p{i}" for i in range(7))]
    archive = build_archive(tmp_path / "a.nitpicker", probe_site(*names))
    log, gate = tmp_path / "log", tmp_path / "gate"
    outcome: dict[str, Any] = {}
    config = probe_config(pm, log, gate)
    runner = threading.Thread(
        target=lambda: outcome.update(run=analyze(pm, config, archive, ["slowprobe"], executor=cluster))
    )
    runner.start()
    wait_until(
        lambda: any(url.endswith("/gate") for _, url in log_lines(log, "start")), "the gate page to start"
    )
    killed = int(next(pid for pid, url in log_lines(log, "start") if url.endswith("/gate")))
    os.kill(killed, signal.SIGKILL)  # the worker process; its nanny starts another
    wait_until(lambda: not _alive(killed), "the worker to die")
    gate.touch()
    runner.join(300)
    summary = outcome["run"].summaries["slowprobe"]
    assert (summary.pages, summary.errors, summary.violations) == (8, 0, 8)
    cells = stored(archive, "slowprobe")["cells"]
    assert Counter(c["url"] for c in cells if c["column"] == "length") == {SITE + "/" + n: 1 for n in names}
    gate_pid = next(c["value"] for c in cells if c["url"].endswith("/gate") and c["column"] == "pid")
    assert gate_pid != killed  # recorded once, by the worker that finished it
    starts = [pid for pid, url in log_lines(log, "start") if url.endswith("/gate")]
    assert len(starts) == 2 and int(starts[0]) == killed  # Dask ran it again elsewhere


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_cluster_that_goes_away_interrupts_the_run_and_the_next_run_finishes_it(pm, dist, tmp_path) -> None:
    names = ["p0", "p1", "p2", "zgate"]  # pages go out in URL order: the gate is the last one
    archive = build_archive(tmp_path / "a.nitpicker", probe_site(*names))
    log, gate = tmp_path / "log", tmp_path / "gate"
    port = _free_port()
    env = dict(os.environ, **_with_path(dist))
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            f"tcp://127.0.0.1:{port}",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--host",
            "127.0.0.1",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        (tmp_path / "nitpicker.toml").write_text(f'[plugins.slowprobe]\nlog = "{log}"\ngate = "{gate}"\n')
        cli = RunningCli(
            "analyze",
            "--executor",
            f"dask://127.0.0.1:{port}",
            "--plugin",
            "slowprobe",
            str(archive),
            cwd=tmp_path,
            env={"NITPICKER_LOAD_PLUGINS": ",".join(sorted(PLUGINS)), **_with_path(dist)},
        )
        wait_until(
            lambda: (
                cli.proc.poll() is not None
                or (
                    len(log_lines(log, "reported")) == 3 and log_lines(log, "start")[-1][1].endswith("/zgate")
                )
            ),
            "three pages recorded and the gate page started",
        )
        assert cli.proc.poll() is None, cli.stderr
        os.killpg(scheduler.pid, signal.SIGKILL)
        assert cli.wait() == 130, cli.stderr
        said = [line for line in cli.lines if line.startswith("nitpicker: ")]
        assert said == [GONE, ANALYZE_AGAIN], cli.stderr  # the reason as a crawl says it, then what to do
    finally:
        for process in (worker, scheduler):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    gate.touch()
    finished = analyze(pm, probe_config(pm, log, gate), archive, ["slowprobe"])  # here: the cluster is gone
    summary = finished.summaries["slowprobe"]
    assert (summary.pages, summary.cached, summary.errors) == (4, 3, 0)  # what came back before is kept
    assert [url for _, url in log_lines(log, "start")][-1:] == [SITE + "/zgate"]
    assert len(log_lines(log, "start")) == 5 and len(stored(archive, "slowprobe")["cells"]) == 8


def test_a_pipeline_whose_cluster_dies_during_analyze_says_why_and_how_to_resume(
    dist, site, tmp_path
) -> None:
    gate = f"{site}/dask-gate/pipeline-analyze"
    _open_gate(gate)  # its pages render at once; all of them hold in slowprobe ("gate" in their URL)
    log = tmp_path / "log"
    (tmp_path / "nitpicker.toml").write_text(
        f'[plugins.slowprobe]\nlog = "{log}"\ngate = "{tmp_path / "gate"}"\n'
    )
    with hand_cluster(workers=1, env=_with_path(dist)) as cluster:
        cli = RunningCli(
            "pipeline",
            "-o",
            "g.nitpicker",
            "--render",
            "never",
            "--plugin",
            "slowprobe",
            "--executor",
            cluster.executor,
            f"{gate}/",
            cwd=tmp_path,
            env={"NITPICKER_LOAD_PLUGINS": ",".join(sorted(PLUGINS)), **_with_path(dist)},
        )
        wait_until(
            lambda: cli.proc.poll() is not None or log_lines(log, "start"),
            "a page analyzed on the worker",
            300,
        )
        assert cli.proc.poll() is None, cli.stderr
        cluster.kill_scheduler()
        assert cli.wait() == 130, cli.stderr
    (journal,) = (tmp_path / "g.nitpicker.runs").glob("*.jsonl")
    resume = f"nitpicker pipeline --resume g.nitpicker.runs/{journal.name} --executor {cluster.executor}"
    said = [line for line in cli.lines if line.startswith("nitpicker: ")]
    assert said == [GONE, f"nitpicker: interrupted; resume with: {resume}"], cli.stderr
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    failed = next(e for e in events if e["event"] == "stage_failed")
    assert (failed["stage"], failed["reason"], f"nitpicker: {failed['message']}") == (
        "analyze",
        "interrupted",
        GONE,
    )
    assert events[-1]["event"] == "run_finished" and events[-1]["exit_code"] == 130


def _open_gate(gate: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{gate}/open", method="POST"), timeout=30).close()


# what crawl, analyze and pipeline say when the Dask scheduler they worked with is killed
GONE = (
    "nitpicker: the Dask cluster is gone (Client lost the connection to the scheduler. Please check your "
    "connection and re-run your work.)"
)
ANALYZE_AGAIN = "nitpicker: interrupted; run the same command again to finish (the pages done are kept)"


def _nitpicker_environment(client: Any) -> dict[str, dict[str, str]]:
    """Each worker's NITPICKER_* variables (a lambda: pickled by value, the workers cannot import this module)."""
    return client.run(
        lambda: {k: v for k, v in __import__("os").environ.items() if k.startswith("NITPICKER_")}
    )


def test_the_clients_nitpicker_variables_are_not_left_on_the_workers(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "a.nitpicker", findings_site())
    with hand_cluster(workers=1) as cluster:
        before = _nitpicker_environment(cluster.client)
        result = run_cli(
            "analyze",
            "--executor",
            cluster.executor,
            "--plugin",
            "markup",
            "--json",
            str(archive),
            cwd=tmp_path,
            env={"NITPICKER_TEST_MARK": "the-client-only", "NITPICKER_FINDINGS": "1"},
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["analyzers"]["markup"]["mode"] == "dask"
        after = _nitpicker_environment(cluster.client)
    assert after == before  # the workers' own environment, as it was before the run
    assert all("NITPICKER_TEST_MARK" not in env for env in after.values())


def test_pages_go_in_batches_of_a_quarter_second_and_of_a_fair_share_of_what_is_left() -> None:
    tasks = [Task(f"{SITE}/p{i}", f"sha{i}", {}) for i in range(100)]
    batches = Batches(tasks, threads=2)  # 2 batches in flight per thread: 4 slots
    sent = list(batches.fill(0))
    assert [len(b) for b in sent] == [1, 1, 1, 1]  # nothing measured yet: a page a task
    batches.measured(4, 0.04)  # 10 ms a page: 25 pages make a quarter second
    sent += list(batches.fill(3))
    assert len(sent[-1]) == 24  # a quarter of the 96 pages left, less than 25
    sent += list(batches.fill(3))
    assert len(sent[-1]) == 18  # a quarter of 72
    batches.measured(42, 42 * 1.0)  # pages of a second: one a task again
    sent += list(batches.fill(0))
    assert [len(b) for b in sent[-4:]] == [1, 1, 1, 1]
    while batch := next(batches.fill(3), None):
        sent.append(batch)
    assert [t for batch in sent for t in batch] == tasks  # each page once, in order
    many = Batches([Task(f"{SITE}/p{i}", f"sha{i}", {}) for i in range(1000)], threads=2)
    many.measured(1, 0.0)  # too fast to time
    assert [len(b) for b in many.fill(0)] == [dask_pool.MAX_BATCH] * 4


def test_fast_pages_go_to_the_workers_in_batches_each_recorded_once(pm, cluster, tmp_path) -> None:
    names = [f"p{i:02}" for i in range(60)]
    archive = build_archive(tmp_path / "a.nitpicker", probe_site(*names))
    log = tmp_path / "log"
    run = analyze(pm, probe_config(pm, log), archive, ["slowprobe"], executor=cluster)
    summary = run.summaries["slowprobe"]
    assert (summary.pages, summary.errors, summary.violations) == (60, 0, 60)
    assert run.stats["executor"]["tasks"] <= 30  # a task a page before: Dask's own cost for each page
    cells = stored(archive, "slowprobe")["cells"]
    assert Counter(c["url"] for c in cells if c["column"] == "length") == {SITE + "/" + n: 1 for n in names}
    assert sorted(url for _, url in log_lines(log, "start")) == [SITE + "/" + n for n in names]


def test_a_page_over_time_ends_its_batch_on_the_worker(pm, cluster, tmp_path) -> None:
    from nitpicker_core.analyze.dask_worker import AnalyzerPlugin, each_batch

    log = tmp_path / "log"
    config = probe_config(pm, log)
    spec = WorkerSpec(tuple(pm.enabled_names()), "slowprobe", "slowprobe", dict(config.values), "", {})
    name = "nitpicker-analyze-test-batch"
    cluster.register_plugin(AnalyzerPlugin(name, spec), name=name)
    html = [("zlib", zlib.compress(f"<p>{n}</p>".encode())) for n in ("one", "hang", "two")]
    tasks = [tuple(Task(f"{SITE}/{n}", "sha", {})) for n in ("one", "hang", "two")]
    batch = None
    try:
        batch = cluster.submit(each_batch, name, tasks, html, 3.0, pure=False).result(timeout=300)
        assert batch.restart and not batch.need_html and batch.html_from == "shipped"
        first, late = (pickle.loads(outcome) for outcome in batch.outcomes)  # "two" did not run
        assert (first.url, first.error, late.url, late.timed_out) == (
            f"{SITE}/one",
            None,
            f"{SITE}/hang",
            True,
        )
        assert [url for _, url in log_lines(log, "start")] == [f"{SITE}/one", f"{SITE}/hang"]
    finally:
        cluster.unregister_worker_plugin(name)
        # the hung page's thread goes with its worker
        cluster.restart_workers([batch.worker] if batch else list(cluster.nthreads()), raise_for_error=False)


def test_a_page_over_time_among_fast_ones_is_the_only_error_and_every_page_is_recorded_once(
    pm, cluster, tmp_path
) -> None:
    names = [*(f"p{i:02}" for i in range(20)), "q-hang", *(f"r{i:02}" for i in range(10))]
    archive = build_archive(tmp_path / "a.nitpicker", probe_site(*names))
    run = analyze(pm, probe_config(pm, tmp_path / "log"), archive, ["slowprobe"], timeout=3, executor=cluster)
    summary = run.summaries["slowprobe"]
    assert (summary.pages, summary.errors, summary.timeouts, summary.violations) == (31, 1, 1, 30)
    assert run.stats["executor"]["worker_restarts"] == 1
    cells = stored(archive, "slowprobe")["cells"]
    recorded = Counter(c["url"] for c in cells if c["column"] == "length")
    assert recorded == {SITE + "/" + n: 1 for n in names if n != "q-hang"}


def _allowed_failures(client: Any, value: int) -> None:
    def change(dask_scheduler: Any) -> None:  # nested: pickled by value (the scheduler cannot import tests)
        dask_scheduler.allowed_failures = value

    client.run_on_scheduler(change)


def test_a_page_that_kills_every_worker_is_the_only_error_of_its_batch(
    pm, dist, tmp_path, monkeypatch
) -> None:
    names = [*(f"p{i:02}" for i in range(20)), "q-die", *(f"r{i:02}" for i in range(10))]
    archive = build_archive(tmp_path / "a.nitpicker", probe_site(*names))
    # one worker, one task at a time: Dask blames every task a dying worker holds, here only the killer's
    monkeypatch.setattr(dask_pool, "IN_FLIGHT_PER_THREAD", 1)
    with hand_cluster(workers=1, env=_with_path(dist)) as cluster:
        _allowed_failures(cluster.client, 0)  # a task fails at its first dead worker: a quicker test
        config = probe_config(pm, tmp_path / "log")
        run = analyze(pm, config, archive, ["slowprobe"], executor=cluster.client)
    summary = run.summaries["slowprobe"]
    assert (summary.pages, summary.errors, summary.violations) == (31, 1, 30)
    (error,) = stored(archive, "slowprobe")["errors"]
    assert error["url"] == SITE + "/q-die" and error["message"].startswith("worker exited on every attempt")
    assert run.stats["executor"]["tasks"] > 31  # the killer's batch went out again a page a task
