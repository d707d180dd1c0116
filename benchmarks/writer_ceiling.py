"""The single archive writer's ceiling: pages/s of ``put_page`` when nothing else limits the crawl.

Builds synthetic scraped pages (``synth_archive.build``: metadata, ~30 anchors, images, JSON-LD, 5 shared
sub-resources each) in batches outside the clock, then times only the writer: one ``put_page`` per page with
its resources, one transaction each, as the crawler's writer thread stores them. Two page shapes: ``synth``
(its ~2 KB of HTML) and ``rendered`` (the same page with 30-80 KB of varied rendered HTML from
``analyze_throughput.page_html``, which the writer compresses). A third, ``docs``, is the ``--render never``
crawl of issue 32: the pages of Python's HTML docs (Debian's python3.11-doc, ~84 KB of HTML and ~320
anchors each, most of them the same on every page) read by ``nitpicker_scrape.parse`` outside the clock,
each stored as the crawl's writer thread stores it (with its resources, in one transaction), and the links
out of the site each recorded once, unfetched, as ``--no-fetch-external`` records them (held and stored
together before the next page, as the crawl's sink does). Its ms per page are
per page of the docs, the external records' time included.
Prints pages/s, ms per page (wall and CPU:
the CPU figure is the ceiling on one free core, whatever else a busy machine runs), bytes per page
of the working database and of the written .nitpicker file, and the time ``write()`` takes to pack it.

    python benchmarks/writer_ceiling.py                   # 5000 pages of each shape
    python benchmarks/writer_ceiling.py --pages 2000 --shapes rendered
    python benchmarks/writer_ceiling.py --shapes docs --repeat 5   # median of 5 runs of the docs' pages
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
DOCS = Path("/usr/share/doc/python3.11/html")  # Debian's python3.11-doc
DOCS_ORIGIN = "http://127.0.0.1:8766/"


def docs_pages(count: int) -> Any:
    """Batches of (page, [(resource, referrer)]) for up to ``count`` pages of the docs, as a ``--render never``
    crawl of them served from ``DOCS_ORIGIN`` stores them (its anchors normalized as the crawler does)."""
    from nitpicker_scrape import parse

    from nitpicker_core import derive_html_facts
    from nitpicker_core.crawler.queue import normalized
    from nitpicker_core.records import Resource, ScrapeResult

    if not DOCS.is_dir():
        raise SystemExit(f"the docs shape reads {DOCS} (apt-get install python3.11-doc)")
    files = sorted(DOCS.rglob("*.html"))[:count]
    headers = {"content-type": "text/html", "server": "SimpleHTTP/0.6 Python/3.11", "date": "now"}
    external: set[str] = set()
    for start in range(0, len(files), BATCH):
        batch = []
        for path in files[start : start + BATCH]:
            url = DOCS_ORIGIN + path.relative_to(DOCS).as_posix()
            body = path.read_bytes()
            result = ScrapeResult(
                url=url,
                status=200,
                status_text="OK",
                content_type="text/html",
                content_length=len(body),
                headers=dict(headers),
                is_target=True,
                response_ms=1,
            )
            page = parse.parse(result, body, {"image": False})
            page.html_facts = derive_html_facts(url, page.html, page.source, rendered=False)
            page.extra["unrendered"] = "--render never"
            for anchor in page.anchors or ():
                try:
                    anchor.href = normalized(anchor.href)
                except ValueError:
                    pass
            resources = [
                (
                    Resource(
                        url=r,
                        status=200,
                        status_text="OK",
                        content_type="text/css",
                        content_length=1000,
                        headers={"content-type": "text/css", "date": "now"},
                    ),
                    url,
                )
                for r in page.resources
            ]
            batch.append((page, resources))
            # the links out of the site, each recorded once, unfetched (--no-fetch-external), after the
            # first page naming it
            for anchor in page.anchors or ():
                if anchor.href.startswith(("http://", "https://")) and not anchor.href.startswith(
                    DOCS_ORIGIN
                ):
                    if anchor.href not in external:
                        external.add(anchor.href)
                        batch.append(
                            (
                                ScrapeResult(
                                    url=anchor.href, is_external=True, is_target=False, scraped=False
                                ),
                                [],
                            )
                        )
        yield batch


def pages(count: int, shape: str) -> Any:
    """Batches of (page, [(resource, referrer)]) for ``count`` internal pages of ``shape``."""
    if shape == "docs":
        yield from docs_pages(count)
        return
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
        held: list[Any] = []  # the docs' unfetched records, as the crawl's sink holds them (when it does)
        for page, resources in batch:
            if shape == "docs" and not page.scraped and hasattr(writer, "put_records"):
                held.append((page, None))
                continue
            if held:
                writer.put_records(commit, held)
                held = []
            writer.put_page(commit, page, resources=resources)
        if held:
            writer.put_records(commit, held)
        spent += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        stored += sum(1 for page, _ in batch if page.scraped or shape != "docs")  # the docs' pages only
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
    parser.add_argument(
        "--shapes", nargs="+", default=["synth", "rendered"], choices=["synth", "rendered", "docs"]
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each shape; the median's line is printed"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT_DIR / "plugins"))
    work = Path(tempfile.mkdtemp(prefix="writer-ceiling-"))
    try:
        for shape in args.shapes:
            runs = [measure(args.pages, shape, work) for _ in range(args.repeat)]
            runs.sort(key=lambda run: run["cpu_ms_per_page"])
            median = runs[len(runs) // 2]
            if args.repeat > 1:
                median["cpu_ms_per_page_runs"] = [run["cpu_ms_per_page"] for run in runs]
            print(json.dumps(median), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
