"""Archive throughput: bulk put_pages vs raw sqlite3, tar write, cold vs cached open, second-commit growth."""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nitpicker_core.archive import ArchiveWriter, open_archive  # noqa: E402
from nitpicker_core.archive.models import PAGE_STATE_COLUMNS  # noqa: E402
from nitpicker_core.archive.prepare import prepare_page  # noqa: E402
from nitpicker_core.records import Anchor, Image, ScrapeResult  # noqa: E402

WORDS = [f"w{n:03d}" for n in range(600)]
BATCH = 1000


def make_pages(n: int) -> list[ScrapeResult]:
    rng = random.Random(7)
    shared = "<footer>" + " ".join(rng.choice(WORDS) for _ in range(330)) + "</footer>"
    pages = []
    for i in range(n):
        url = f"https://bench.example/p/{i}"
        # Every 10th page is a near-duplicate (same HTML as its group), as listings and tag pages are.
        body = shared if i % 10 == 0 else " ".join(rng.choice(WORDS) for _ in range(330))
        html = f"<html><head><title>T</title></head><body>{body}</body></html>"
        anchors = [Anchor(f"https://bench.example/p/{rng.randrange(n)}", f"link {k}") for k in range(20)]
        pages.append(
            ScrapeResult(
                url=url,
                status=200,
                content_type="text/html",
                content_length=len(html),
                headers={"server": "x"},
                metadata={"title": f"Page {i}", "description": "d", "lang": "en", "canonical": url},
                html=html,
                anchors=anchors,
                images=[Image(f"https://bench.example/i/{i % 50}.png", alt="a")],
                resources=["https://bench.example/site.css"],
            )
        )
    return pages


def raw_baseline(pages: list[ScrapeResult], workdir: Path) -> float:
    """The same page rows through plain sqlite3 executemany into a bare table: the floor we compare to."""
    rows = [(p.hash, i, *p.fields) for i, p in enumerate(prepare_page(r) for r in pages)]
    conn = sqlite3.connect(workdir / "raw.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("PRAGMA synchronous=normal")
    conn.execute(f"CREATE TABLE page ({', '.join(PAGE_STATE_COLUMNS)})")
    marks = ", ".join("?" * len(PAGE_STATE_COLUMNS))
    start = time.perf_counter()
    for k in range(0, len(rows), BATCH):
        conn.execute("BEGIN")
        conn.executemany(f"INSERT INTO page VALUES ({marks})", rows[k : k + BATCH])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def commit_all(target: Path, pages: list[ScrapeResult]) -> tuple[float, float]:
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    start = time.perf_counter()
    for k in range(0, len(pages), BATCH):
        w.put_pages(c, pages[k : k + BATCH])
    insert = time.perf_counter() - start
    w.finish_commit(c, "complete")
    start = time.perf_counter()
    w.write()
    tar = time.perf_counter() - start
    w.close(remove_stub=True)
    return insert, tar


def timed_open(target: Path) -> float:
    start = time.perf_counter()
    with open_archive(target) as r:
        r.execute("SELECT COUNT(*) FROM commit_page")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=100_000)
    args = parser.parse_args()
    n = args.pages
    with tempfile.TemporaryDirectory(prefix="nitpicker-bench-") as tmp:
        work = Path(tmp)
        os.environ["NITPICKER_TAR_CACHE_DIR"] = str(work / "cache")
        t0 = time.perf_counter()
        pages = make_pages(n)
        anchors = sum(len(p.anchors or ()) for p in pages)
        print(
            f"pages: {n}, anchors: {anchors}, html: {sum(len(p.html or '') for p in pages) / 1e6:.1f} MB "
            f"(generated in {time.perf_counter() - t0:.1f} s)"
        )

        raw = raw_baseline(pages, work)
        print(f"raw sqlite3 executemany of page rows: {raw:.2f} s = {n / raw:,.0f} pages/s")

        target = work / "bench.nitpicker"
        insert, tar = commit_all(target, pages)
        size1 = target.stat().st_size
        print(
            f"put_pages (batches of {BATCH}): {insert:.2f} s = {n / insert:,.0f} pages/s, "
            f"{anchors / insert:,.0f} anchors/s; ours / raw = {insert / raw:.1f}x"
        )
        print(f"write() (checkpoint + tar + fsync + rename): {tar:.2f} s, archive {size1 / 1e6:.1f} MB")

        cold = timed_open(target)
        cached = timed_open(target)
        print(
            f"open: cold (unpack) {cold * 1000:.0f} ms, cached {cached * 1000:.1f} ms, "
            f"cold / cached = {cold / cached:.0f}x"
        )

        insert2, tar2 = commit_all(target, pages)
        size2 = target.stat().st_size
        print(
            f"second identical commit: put_pages {insert2:.2f} s ({n / insert2:,.0f} pages/s), "
            f"write {tar2:.2f} s, archive {size2 / 1e6:.2f} MB, growth {(size2 - size1) / size1 * 100:.2f} %"
        )


if __name__ == "__main__":
    main()
