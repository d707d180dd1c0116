"""Duplicate-content checks at scale: time and peak memory against just reading the pages' stored HTML.

On a synthetic archive (``benchmarks/synth_archive.py``: ~2 KB pages of four paragraphs each, seven groups
of exact duplicates, five groups of near duplicates one word apart), in one process and in this order:

1. baseline: every compared page's stored HTML read and decompressed (what any content check pays);
2. signatures: the same, plus each page's main content located and its text shingled (the per-page work);
3. grouping: exact groups, MinHash + LSH over one page per digest, candidates confirmed by exact Jaccard;
4. the three checks' findings from what 2 and 3 left in the context;
5. the per-page content columns (``page_facts``) from the same grouping;
6. those columns stored as indexing stores them with the commit (``archive/page_facts.py``), into a scratch
   SQLite database holding a copy of the archive's URL table and commit (the archive itself is never written).

Peak memory is the process's peak RSS after each phase (``ru_maxrss``: it only grows, so the baseline
comes first); the figure to hold to 1 GB is the last one.

    python benchmarks/near_duplicates.py --pages 100000            # writes /tmp/near-dup-100000.nitpicker first
    python benchmarks/near_duplicates.py --archive /tmp/s100k.nitpicker
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))
sys.path.insert(0, str(ROOT_DIR / "plugins"))

from nitpicker_checks import duplicates  # noqa: E402

from nitpicker_core import CheckContext, read  # noqa: E402
from nitpicker_core.archive import open_archive, page_facts  # noqa: E402
from nitpicker_core.plugins import make_plugin_manager  # noqa: E402
from nitpicker_core.registries import check_registry, query_registry  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(archive: Path) -> dict[str, Any]:
    pm = make_plugin_manager()
    checks = check_registry(pm)
    out: dict[str, Any] = {"start_mb": peak_mb()}
    with open_archive(archive) as reader:
        commit = reader.resolve(None)
        ctx = CheckContext(reader, commit, query_registry(pm))
        pages = duplicates.compared(ctx)
        t, c = time.perf_counter(), time.process_time()
        size = sum(len(html) for url, html in read.page_html(reader, commit) if url in pages)
        out["baseline"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())
        out["pages"], out["html_mb"] = len(pages), size / 1e6

        t, c = time.perf_counter(), time.process_time()
        sigs = duplicates.signatures(ctx)
        out["signatures"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())

        t, c = time.perf_counter(), time.process_time()
        found = duplicates.groups(ctx)
        out["grouping"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())
        out["candidates"] = found.candidates
        out["digests"] = len({s.digest for s in sigs.values()})

        t, c = time.perf_counter(), time.process_time()
        counts = {}
        for name in ("content-exact-duplicate", "content-near-duplicate", "content-low"):
            counts[name] = sum(1 for _ in checks[name].findings(ctx))  # type: ignore[misc]
        out["findings"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())
        out["counts"] = counts

        t, c = time.perf_counter(), time.process_time()
        facts = duplicates.page_facts(ctx)
        out["facts"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())

        with tempfile.TemporaryDirectory() as scratch:
            conn = sqlite3.connect(Path(scratch) / "facts.db")
            conn.execute("CREATE TABLE url (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE)")
            conn.execute("CREATE TABLE commits (id INTEGER PRIMARY KEY, status TEXT, finished_at TEXT)")
            conn.executemany("INSERT INTO url VALUES (?, ?)", reader.tuples("SELECT id, url FROM url"))
            conn.execute("INSERT INTO commits VALUES (?, 'complete', 'now')", (commit,))
            conn.commit()
            t, c = time.perf_counter(), time.process_time()
            with conn:
                out["stored"] = page_facts.store(conn, commit, "benchmark", facts)
            out["store"] = (time.perf_counter() - t, time.process_time() - c, peak_mb())
            conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--archive", type=Path, help="an existing synthetic archive")
    parser.add_argument(
        "--pages", type=int, default=100_000, help="pages of the archive to write (no --archive)"
    )
    args = parser.parse_args()
    archive = args.archive
    if archive is None:
        archive = Path(f"/tmp/near-dup-{args.pages}.nitpicker")
        if not archive.exists():
            print(f"writing {archive} ({args.pages} pages) …", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT_DIR / "benchmarks/synth_archive.py"),
                    str(archive),
                    "--pages",
                    str(args.pages),
                    "--commits",
                    "1",
                ],
                check=True,
            )
    r = run(archive)
    base_s, base_cpu, base_mb = r["baseline"]
    print(
        f"{archive}: {r['pages']} pages compared, {r['html_mb']:.0f} MB of HTML, {r['digests']} distinct texts"
    )
    print(f"{'phase':<34}{'seconds':>9}{'CPU s':>9}{'peak RSS MB':>13}")
    print(f"{'(process before)':<34}{'':>9}{'':>9}{r['start_mb']:>13.0f}")
    print(f"{'baseline: read the stored HTML':<34}{base_s:>9.1f}{base_cpu:>9.1f}{base_mb:>13.0f}")
    total = cpu = 0.0
    for phase in ("signatures", "grouping", "findings", "facts", "store"):
        seconds, used, mb = r[phase]
        total, cpu = total + seconds, cpu + used
        print(f"{phase:<34}{seconds:>9.1f}{used:>9.1f}{mb:>13.0f}")
    print(f"{'three checks and their columns':<34}{total:>9.1f}{cpu:>9.1f}{r['store'][2]:>13.0f}")
    print(f"content columns stored for {r['stored']} pages")
    print(f"LSH candidate pairs confirmed: {r['candidates']}; findings: {r['counts']}")


if __name__ == "__main__":
    main()
