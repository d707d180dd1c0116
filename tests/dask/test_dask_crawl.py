"""Crawling on Dask workers (issue 20): a real LocalCluster of worker processes on 127.0.0.1 renders test_server.

The queue, preflights and the archive writer stay in the crawling process; each worker's own Chromium runs
the scrape hooks. The archive must be the one a local crawl writes, a worker killed mid-crawl must lose no
page, and a cluster that goes away must leave a resumable, interrupted crawl.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hand_cluster import hand_cluster
from support import RunningCli, run_cli, server_hits, wait_until

from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.remote import RenderJob
from nitpicker_core.hookspecs import hookimpl
from nitpicker_core.plugins import make_plugin_manager
from test_server.routes.dask_gate import LEAVES

TOKEN = "audit-token-4711"


def executor_of(client: Any) -> str:
    return "dask://" + str(client.scheduler.address).removeprefix("tcp://")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def _open_gate(gate: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{gate}/open", method="POST"), timeout=30).close()


def _one_error_line(stderr: str) -> str:
    """The error the CLI printed, checked to be one line (warnings about the environment aside)."""
    errors = [line for line in stderr.splitlines() if not line.startswith("nitpicker: warning:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


@pytest.fixture(scope="module")
def crawled(site: str, dask_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """The same roots (basic auth, a --header, links out) crawled here and on the cluster, by the real CLI."""
    host = site.split("://", 1)[1]
    roots = [f"http://user:secret@{host}/auth/", f"{site}/headers/"]
    flags = ["--no-image", "--parallels", "2", "--header", f"X-Audit: {TOKEN}", "--json", *roots]
    work = tmp_path_factory.mktemp("dask-crawl")
    local = run_cli("crawl", "-o", str(work / "local.nitpicker"), *flags, cwd=work, timeout=300)
    remote = run_cli(
        "crawl",
        "-o",
        str(work / "dask.nitpicker"),
        "--executor",
        executor_of(dask_cluster),
        "--verbose",
        *flags,
        cwd=work,
        timeout=300,
    )
    return work, local, remote


def test_a_cluster_crawl_stores_what_a_local_crawl_stores(crawled: tuple[Path, Any, Any], site: str) -> None:
    work, local, remote = crawled
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    with open_archive(work / "local.nitpicker") as here, open_archive(work / "dask.nitpicker") as there:
        states = here.row_hashes()
        assert len(states) == 5
        assert there.row_hashes() == states  # the same URLs in the same page states (content hashes)
        assert {u: there.anchors(u) for u in states} == {u: here.anchors(u) for u in states}
        titles = {page["url"]: page["title"] for page in there.pages()}
    external = site.replace("localhost", "127.0.0.1")
    assert (
        titles[f"{site}/auth/inner"] == "Welcome user"
    )  # the root's credentials reached the worker's browser
    assert titles[f"{site}/headers/inner"] == f"Header {hashlib.sha256(TOKEN.encode()).hexdigest()[:12]}"
    assert titles[f"{external}/headers/outside"] == "Header none"  # --header values stay in scope there too
    assert json.loads(remote.stdout)["rendered"] == json.loads(local.stdout)["rendered"]
    # secrets go to the workers inside the task, never in its key, its repr or the log
    assert TOKEN not in remote.stderr and "secret" not in remote.stderr
    job = RenderJob(
        "p", f"{site}/auth/", False, 1.0, {"username": "user", "password": "secret"}, {"X-Audit": TOKEN}
    )
    assert "secret" not in repr(job) and TOKEN not in repr(job)


class _Recorded:
    """Counts ``crawl_page_scraped`` per URL: a page recorded twice would show as 2."""

    def __init__(self) -> None:
        self.urls: Counter[str] = Counter()

    @hookimpl
    def crawl_page_scraped(self, result: Any, crawl: Any) -> None:
        self.urls[result.url] += 1


def test_a_worker_killed_mid_crawl_loses_no_page(site: str, dask_cluster: Any, tmp_path: Path) -> None:
    gate = f"{site}/dask-gate/killed"
    pm = make_plugin_manager()
    recorded = _Recorded()
    pm.register(recorded, name="test-recorded")
    options = CrawlOptions(roots=[f"{gate}/"], parallels=2, image=False, user_agent="Nitpicker/test")
    crawler = Crawler(pm, options, tmp_path / "killed.nitpicker", executor=dask_cluster)
    killed: dict[str, int] = {}
    failed: list[BaseException] = []

    def kill_a_rendering_worker() -> None:
        try:
            wait_until(
                lambda: _get(f"{gate}/waiting")["waiting"] >= 2, "two renders held on the workers", 300
            )
            busy = [
                worker
                for worker, keys in dask_cluster.processing().items()
                if any(str(key).startswith("nitpicker-render-") for key in keys)
            ]
            killed.update(dask_cluster.run(os.getpid, workers=busy[:1]))
            os.kill(next(iter(killed.values())), signal.SIGKILL)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failed.append(exc)
        finally:
            _open_gate(gate)

    helper = threading.Thread(target=kill_a_rendering_worker, daemon=True)
    helper.start()
    stats = asyncio.run(crawler.run())  # in the main thread: the crawl owns the signals
    helper.join(timeout=60)
    assert not failed, failed
    assert killed, "no worker was rendering a held page"
    assert stats.status == "complete" and stats.internal_errors == 0, stats
    pages = [f"{gate}/", *(f"{gate}/{leaf}" for leaf in LEAVES)]
    assert recorded.urls == Counter(pages)  # every page, each recorded once
    with open_archive(tmp_path / "killed.nitpicker") as reader:
        assert {p["url"]: p["title"] for p in reader.pages()} == {
            f"{gate}/": "Dask Gate",
            **{f"{gate}/{leaf}": f"Leaf {leaf.title()}" for leaf in LEAVES},
        }
        assert reader.crawl_errors() == []
    # the killed worker's page was rendered again elsewhere: one more script request than there are leaves
    assert server_hits(site, "/dask-gate/killed/hold.js") > len(LEAVES)
    with pytest.raises(ProcessLookupError):
        os.kill(next(iter(killed.values())), 0)
    # dask-local workers, the restarted one too, leave a terminal's Ctrl-C to the command (it stops in order)
    assert set(dask_cluster.run(signal.getsignal, signal.SIGINT).values()) == {signal.SIG_IGN}


def test_a_cluster_that_goes_away_leaves_an_interrupted_crawl(site: str, tmp_path: Path) -> None:
    from distributed import LocalCluster

    gate = f"{site}/dask-gate/gone"
    archive = tmp_path / "gone.nitpicker"
    try:
        with LocalCluster(
            n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        ) as cluster:
            address = "dask://" + str(cluster.scheduler_address).removeprefix("tcp://")
            cli = RunningCli(
                "crawl", "-o", str(archive), "--no-image", "--executor", address, f"{gate}/", cwd=tmp_path
            )
            wait_until(
                lambda: _get(f"{gate}/waiting")["waiting"] >= 1 or cli.proc.poll() is not None,
                "a render held on the worker",
                300,
            )
        code = cli.wait(timeout=240)
    finally:
        _open_gate(gate)
    assert code == 130, cli.stderr
    assert "the Dask cluster is gone" in cli.stderr and "Traceback" not in cli.stderr
    assert f"interrupted; resume with: nitpicker crawl --resume {archive}" in cli.stderr
    with open_archive(archive) as reader:  # what --resume goes on from: the held leaves pending, none failed
        assert [c["status"] for c in reader.commits()] == ["interrupted"]
        pages = {p["url"]: (p["scraped"], p["status"]) for p in reader.pages()}
        assert pages == {f"{gate}/": (True, 200), **{f"{gate}/{leaf}": (False, None) for leaf in LEAVES}}
        assert reader.crawl_errors() == []


NO_DASK = """
import sys

class NoDask:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NoDask())
from nitpicker_cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_executor_refusals_are_one_line(site: str, tmp_path: Path) -> None:
    without = subprocess.run(
        [sys.executable, "-c", NO_DASK, "crawl", "--executor", "dask-local:2", f"{site}/recursive/"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert without.returncode != 0
    assert _one_error_line(without.stderr).endswith('needs Dask: pip install "nitpicker[dask]"')
    assert list(tmp_path.iterdir()) == []  # refused before anything was made
    for command in ("crawl", "pipeline"):
        bad = run_cli(command, "--executor", "dask-lokal", f"{site}/recursive/", cwd=tmp_path)
        assert bad.returncode != 0
        assert "expected local, dask-local[:N] or dask://HOST:PORT" in _one_error_line(bad.stderr), command


def _browsers(client: Any, workers: list[str]) -> dict[str, list[str]]:
    """The Chromium processes under each of ``workers`` (a lambda: pickled by value)."""
    return client.run(
        lambda: [
            p.name()
            for p in __import__("psutil").Process().children(recursive=True)
            if "chrom" in p.name().lower()
        ],
        workers=workers,
    )


def test_a_worker_without_nitpicker_is_refused_up_front_by_its_address(site: str, tmp_path: Path) -> None:
    with hand_cluster(workers=1, without_nitpicker=1) as cluster:
        pids = cluster.client.run(os.getpid)
        lacking = next(address for address, pid in pids.items() if pid == cluster.workers[-1].pid)
        good = [address for address in pids if address != lacking]
        archive = tmp_path / "refused.nitpicker"
        cli = run_cli(
            "crawl",
            "-o",
            str(archive),
            "--no-image",
            "--executor",
            cluster.executor,
            f"{site}/recursive/",
            cwd=tmp_path,
            timeout=300,
        )
        assert cli.returncode == 1, cli.stderr
        line = _one_error_line(
            cli.stderr.replace(f"connecting to the Dask scheduler {cluster.executor}\n", "")
        )
        assert line == (
            f"nitpicker: error: --executor {cluster.executor}: nitpicker is not installed on the Dask worker "
            f"{lacking}"
        ), cli.stderr
        assert not archive.exists()
        # the worker that has nitpicker was never left with a browser of the refused crawl
        assert _browsers(cluster.client, good) == {good[0]: []}
        assert not [
            name
            for plugins in cluster.client.run(lambda dask_worker: list(dask_worker.plugins)).values()
            for name in plugins
            if name.startswith("nitpicker-")
        ]


# A sitecustomize for the command's environment: nitpicker cannot be imported in the processes multiprocessing
# spawns (a dask-local cluster's workers), as when they start from another interpreter than the command's; the
# command itself imports it as usual.
WORKERS_WITHOUT_NITPICKER = """
import sys

if "--multiprocessing-fork" in sys.argv:
    class NoNitpicker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0].startswith("nitpicker"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoNitpicker())
"""

# The command run by ``python -c``: a spawned process imports the parent's main module again (a console
# script or ``-m nitpicker_cli.main`` would import nitpicker there before any worker starts), ``-c`` has none
CLI = "import sys; from nitpicker_cli.main import main; sys.exit(main(sys.argv[1:]))"


def _signals_by_default() -> None:
    """``preexec_fn``: SIGINT and SIGHUP at their defaults in the child, as a terminal starts a command."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _crawl_with_workers_without_nitpicker(
    started: list[str], site: str, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``crawl --executor dask-local:1`` started as ``python STARTED…``, its workers unable to import nitpicker."""
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text(WORKERS_WITHOUT_NITPICKER)
    path = os.pathsep.join(filter(None, [str(custom), os.environ.get("PYTHONPATH")]))
    archive = tmp_path / "refused.nitpicker"
    cli = subprocess.run(
        [sys.executable, *started, "crawl", "-o", str(archive), "--no-image", "--executor", "dask-local:1"]
        + [f"{site}/recursive/"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_signals_by_default,
    )
    return cli, archive


def test_a_dask_local_worker_without_nitpicker_is_refused_up_front_by_its_address(
    site: str, tmp_path: Path
) -> None:
    cli, archive = _crawl_with_workers_without_nitpicker(["-c", CLI], site, tmp_path)
    assert cli.returncode == 1, cli.stderr
    line = _one_error_line(
        cli.stderr.replace("starting a Dask cluster of 1 worker processes on 127.0.0.1\n", "")
    )
    assert re.fullmatch(
        r"nitpicker: error: --executor dask-local:1: nitpicker is not installed on the Dask worker "
        r"tcp://127\.0\.0\.1:\d+",
        line,
    ), cli.stderr
    assert not archive.exists()


def test_dask_local_workers_that_die_before_they_start_are_one_line_of_nitpickers(
    site: str, tmp_path: Path
) -> None:
    # run as a module (a console script alike), the command's main module is imported again in each worker
    # process before Dask runs there: without nitpicker the workers die at once, printing their traceback
    cli, archive = _crawl_with_workers_without_nitpicker(["-m", "nitpicker_cli.main"], site, tmp_path)
    assert cli.returncode == 1, cli.stderr
    said = [line for line in cli.stderr.splitlines() if line.startswith("nitpicker: ")]
    assert said == [
        "nitpicker: error: --executor dask-local:1: the Dask worker processes did not start "
        "(RuntimeError: Nanny failed to start.)"
    ], cli.stderr
    assert not archive.exists()


def test_a_worker_that_cannot_start_its_browser_leaves_no_chromium_on_the_others(
    site: str, tmp_path: Path
) -> None:
    # nitpicker is there (the check up front passes) but Playwright is not: the browser plugin's setup fails
    with hand_cluster(workers=1, without_nitpicker=1, blocked="playwright") as cluster:
        pids = cluster.client.run(os.getpid)
        good = [address for address, pid in pids.items() if pid != cluster.workers[-1].pid]
        cli = run_cli(
            "crawl",
            "--no-image",
            "--executor",
            cluster.executor,
            f"{site}/recursive/",
            cwd=tmp_path,
            timeout=300,
        )
        assert cli.returncode == 1, cli.stderr
        line = _one_error_line(
            cli.stderr.replace(f"connecting to the Dask scheduler {cluster.executor}\n", "")
        )
        assert line == (
            "nitpicker: error: the crawl's browser could not be set up on the Dask workers "
            "(ModuleNotFoundError: No module named 'playwright')"
        ), cli.stderr
        # the browser the other worker started for the crawl is stopped with it
        wait_until(
            lambda: _browsers(cluster.client, good) == {good[0]: []}, "no Chromium on the good worker", 120
        )
        assert not [
            name
            for plugins in cluster.client.run(lambda dask_worker: list(dask_worker.plugins)).values()
            for name in plugins
            if name.startswith("nitpicker-")
        ]


def test_a_scheduler_that_dies_is_said_after_the_progress_display_with_the_executor_to_resume_on(
    site: str, tmp_path: Path
) -> None:
    from cli_terminal.pty_terminal import Terminal

    gate = f"{site}/dask-gate/scheduler-dies"
    try:
        with hand_cluster(workers=1) as cluster:
            term = Terminal(
                "crawl",
                "-o",
                "dies.nitpicker",
                "--no-image",
                "--executor",
                cluster.executor,
                f"{gate}/",
                cwd=tmp_path,
            )
            term.wait_for(r"Crawling:.* [1-9]\d* in progress")  # the live display is drawing
            wait_until(
                lambda: _get(f"{gate}/waiting")["waiting"] >= 1 or term.proc.poll() is not None,
                "a render held on the worker",
                300,
            )
            cluster.kill_scheduler()
            code = term.wait(timeout=240)
    finally:
        _open_gate(gate)
    assert code == 130, term.text[-3000:]
    fragments = term.fragments()
    gone = [i for i, f in enumerate(fragments) if "the Dask cluster is gone" in f]
    drawn = [i for i, f in enumerate(fragments) if f.startswith("Crawling:")]
    assert gone and drawn, fragments[-20:]
    assert drawn[-1] < gone[0], fragments[-20:]  # the reason comes after the display's last drawing
    resume = f"nitpicker crawl --resume dies.nitpicker --executor {cluster.executor}"
    assert f"nitpicker: interrupted; resume with: {resume}" in fragments, fragments[-20:]
    assert "Traceback" not in term.text


def test_a_pipeline_whose_scheduler_dies_says_so_after_the_display_with_the_executor_to_resume_on(
    site: str, tmp_path: Path
) -> None:
    from cli_terminal.pty_terminal import Terminal

    gate = f"{site}/dask-gate/pipeline-scheduler-dies"
    try:
        with hand_cluster(workers=1) as cluster:
            term = Terminal(
                "pipeline",
                "-o",
                "dies.nitpicker",
                "--no-analyze",
                "--no-image",
                "--executor",
                cluster.executor,
                f"{gate}/",
                cwd=tmp_path,
            )
            term.wait_for(r"Crawling:.* [1-9]\d* in progress")  # the live display is drawing
            wait_until(
                lambda: _get(f"{gate}/waiting")["waiting"] >= 1 or term.proc.poll() is not None,
                "a render held on the worker",
                300,
            )
            cluster.kill_scheduler()
            code = term.wait(timeout=240)
    finally:
        _open_gate(gate)
    assert code == 130, term.text[-3000:]
    fragments = term.fragments()
    gone = [i for i, f in enumerate(fragments) if f.startswith("nitpicker: the Dask cluster is gone (")]
    drawn = [i for i, f in enumerate(fragments) if f.startswith("Crawling:")]
    assert len(gone) == 1 and drawn, fragments[-20:]
    assert drawn[-1] < gone[0], fragments[-20:]  # the reason comes after the display's last drawing
    (journal,) = (tmp_path / "dies.nitpicker.runs").glob("*.jsonl")
    resume = f"nitpicker pipeline --resume dies.nitpicker.runs/{journal.name} --executor {cluster.executor}"
    assert fragments[gone[0] + 1] == f"nitpicker: interrupted; resume with: {resume}", fragments[-20:]
    assert "Traceback" not in term.text and not [f for f in fragments if f.startswith("nitpicker: error")]
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    failed = next(e for e in events if e["event"] == "stage_failed")
    assert (failed["stage"], failed["reason"]) == ("crawl", "interrupted")
    assert f"nitpicker: {failed['message']}" == fragments[gone[0]]  # the journal says the same
    assert events[-1]["event"] == "run_finished" and events[-1]["exit_code"] == 130


# A dask-local cluster whose worker's heartbeat fails while the worker closes, as a loaded machine makes it
# (the scheduler stops answering before its workers are gone): the plugin's teardown, run during the worker's
# close, sends one heartbeat to a server that answers it with a connection error.
CLOSING_HEARTBEAT = """
from distributed import WorkerPlugin
from distributed.core import Server, rpc

from nitpicker_core.executors import dask_client, parse_executor


async def closing(comm=None, **kwargs):
    raise OSError("the scheduler is closing")


class HangUp(WorkerPlugin):
    async def teardown(self, worker):
        server = Server({"heartbeat_worker": closing})
        await server.listen("tcp://127.0.0.1:0")
        worker.scheduler = rpc(server.address)
        await worker.heartbeat()  # logs "Failed to communicate with scheduler during heartbeat." and its traceback
        print("heartbeat failed", flush=True)


with dask_client(parse_executor("dask-local:1")) as client:
    client.register_plugin(HangUp(), name="hang-up")
print("closed", flush=True)
"""


def test_a_heartbeat_failing_while_dask_local_workers_close_prints_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLOSING_HEARTBEAT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["heartbeat failed", "closed"], done.stdout + done.stderr
    assert done.stderr == ""


def test_a_dask_local_crawl_ends_without_distributeds_noise(site: str, tmp_path: Path) -> None:
    crawled = run_cli(
        "crawl", "--no-image", "--executor", "dask-local:2", f"{site}/recursive/", cwd=tmp_path, timeout=300
    )
    assert crawled.returncode == 0, crawled.stderr
    said = [line for line in crawled.stderr.splitlines() if not line.startswith("nitpicker: warning:")]
    # what the command says, and nothing from Dask's workers or scheduler as the cluster shuts down
    assert len(said) == 3 and said[0].startswith("starting a Dask cluster"), crawled.stderr
    assert said[1].startswith("complete: 5 URLs"), crawled.stderr
    assert said[2].startswith("AI crawlers: "), crawled.stderr  # the summary's robots.txt line
