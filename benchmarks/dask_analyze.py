"""Analyze on Dask vs the local pools: the same archive, markup and text, alternating in one run.

Writes one synthetic archive of rendered pages (``analyze_throughput.build``: 30-80 KB of varied HTML a page),
copies it once per run, then alternates ``analyze`` with the local executor (each analyzer's pool of 2
worker processes) and with each cluster of ``--cluster`` (started once and shared by its runs, as a
pipeline shares one; its start is timed on its own):

  dask-local   a LocalCluster of ``--workers`` single-threaded worker processes (``--executor dask-local:N``);
               its scheduler runs in this process
  hand         a scheduler and ``--workers`` workers started here by hand as processes of their own on
               127.0.0.1 (``python -m distributed.cli.dask_scheduler``, ``dask_worker --nthreads 1``), as an
               operator starts a cluster (``--executor dask://HOST:PORT``)
  tcp://H:P    a scheduler already running there, with its workers

``--site gen_site`` analyzes ``gen_site.py``'s pages instead (about 8 KB of HTML each; ``NITPICKER_BENCH_DIR``
names the folder of ``gen_site.py`` when it is not ``../shared/bench``); ``--unbatched`` also runs each cluster
with one page a Dask task, as analyze did before it sent pages in batches (labelled ``CLUSTER/1``).

Prints pages/s of each run with the 1-minute load average around it, the workers' CPU milliseconds per page,
this process's (the client's: the engine, the writer, Dask's client; a LocalCluster's scheduler too) and a
separate scheduler's, the workers' memory (RSS) after each run, and from Dask's task stream how busy the
workers were (compute time over wall time x workers), the median task and the median gap a worker waited
between two tasks. Then the median ratio of each cluster to local (target >= 0.7) and whether every run
stored exactly the same cells, findings and errors.

    python benchmarks/dask_analyze.py                    # 300 pages, 3 rounds, dask-local
    python benchmarks/dask_analyze.py --cluster hand --cluster dask-local --rounds 2
    python benchmarks/dask_analyze.py --cluster hand --unbatched --site gen_site
    python benchmarks/dask_analyze.py --pages 100 --rounds 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))
sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

NAMES = ["markup", "text"]


def worker_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stored(archive: Path) -> Any:
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        return [
            (reader.analysis(analyzer=n), reader.violations(analyzer=n), reader.analyzer_errors(analyzer=n))
            for n in NAMES
        ]


def build_small(target: Path, pages: int, work: Path) -> dict[str, Any]:
    """An archive of ``gen_site.py``'s content pages (about 8 KB of HTML each), stored as rendered pages."""
    import subprocess

    from crawl_throughput import BENCH

    from nitpicker_core.archive import ArchiveWriter
    from nitpicker_core.records import ScrapeResult

    site = work / "site"
    subprocess.run(
        [sys.executable, str(BENCH / "gen_site.py"), "--pages", str(pages), "--out", str(site)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit()
    total = 0
    for i in range(pages):
        path = f"s{i % 10}/page-{i}.html"
        html = (site / path).read_text()
        total += len(html.encode())
        result = ScrapeResult(
            url=f"http://127.0.0.1:8000/{path}",
            status=200,
            status_text="OK",
            content_type="text/html",
            content_length=len(html),
            metadata={"title": f"Page {i}"},
            html=html,
        )
        writer.put_pages(commit, [result])
    writer.finish_commit(commit, "complete")
    writer.write()
    writer.close(remove_stub=True)
    shutil.rmtree(site)
    return {
        "pages": pages,
        "html_mb": round(total / 1e6, 1),
        "archive_mb": round(target.stat().st_size / 1e6, 1),
    }


def load() -> float:
    return round(os.getloadavg()[0], 1)


def task_stream(records: list[dict[str, Any]], seconds: float, workers: int) -> dict[str, Any]:
    """How busy the workers were, from the scheduler's task stream of one run."""
    computes: dict[str, list[tuple[float, float]]] = {}
    for record in records:
        for span in record.get("startstops", ()):
            if span.get("action") == "compute":
                computes.setdefault(record["worker"], []).append((span["start"], span["stop"]))
    spans = sorted(stop - start for items in computes.values() for start, stop in items)
    gaps = []
    for items in computes.values():
        items.sort()
        gaps += [b[0] - a[1] for a, b in zip(items, items[1:], strict=False)]
    if not spans:
        return {}
    return {
        "tasks": len(spans),
        "busy": round(sum(spans) / (seconds * workers), 3),
        "task_ms_median": round(1000 * statistics.median(spans), 1),
        "gap_ms_median": round(1000 * statistics.median(gaps), 1) if gaps else None,
        "gap_ms_p90": round(1000 * statistics.quantiles(gaps, n=10)[-1], 1) if len(gaps) > 1 else None,
    }


def timed(pm: Any, config: Any, archive: Path, pages: int, client: Any) -> dict[str, Any]:
    """One analyze run, on ``client``'s cluster or (None) the local pools."""
    from nitpicker_core.analyze import analyze

    def cluster_cpu() -> float:
        return sum(client.run(worker_cpu).values())

    before = {"load": load(), "self": worker_cpu()}
    if client is not None:
        before["workers"] = cluster_cpu()
        before["scheduler"] = client.run_on_scheduler(worker_cpu)
        client.get_task_stream()  # starts the scheduler's recording, if it did not yet
    wall = time.time()
    started = time.perf_counter()
    run = analyze(pm, config, archive, NAMES, executor=client)
    seconds = time.perf_counter() - started
    assert all(run.summaries[n].pages == pages and run.summaries[n].errors == 0 for n in NAMES), run.summary()
    result: dict[str, Any] = {
        "seconds": round(seconds, 2),
        "pages_per_s": round(pages / seconds, 2),
        "load": [before["load"], load()],
        "modes": {n: run.summaries[n].mode for n in NAMES},
        # the local pools' workers are the forkserver's children, gone when the run ends: not counted
        "client_cpu_ms_per_page": round(1000 * (worker_cpu() - before["self"]) / pages, 1),
    }
    if client is not None:
        result["worker_cpu_ms_per_page"] = round(1000 * (cluster_cpu() - before["workers"]) / pages, 1)
        if getattr(client, "cluster", None) is None:  # a LocalCluster's scheduler is this process
            scheduler = client.run_on_scheduler(worker_cpu) - before["scheduler"]
            result["scheduler_cpu_ms_per_page"] = round(1000 * scheduler / pages, 1)
        workers = len(client.nthreads())
        result["stream"] = task_stream(client.get_task_stream(start=wall), seconds, workers)
        result["html"] = sorted(set(run.stats["executor"]["html"].values()))
    return result


def worker_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextlib.contextmanager
def cluster(kind: str, workers: int, work: Path) -> Iterator[Any]:
    """A connected client of the cluster ``kind`` (dask-local, hand or tcp://HOST:PORT), closed at the end."""
    from distributed import Client

    from nitpicker_core.executors import check_workers, dask_client, parse_executor

    if kind == "dask-local":
        with dask_client(parse_executor(f"dask-local:{workers}")) as client:
            yield client
        return
    if kind == "hand":
        from dask_cluster_cpu import hand_started_cluster

        with hand_started_cluster(workers, work / "hand-cluster.log") as (address, _):
            with Client(address, timeout="60s") as client:
                check_workers(client, parse_executor("dask://" + address.removeprefix("tcp://")))
                yield client
        return
    with Client(kind, timeout="60s") as client:
        client.wait_for_workers(1, timeout=60)
        yield client


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cluster",
        action="append",
        help="dask-local (default), hand, or tcp://HOST:PORT; repeat to alternate several with local",
    )
    parser.add_argument("--workers", type=int, default=2, help="workers of a dask-local or hand cluster")
    parser.add_argument(
        "--site",
        choices=["synthetic", "gen_site"],
        default="synthetic",
        help="synthetic: 30-80 KB pages (analyze_throughput.py); gen_site: gen_site.py's pages (about 8 KB of HTML)",
    )
    parser.add_argument(
        "--unbatched",
        action="store_true",
        help="also run each cluster with one page a task (as before batching), labelled CLUSTER/1",
    )
    args = parser.parse_args()
    kinds = args.cluster or ["dask-local"]

    import analyze_throughput

    from nitpicker_core.analyze import dask_pool
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    work = Path(tempfile.mkdtemp(prefix="dask-analyze-"))
    os.environ.setdefault("NITPICKER_TAR_CACHE_DIR", str(work / "unpacked"))  # gone with the run's files
    try:
        pristine = work / "pristine.nitpicker"
        if args.site == "gen_site":
            built = build_small(pristine, args.pages, work)
        else:
            built = analyze_throughput.build(pristine, args.pages)
        print(json.dumps({"archive": built}), flush=True)
        pm = make_plugin_manager()
        config = load_config(pm, data={})
        with contextlib.ExitStack() as stack:
            clients: dict[str, Any] = {}
            for kind in kinds:
                started = time.perf_counter()
                clients[kind] = stack.enter_context(cluster(kind, args.workers, work))
                start_s = round(time.perf_counter() - started, 2)
                nthreads = sorted(clients[kind].nthreads().values())
                print(json.dumps({"cluster": kind, "start_s": start_s, "threads": nthreads}), flush=True)
            runs: list[tuple[str, Any, int]] = [("local", None, 0)]
            for kind, client in clients.items():
                runs.append((kind, client, dask_pool.MAX_BATCH))
                if args.unbatched:
                    runs.append((f"{kind}/1", client, 1))
            labels = [label for label, _, _ in runs[1:]]
            ratios: dict[str, list[float]] = {label: [] for label in labels}
            same = True
            for n in range(args.rounds):
                order = list(runs)
                if n % 2:
                    order.reverse()  # neither one always runs first on a warmer (or busier) machine
                result: dict[str, Any] = {"round": n + 1}
                kept: dict[str, Any] = {}
                for label, client, batch in order:
                    dask_pool.MAX_BATCH = batch or dask_pool.MAX_BATCH  # the client's choice only
                    copy = Path(shutil.copy(pristine, work / f"run-{n}.nitpicker"))
                    result[label] = timed(pm, config, copy, args.pages, client)
                    if client is not None:
                        result[label]["worker_rss_mb"] = [
                            round(v) for v in client.run(worker_rss_mb).values()
                        ]
                    kept[label] = stored(copy)
                    copy.unlink()
                same = same and all(kept[label] == kept["local"] for label in labels)
                ratio = {}
                for label in labels:
                    ratios[label].append(result[label]["pages_per_s"] / result["local"]["pages_per_s"])
                    ratio[label] = round(ratios[label][-1], 3)
                result["ratio"] = ratio
                print(json.dumps(result), flush=True)
        print(
            json.dumps(
                {
                    "median_ratio_over_local": {k: round(statistics.median(v), 3) for k, v in ratios.items()},
                    "range": {k: [round(min(v), 3), round(max(v), 3)] for k, v in ratios.items()},
                    "target": 0.7,
                    "identical_findings": same,
                }
            ),
            flush=True,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
