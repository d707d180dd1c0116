"""`crawl --update` on an unchanged site: its wall time against the first crawl's, what the server saw, growth.

A ``gen_site.py`` site (../shared/bench, unchanged) is served on 127.0.0.1 by a static server that honours
ETags (If-None-Match → 304) and If-Modified-Since, and counts every request by method, status and whether
it was conditional. Each round runs, in this order, so that a change in the machine's load hits both alike:

  first    ``nitpicker crawl ROOT -o A``                 (a fresh archive: every page rendered)
  update   ``nitpicker crawl --update A``, --updates times (nothing changed on the site)

It prints, per round and as the median: each update's wall time as a share of the first crawl's (target
≤ 15%), the full page GETs the server answered during the updates (target 0), the conditional requests and
304s, and the archive's growth per unchanged update after the first (the file: bytes and % of the first
commit's archive, target ≤ 1%; and the bytes in use by tables, SQLite's dbstat, with the tables that grew
most in the last update). Ratios only: nothing is asserted on absolute time. ``--site generations`` runs
the same on test_server's /generations/ site (31 pages, per-render noise; its own server counts requests,
so the request columns read 0 there).

    .venv/bin/python benchmarks/update_revalidation.py --pages 300 --rounds 2
    .venv/bin/python benchmarks/update_revalidation.py --site generations --flags "--parallels 2 --no-image"
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(os.environ.get("NITPICKER_BENCH_DIR", ROOT.parent / "shared" / "bench"))
NITPICKER = [sys.executable, "-m", "nitpicker_cli.main"]


class Counted(http.server.SimpleHTTPRequestHandler):
    """Static files with an ETag (size and mtime), 304 on a matching If-None-Match; every answer counted."""

    counts: Counter[tuple[str, int, bool, bool]] = Counter()  # (method, status, conditional, is page)
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _etag(self) -> str | None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            return None
        stat = path.stat()
        return f'"{stat.st_size:x}-{int(stat.st_mtime):x}"'

    def send_head(self) -> Any:
        etag = self._etag()
        wanted = self.headers.get("If-None-Match")
        if etag and wanted and etag in [tag.strip() for tag in wanted.split(",")]:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return None
        return super().send_head()  # answers If-Modified-Since itself

    def send_response(self, code: int, message: str | None = None) -> None:
        conditional = bool(self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"))
        page = self.path.endswith("/") or self.path.endswith(".html")
        with self.lock:
            self.counts[(self.command, code, conditional, page)] += 1
        super().send_response(code, message)
        etag = self._etag() if code == 200 else None
        if etag:
            self.send_header("ETag", etag)


@contextlib.contextmanager
def serving(site: Path) -> Any:
    handler = lambda *a, **kw: Counted(*a, directory=str(site), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def crawl(args: list[str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run([*NITPICKER, "crawl", *args], cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode not in (0, 2):  # 2: external errors only (gen_site links a few 404s)
        raise SystemExit(f"crawl {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return wall


def table_bytes(archive: Path) -> dict[str, int]:
    """Bytes in use per table and index (SQLite's dbstat): what the growth is made of."""
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        rows = reader.execute("SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name")
    return {name: size for name, size in rows}


def growth_by_table(before: dict[str, int], after: dict[str, int], top: int = 12) -> dict[str, int]:
    """The tables and indexes that grew the most, in bytes."""
    grown = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    return dict(sorted(((k, v) for k, v in grown.items() if v), key=lambda kv: -abs(kv[1]))[:top])


@contextlib.contextmanager
def generations_site() -> Any:
    """test_server's /generations/<name>/ (31 pages, ETags, per-render noise), served in this process."""
    import uuid

    sys.path.insert(0, str(ROOT))
    from test_server import serve

    server, base = serve()
    try:
        yield f"{base}/generations/bench{uuid.uuid4().hex[:8]}/"
    finally:
        server.shutdown()


def _snapshot() -> Counter[tuple[str, int, bool, bool]]:
    with Counted.lock:
        return Counter(Counted.counts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--site",
        choices=("gen", "generations"),
        default="gen",
        help="gen: a gen_site.py site of --pages pages; generations: test_server's /generations/",
    )
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--updates", type=int, default=3, help="unchanged updates per round (2 or more)")
    parser.add_argument("--flags", default="--parallels 2", help="crawl flags of the first crawl")
    parser.add_argument("--keep", type=Path, help="copy each round's archive (after its updates) here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nitpicker-update-") as tmp:
        work = Path(tmp)
        rows = []
        if args.site == "gen":
            site = work / "site"
            subprocess.run(
                [sys.executable, str(BENCH / "gen_site.py"), "--pages", str(args.pages), "--out", str(site)],
                check=True,
                capture_output=True,
            )
            server = serving(site)
        else:
            server = generations_site()
        with server as where:
            root = f"http://127.0.0.1:{where}/" if args.site == "gen" else where
            for n in range(args.rounds):
                archive = work / f"round{n}.nitpicker"
                first = crawl([*args.flags.split(), "-o", str(archive), root], work)
                size1, tables1 = archive.stat().st_size, table_bytes(archive)
                before = _snapshot()
                times, sizes, tables = [], [size1], [tables1]
                for _ in range(args.updates):
                    times.append(crawl(["--update", str(archive)], work))
                    sizes.append(archive.stat().st_size)
                    tables.append(table_bytes(archive))
                seen = _snapshot() - before
                # The /generations/ server counts for itself (its __hits); this one only counts gen_site's.
                full_page_gets = sum(
                    c for (m, s, _, page), c in seen.items() if m == "GET" and s == 200 and page
                )
                used = [sum(t.values()) for t in tables]
                later = args.updates - 1  # growth per update after the first (which may store one-time rows)
                rows.append(
                    {
                        "round": n + 1,
                        "first_s": round(first, 2),
                        "update_s": [round(t, 2) for t in times],
                        "ratios": [round(t / first, 3) for t in times],
                        "full_page_gets": full_page_gets,
                        "conditional": sum(c for (_, _, cond, _), c in seen.items() if cond),
                        "not_modified": sum(c for (_, s, _, _), c in seen.items() if s == 304),
                        "requests": sum(seen.values()),
                        "archive_first": size1,
                        "growth": [b - a for a, b in zip(sizes, sizes[1:], strict=False)],
                        "growth_pct": round(100 * (sizes[-1] - sizes[1]) / later / size1, 2),
                        "used_first": used[0],
                        "used_growth": [b - a for a, b in zip(used, used[1:], strict=False)],
                        "used_growth_pct": round(100 * (used[-1] - used[1]) / later / used[0], 2),
                        "tables_growth_last": growth_by_table(tables[-2], tables[-1]),
                        "load": round(os.getloadavg()[0], 1),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(archive, args.keep / archive.name)
        ratio = statistics.median(x for r in rows for x in r["ratios"])
        print(
            json.dumps(
                {
                    "site": args.site,
                    "pages": args.pages if args.site == "gen" else 31,
                    "median_update_over_first": ratio,
                    "full_page_gets": sum(r["full_page_gets"] for r in rows),
                    "median_growth_pct": statistics.median(r["growth_pct"] for r in rows),
                    "median_used_growth_pct": statistics.median(r["used_growth_pct"] for r in rows),
                }
            )
        )


if __name__ == "__main__":
    main()
