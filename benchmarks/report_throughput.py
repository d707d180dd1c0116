"""XLSX report of every sheet on a large synthetic archive: rows/s per sheet and peak RSS (target < 600 MB).

Run: ``python benchmarks/report_throughput.py [ARCHIVE] [--out FILE] [--pages N]``. Without an existing
ARCHIVE, one is generated with ``benchmarks/synth_archive.py`` (100,000 pages by default; that takes a while).
Each sheet is timed from its first row to its last, which includes writing the rows into the workbook;
saving the workbook is timed separately. Peak RSS is the process's ``ru_maxrss``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nitpicker_core.archive import open_archive  # noqa: E402
from nitpicker_core.plugins import make_plugin_manager  # noqa: E402
from nitpicker_core.report import ReportContext, destination_registry, render_sheets, select_sheets  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("archive", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rbench/report.xlsx"))
    parser.add_argument(
        "--pages", type=int, default=100_000, help="pages to generate when ARCHIVE is missing"
    )
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
                "1",
            ],
            check=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
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
