"""Reports of a large synthetic archive: XLSX rows/s per sheet, or HTML/PDF wall time, CPU and peak RSS.

Run: ``python benchmarks/report_throughput.py [ARCHIVE] [--out FILE] [--pages N] [--commits N]
[--to xlsx|html|pdf]``. Without an existing ARCHIVE, one is generated with ``benchmarks/synth_archive.py``
(100,000 pages and one commit by default; that takes a while).

``--to xlsx`` (default): each sheet is timed from its first row to its last, which includes writing the rows
into the workbook; saving the workbook is timed separately. Peak RSS is the process's ``ru_maxrss``
(target < 600 MB).

``--to html`` / ``--to pdf``: the client report (issue 30's targets: 10,000 pages with two commits in
≤ 30 s, 100,000 pages in ≤ 3 minutes, memory ≤ 500 MB). Wall time from opening the archive to the file
written; CPU is user + system of this process and its reaped children; peak RSS is the largest sum of the
RSS of this process and every descendant (Playwright's driver and Chromium for the PDF), sampled every
50 ms, next to the same sum of PSS (shared pages divided among the processes sharing them: the tree's real
footprint; it shrinks when other processes map the same Chromium), of USS (pages no other process maps:
the lower bound) and this process's own ``ru_maxrss``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nitpicker_core.archive import open_archive  # noqa: E402
from nitpicker_core.plugins import make_plugin_manager  # noqa: E402
from nitpicker_core.report import (  # noqa: E402
    ReportContext,
    destination_registry,
    render_sheets,
    run_report,
    select_sheets,
)

DEFAULT = Path("/tmp/rbench/100k.nitpicker")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(sheets: Iterable[tuple[Any, Iterable[list[Any]]]], stats: list[dict[str, Any]]) -> Iterator[Any]:
    """Pass the sheets through, recording rows and seconds of each as the destination consumes it."""
    for sheet, rows in sheets:
        entry = {"sheet": sheet.name, "rows": 0, "seconds": 0.0}
        stats.append(entry)

        def counted(rows: Iterable[list[Any]] = rows, entry: dict[str, Any] = entry) -> Iterator[list[Any]]:
            start = time.perf_counter()
            for row in rows:
                entry["rows"] += 1
                yield row
            entry["seconds"] = time.perf_counter() - start
            entry["peak_rss_mb"] = round(peak_rss_mb(), 1)
            print(
                f"  {entry['sheet']:<28} {entry['rows']:>10,} rows {entry['seconds']:8.1f} s "
                f"{entry['rows'] / max(entry['seconds'], 1e-9):>10,.0f} rows/s  peak RSS {entry['peak_rss_mb']:.0f} MB",
                file=sys.stderr,
                flush=True,
            )

        yield sheet, counted()


class TreeMemory:
    """The peaks of the summed RSS and PSS of this process and all its descendants, sampled in a thread.

    RSS counts a page shared by several processes (Chromium's renderer, GPU and zygote share much) once per
    process; PSS divides it among them, so its sum is the tree's real footprint.
    """

    def __init__(self, interval: float = 0.05) -> None:
        import psutil

        self.root = psutil.Process()
        self.interval = interval
        self.peak = 0
        self.peak_pss = 0
        self.peak_uss = 0
        self.peak_processes = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="rss-sampler", daemon=True)

    def sample(self) -> None:
        import psutil

        total = pss = uss = 0
        processes = [self.root, *self.root.children(recursive=True)]
        for process in processes:
            try:
                full = process.memory_full_info()
            except psutil.Error:
                continue
            total += full.rss
            pss += getattr(full, "pss", full.rss)
            uss += getattr(full, "uss", full.rss)
        if total > self.peak:
            self.peak, self.peak_processes = total, len(processes)
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_uss = max(self.peak_uss, uss)

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)

    def __enter__(self) -> TreeMemory:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.sample()


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def client_report(archive: Path, kind: str, out: Path, options: dict[str, Any]) -> dict[str, Any]:
    """Write the HTML or PDF client report of the archive's HEAD commit; wall, CPU and memory figures."""
    pm = make_plugin_manager()
    cpu = cpu_seconds()
    started = time.perf_counter()
    with TreeMemory() as memory, open_archive(archive) as reader:
        result = run_report(pm, reader, kind, {"file": str(out), "silent": True, **options})
        commits = len(reader.commits())
    wall = time.perf_counter() - started
    return {
        "archive": archive.name,
        "to": kind,
        "commits": commits,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu_seconds() - cpu, 1),
        "peak_rss_tree_mb": round(memory.peak / 2**20, 1),
        "peak_pss_tree_mb": round(memory.peak_pss / 2**20, 1),
        "peak_uss_tree_mb": round(memory.peak_uss / 2**20, 1),
        "processes_at_peak": memory.peak_processes,
        "peak_rss_self_mb": round(peak_rss_mb(), 1),
        "file_mb": round(out.stat().st_size / 2**20, 2),
        "result": result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("archive", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rbench/report.xlsx"))
    parser.add_argument(
        "--pages", type=int, default=100_000, help="pages to generate when ARCHIVE is missing"
    )
    parser.add_argument(
        "--commits", type=int, default=1, help="commits to generate when ARCHIVE is missing (2 for a diff)"
    )
    parser.add_argument("--to", choices=("xlsx", "html", "pdf"), default="xlsx", help="report to write")
    parser.add_argument("--batch", type=int, default=None, help="rows per query call (default: the report's)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="SHEET",
        help="leave this sheet out (e.g. one whose query an older archive cannot answer)",
    )
    args = parser.parse_args()
    if not args.archive.exists():
        args.archive.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {args.archive} ({args.pages:,} pages)…", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("synth_archive.py")),
                str(args.archive),
                "--pages",
                str(args.pages),
                "--commits",
                str(args.commits),
            ],
            check=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.to != "xlsx":
        out = args.out if args.out.suffix == f".{args.to}" else args.out.with_suffix(f".{args.to}")
        print(json.dumps(client_report(args.archive, args.to, out, {}), indent=2))
        return
    pm = make_plugin_manager()
    stats: list[dict[str, Any]] = []
    started = time.perf_counter()
    with open_archive(args.archive) as reader:
        opened = time.perf_counter() - started
        commit = reader.resolve(None)
        options = {"path": str(args.out), "silent": True, "batch": args.batch}
        report = ReportContext(pm, reader, commit, options)
        chosen = [s for s in select_sheets(pm, None) if s.name not in args.skip]
        sheets = render_sheets(chosen, reader, commit, report)
        write = destination_registry(pm)["xlsx"].write
        before_save = time.perf_counter()
        write(timed(sheets, stats), options)
        total = time.perf_counter() - started
    save = total - opened - sum(s["seconds"] for s in stats) - (before_save - started - opened)
    rows = sum(s["rows"] for s in stats)
    result = {
        "archive": args.archive.name,
        "commit": commit,
        "open_seconds": round(opened, 1),
        "sheets": [
            {
                **s,
                "seconds": round(s["seconds"], 1),
                "rows_per_second": round(s["rows"] / max(s["seconds"], 1e-9)),
            }
            for s in stats
        ],
        "rows": rows,
        "total_seconds": round(total, 1),
        "save_seconds": round(save, 1),
        "rows_per_second": round(rows / total),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "xlsx_mb": round(args.out.stat().st_size / 2**20, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
