"""Crawl on Dask workers against a local crawl of the same total parallelism, on a ``gen_site.py`` site (issue 20).

The site is ``../shared/bench/gen_site.py`` (default 300 pages) served by ``python -m http.server`` on
127.0.0.1. Runs alternate in one process so a change in the machine's load hits both sides alike:

  local  ``nitpicker crawl --parallels 2``                          one Chromium, two tabs
  dask   ``nitpicker crawl --parallels 2 --executor dask-local:2``  two single-threaded workers, one tab each

For each run it prints the pages rendered, the crawl's own seconds (after start-up, as the crawl reports
them) and the process tree's wall time (start-up included: the CLI, and for dask the LocalCluster), pages/s
of both, each dask run's ratio to the mean of the local runs (target ≥ 0.7), peak RSS of the tree and its
CPU seconds; then whether the archives hold the same page states (content hashes per URL) as the first
local run's. Ratios only: no absolute timing is asserted anywhere.

    .venv/bin/python benchmarks/dask_crawl.py --pages 300 --rounds 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_throughput import LOOPBACK_ONLY, Run, measure, mib, served_site  # noqa: E402

from nitpicker_core.archive import open_archive  # noqa: E402

SIDES = {"local": [], "dask": ["--executor", "dask-local:2"]}


def crawl(side: str, root: str, work: Path, n: int, flags: list[str]) -> tuple[Run, Path]:
    archive = work / f"{side}-{n}.nitpicker"
    archive.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "nitpicker_cli.main",
        "crawl",
        root,
        "-o",
        str(archive),
        "--parallels",
        "2",
        "--json",
        *SIDES[side],
        *flags,
    ]
    run = Run(side, 2)
    out = measure(cmd, work / f"{side}-{n}.log", run)
    try:
        result = json.loads(out)
        run.pages, run.inner = int(result["rendered"]), float(result["seconds"])
    except (ValueError, KeyError):
        run.notes.append(
            f"{side} run {n} failed (exit {run.exit_code}): "
            f"{(work / f'{side}-{n}.log').read_text(errors='replace')[-400:]}"
        )
    return run, archive


def inner_rate(run: Run) -> float:
    return run.pages / run.inner if run.inner else 0.0


def same_states(a: Path, b: Path) -> str:
    with open_archive(a) as here, open_archive(b) as there:
        left, right = here.row_hashes(), there.row_hashes()
    differ = sorted(url for url in left.keys() | right.keys() if left.get(url) != right.get(url))
    if not differ:
        return f"same page states ({len(left)} URLs)"
    return f"{len(differ)} of {len(left.keys() | right.keys())} URLs differ, e.g. {', '.join(differ[:3])}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--pages", type=int, default=300, help="content pages of the generated site (default 300)"
    )
    ap.add_argument("--rounds", type=int, default=2, help="local/dask pairs, alternating (default 2)")
    ap.add_argument("--flags", default="", help="more crawl flags for both sides, e.g. --no-image")
    ap.add_argument("--keep", type=Path, help="keep the site, archives and logs in this directory")
    args = ap.parse_args(argv)
    os.environ.setdefault("NITPICKER_BROWSER_ARGS", shlex.quote(LOOPBACK_ONLY))
    flags = shlex.split(args.flags)
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            work = args.keep
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dask-crawl-bench-")))
        root = stack.enter_context(served_site(args.pages, work))
        print(
            f"site: gen_site.py --pages {args.pages} at {root}; {os.cpu_count()} CPUs; "
            f"load {os.getloadavg()[0]:.1f}; flags {' '.join(flags) or '(none)'}",
            flush=True,
        )
        runs: list[tuple[Run, Path]] = []
        for n in range(args.rounds):
            for side in ("local", "dask") if n % 2 == 0 else ("dask", "local"):
                run, archive = crawl(side, root, work, n, flags)
                runs.append((run, archive))
                print(
                    f"  done {side} #{n}: {run.pages} pages, crawl {run.inner or 0:.1f} s "
                    f"({inner_rate(run):.2f} pages/s), wall {run.wall:.1f} s ({run.rate:.2f} pages/s), "
                    f"load {run.load[0]:.1f}→{run.load[1]:.1f}",
                    flush=True,
                )
        report(runs)
    return 0


def report(runs: list[tuple[Run, Path]]) -> None:
    local = [run for run, _ in runs if run.label == "local" and run.pages]
    base_inner = sum(inner_rate(r) for r in local) / len(local) if local else 0.0
    base_wall = sum(r.rate for r in local) / len(local) if local else 0.0
    head = (
        f"\n{'run':<8}{'pages':>7}{'crawl s':>9}{'pages/s':>9}{'vs local':>10}{'wall s':>9}{'pages/s':>9}"
        f"{'vs local':>10}{'peak RSS MiB':>14}{'procs':>7}{'cpu s':>8}{'load':>13}{'exit':>6}"
    )
    print(head)
    print("-" * len(head))
    for run, _ in runs:
        ratio_inner = f"{inner_rate(run) / base_inner:.2f}" if base_inner and run.label == "dask" else "-"
        ratio_wall = f"{run.rate / base_wall:.2f}" if base_wall and run.label == "dask" else "-"
        print(
            f"{run.label:<8}{run.pages:>7}{run.inner or 0:>9.1f}{inner_rate(run):>9.2f}{ratio_inner:>10}"
            f"{run.wall:>9.1f}{run.rate:>9.2f}{ratio_wall:>10}{mib(run.peak_rss):>14}{run.peak_procs:>7}"
            f"{run.cpu:>8.1f}{run.load[0]:>6.1f}→{run.load[1]:<6.1f}{run.exit_code:>6}"
        )
    dask = [run for run, _ in runs if run.label == "dask" and run.pages]
    if dask and base_inner:
        mean = sum(inner_rate(r) for r in dask) / len(dask)
        print(
            f"\ndask / local, crawl pages/s: {mean / base_inner:.2f} (target ≥ 0.7); "
            f"wall (start-up included): {sum(r.rate for r in dask) / len(dask) / base_wall:.2f}"
        )
    first = next((archive for run, archive in runs if run.label == "local" and archive.exists()), None)
    for _run, archive in runs:
        if first is not None and archive != first and archive.exists():
            print(f"{archive.name} vs {first.name}: {same_states(first, archive)}")
    for run, _ in runs:
        for note in run.notes:
            print(f"note: {note}")


if __name__ == "__main__":
    raise SystemExit(main())
