"""The single archive writer's ceiling: pages/s of ``put_page`` when nothing else limits the crawl.

Builds synthetic scraped pages (``synth_archive.build``: metadata, ~30 anchors, images, JSON-LD, 5 shared
sub-resources each) in batches outside the clock, then times only the writer: one ``put_page`` per page with
its resources, one transaction each, as the crawler's writer thread stores them. Two page shapes: ``synth``
(its ~2 KB of HTML) and ``rendered`` (the same page with 30-80 KB of varied rendered HTML from
``analyze_throughput.page_html``, which the writer compresses). Prints pages/s, ms per page (wall and CPU:
the CPU figure is the ceiling on one free core, whatever else a busy machine runs), bytes per page
of the working database and of the written .nitpicker file, and the time ``write()`` takes to pack it.

    python benchmarks/writer_ceiling.py                   # 5000 pages of each shape
    python benchmarks/writer_ceiling.py --pages 2000 --shapes rendered
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))
sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

BATCH = 250  # pages built ahead of the clock at a time (rendered HTML is large: never the whole crawl)


def pages(count: int, shape: str) -> Any:
    """Batches of (page, [(resource, referrer)]) for ``count`` internal pages of ``shape``."""
    import analyze_throughput
    import synth_archive

    pools = synth_archive.Pools.build(max(count * 2, 1000))
    wanted = [i for i in range(count * 2) if synth_archive.role(i) == synth_archive.OK][:count]
    for start in range(0, len(wanted), BATCH):
        batch = []
        for i in wanted[start : start + BATCH]:
            built = synth_archive.build(i, 30, pools)
            page = built.page
            if shape == "rendered":
                html = analyze_throughput.page_html(i)
                page = dataclasses.replace(page, html=html, content_length=len(html))
            batch.append((page, [(r, page.url) for r in built.resources]))
        yield batch


def measure(count: int, shape: str, work: Path) -> dict[str, Any]:
    from nitpicker_core.archive import ArchiveWriter
    from nitpicker_core.archive.files import DB_NAME
    from nitpicker_core.indexing import index_commit
    from nitpicker_core.plugins import make_plugin_manager

    target = work / f"{shape}.nitpicker"
    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit("crawl", options={"synthetic": True})
    spent, cpu, stored, html_bytes = 0.0, 0.0, 0, 0
    for batch in pages(count, shape):
        started, cpu_started = time.perf_counter(), time.process_time()
        for page, resources in batch:
            writer.put_page(commit, page, resources=resources)
        spent += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        stored += len(batch)
        html_bytes += sum(len((p.html or "").encode()) for p, _ in batch)
    started, cpu_started = time.perf_counter(), time.process_time()
    writer.finish_commit(commit, "complete", {"pages": stored})  # the commit's aggregates
    index_commit(writer, commit, make_plugin_manager())  # and its stored checks, as a crawl stores them
    finish, finish_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    db_bytes = sum(f.stat().st_size for f in writer.stub.glob(DB_NAME + "*"))
    started = time.perf_counter()
    writer.write()
    pack = time.perf_counter() - started
    writer.close(remove_stub=True)
    return {
        "shape": shape,
        "pages": stored,
        "put_page_s": round(spent, 2),
        "pages_per_s": round(stored / spent, 1),
        "ms_per_page": round(1000 * spent / stored, 2),
        # CPU time: what one free core gives, whatever else the machine runs now
        "cpu_ms_per_page": round(1000 * cpu / stored, 2),
        "pages_per_cpu_s": round(stored / cpu, 1),
        "html_kb_per_page": round(html_bytes / stored / 1024, 1),
        "db_kb_per_page": round(db_bytes / stored / 1024, 2),
        "file_kb_per_page": round(target.stat().st_size / stored / 1024, 2),
        "finish_commit_s": round(finish, 2),
        "finish_commit_cpu_ms_per_page": round(1000 * finish_cpu / stored, 2),
        "write_s": round(pack, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--shapes", nargs="+", default=["synth", "rendered"], choices=["synth", "rendered"])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="writer-ceiling-"))
    try:
        for shape in args.shapes:
            print(json.dumps(measure(args.pages, shape, work)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
