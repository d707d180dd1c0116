"""Analyze on Dask vs the local pools: the same archive, markup and text, alternating in one run.

Writes one synthetic archive of rendered pages (``analyze_throughput.build``: 30-80 KB of varied HTML a page),
copies it once per run, then alternates ``analyze`` with the local executor (each analyzer's pool of 2
worker processes) and with ``dask-local:2`` (a LocalCluster of 2 single-threaded worker processes, started
once and shared by the Dask runs, as a pipeline shares it; its start is timed on its own). Prints pages/s of
each run, the Dask workers' CPU milliseconds per page and memory (RSS) after each run, the median
ratio dask/local (target >= 0.7) and whether both stored exactly the same cells, findings and errors.

    python benchmarks/dask_analyze.py                    # 300 pages, 3 rounds
    python benchmarks/dask_analyze.py --pages 100 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
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


def timed(pm: Any, config: Any, archive: Path, pages: int, executor: Any, cpu: Any) -> dict[str, Any]:
    """One analyze run; ``cpu()`` (when given) counts the CPU seconds of the processes that run each_page."""
    from nitpicker_core.analyze import analyze

    cpu_before = cpu() if cpu else 0.0
    started = time.perf_counter()
    run = analyze(pm, config, archive, NAMES, executor=executor)
    seconds = time.perf_counter() - started
    assert all(run.summaries[n].pages == pages and run.summaries[n].errors == 0 for n in NAMES), run.summary()
    result = {
        "seconds": round(seconds, 2),
        "pages_per_s": round(pages / seconds, 2),
        "modes": {n: run.summaries[n].mode for n in NAMES},
    }
    if cpu:  # the local pools' workers are the forkserver's children, gone when the run ends: not counted
        result["worker_cpu_ms_per_page"] = round(1000 * (cpu() - cpu_before) / pages, 1)
    return result


def worker_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import analyze_throughput

    from nitpicker_core.config import load_config
    from nitpicker_core.executors import dask_client, parse_executor
    from nitpicker_core.plugins import make_plugin_manager

    work = Path(tempfile.mkdtemp(prefix="dask-analyze-"))
    try:
        pristine = work / "pristine.nitpicker"
        print(json.dumps({"archive": analyze_throughput.build(pristine, args.pages)}), flush=True)
        pm = make_plugin_manager()
        config = load_config(pm, data={})
        started = time.perf_counter()
        with dask_client(parse_executor("dask-local:2")) as client:
            print(json.dumps({"cluster_start_s": round(time.perf_counter() - started, 2)}), flush=True)

            def cluster_cpu() -> float:
                return sum(client.run(worker_cpu).values())

            ratios, same = [], True
            for n in range(args.rounds):
                order = [("local", None, None), ("dask", client, cluster_cpu)]
                if n % 2:
                    order.reverse()  # neither one always runs first on a warmer (or busier) machine
                result: dict[str, Any] = {"round": n + 1}
                for label, executor, cpu in order:
                    copy = shutil.copy(pristine, work / f"{label}-{n}.nitpicker")
                    result[label] = timed(pm, config, copy, args.pages, executor, cpu)
                same = same and stored(work / f"local-{n}.nitpicker") == stored(work / f"dask-{n}.nitpicker")
                ratios.append(result["dask"]["pages_per_s"] / result["local"]["pages_per_s"])
                result["ratio"] = round(ratios[-1], 3)
                result["dask_worker_rss_mb"] = [round(v) for v in client.run(worker_rss_mb).values()]
                print(json.dumps(result), flush=True)
        print(
            json.dumps(
                {
                    "median_ratio_dask_over_local": round(statistics.median(ratios), 3),
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
