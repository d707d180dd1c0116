"""CPU per rendered page on a hand-started Dask cluster: the workers' (Chromium included) and the client's apart.

A scheduler and ``--workers`` single-threaded workers are started here as their own processes on 127.0.0.1
(``python -m distributed.cli.dask_scheduler`` / ``dask_worker --nthreads 1``), the way an operator starts a
cluster, and stay up for every round; ``nitpicker crawl --executor dask://127.0.0.1:PORT --parallels N``
crawls a ``gen_site.py`` site (``../shared/bench``, served by ``http.server``) ``--rounds`` times. Each
round's CPU is sampled from /proc (every 0.2 s) for three process trees apart:

  client     the ``nitpicker crawl`` process: queue, preflight fetches, the archive writer, Dask's client
  workers    each ``dask worker`` process tree: nanny, worker process and the Chromium it starts
  scheduler  the ``dask scheduler`` process

and divided by the pages the crawl rendered; the 1-minute load average before and after each round goes
with it (the figures are CPU time, which a loaded machine stretches less than wall time, but not at all).

    .venv/bin/python benchmarks/dask_cluster_cpu.py --pages 300 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_throughput import LOOPBACK_ONLY, Run, TreeSampler, _cpu, _tree, measure, served_site  # noqa: E402

START_DEADLINE = 300.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tree_cpu(sampler: TreeSampler, before: dict[int, float]) -> float:
    """CPU seconds the sampled tree used since ``before`` (each process's time at the round's start)."""
    return sum(seconds - before.get(pid, 0.0) for pid, (_, seconds) in sampler._cpu.items())


@contextlib.contextmanager
def hand_started_cluster(workers: int, log: Path):  # type: ignore[no-untyped-def]
    """A scheduler and ``workers`` workers as separate processes on 127.0.0.1; yields (address, pids)."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ)
    out = log.open("ab")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ]
            + ["--no-dashboard"],
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    ]
    for _ in range(workers):
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
                + ["--no-dashboard", "--host", "127.0.0.1"],
                env=env,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        )
    try:
        from distributed import Client

        with Client(address, timeout="120s") as client:
            client.wait_for_workers(workers, timeout=START_DEADLINE)
        yield address, [p.pid for p in procs]
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
        out.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--pages", type=int, default=300, help="content pages of the generated site (default 300)"
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--flags", default="", help="more crawl flags, e.g. --no-image")
    args = ap.parse_args(argv)
    os.environ.setdefault("NITPICKER_BROWSER_ARGS", shlex.quote(LOOPBACK_ONLY))
    flags = shlex.split(args.flags)
    with tempfile.TemporaryDirectory(prefix="dask-cluster-cpu-") as tmp:
        work = Path(tmp)
        with (
            served_site(args.pages, work) as root,
            hand_started_cluster(args.workers, work / "cluster.log") as (
                address,
                pids,
            ),
        ):
            print(
                f"site: gen_site.py --pages {args.pages} at {root}; {os.cpu_count()} CPUs; cluster {address} "
                f"(scheduler + {args.workers} workers, 1 thread each); flags {' '.join(flags) or '(none)'}",
                flush=True,
            )
            print(
                f"{'round':<7}{'pages':>7}{'wall s':>8}{'client ms/page':>16}{'workers ms/page':>17}"
                f"{'scheduler ms/page':>19}{'load':>14}"
            )
            for n in range(args.rounds):
                samplers = [TreeSampler(pid) for pid in pids]
                before = [{pid: _cpu(pid)[1] for pid in _tree(p)} for p in pids]  # times at the round's start
                for sampler in samplers:
                    sampler.start()
                archive = work / f"crawl-{n}.nitpicker"
                cmd = [sys.executable, "-m", "nitpicker_cli.main", "crawl", root, "-o", str(archive)]
                cmd += [
                    "--parallels",
                    str(args.workers),
                    "--json",
                    "--executor",
                    "dask://" + address.removeprefix("tcp://"),
                ]
                cmd += flags
                run = Run("dask", args.workers)
                out = measure(cmd, work / f"crawl-{n}.log", run)
                time.sleep(0.5)  # a benchmark, not a test: the workers' last samples after the crawl's end
                for sampler in samplers:
                    sampler.stop()
                try:
                    pages = int(json.loads(out)["rendered"])
                except (ValueError, KeyError):
                    print(f"round {n} failed: {(work / f'crawl-{n}.log').read_text(errors='replace')[-600:]}")
                    continue
                workers = sum(_tree_cpu(s, b) for s, b in zip(samplers[1:], before[1:], strict=True))
                scheduler = _tree_cpu(samplers[0], before[0])
                per = 1000 / pages if pages else 0.0
                print(
                    f"{n:<7}{pages:>7}{run.wall:>8.1f}{run.cpu * per:>16.1f}{workers * per:>17.1f}"
                    f"{scheduler * per:>19.1f}{run.load[0]:>7.1f}→{run.load[1]:<6.1f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
