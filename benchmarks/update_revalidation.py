"""`crawl --update` on an unchanged site: its wall time against the first crawl's, what the server saw, growth.

A ``gen_site.py`` site (../shared/bench, unchanged) is served on 127.0.0.1 by a static server that honours
ETags (If-None-Match → 304) and If-Modified-Since, and counts every request by method, status and whether
it was conditional. Each round runs, in this order, so that a change in the machine's load hits both alike:

  first    ``nitpicker crawl ROOT -o A``                 (a fresh archive: every page rendered)
  update   ``nitpicker crawl --update A``                (nothing changed on the site)
  update   ``nitpicker crawl --update A`` again          (growth of a second unchanged commit)

It prints, per round and as the median: the update's wall time as a share of the first crawl's (target
≤ 15%), the full page GETs the server answered during the updates (target 0), the conditional requests and
304s, and the archive's growth per unchanged update (bytes and % of the first commit's archive). Ratios
only: nothing is asserted on absolute time.

    .venv/bin/python benchmarks/update_revalidation.py --pages 300 --rounds 2
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
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


def _snapshot() -> Counter[tuple[str, int, bool, bool]]:
    with Counted.lock:
        return Counter(Counted.counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--flags", default="--parallels 2", help="crawl flags of the first crawl")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nitpicker-update-") as tmp:
        work = Path(tmp)
        site = work / "site"
        subprocess.run([sys.executable, str(BENCH / "gen_site.py"), "--pages", str(args.pages), "--out", str(site)],
                       check=True, capture_output=True)
        rows = []
        with serving(site) as port:
            root = f"http://127.0.0.1:{port}/"
            for n in range(args.rounds):
                archive = work / f"round{n}.nitpicker"
                first = crawl([*args.flags.split(), "-o", str(archive), root], work)
                size1 = archive.stat().st_size
                before = _snapshot()
                update = crawl(["--update", str(archive)], work)
                size2 = archive.stat().st_size
                again = crawl(["--update", str(archive)], work)
                size3 = archive.stat().st_size
                seen = _snapshot() - before
                full_page_gets = sum(c for (m, s, _, page), c in seen.items() if m == "GET" and s == 200 and page)
                rows.append({
                    "round": n + 1, "first_s": round(first, 2), "update_s": round(update, 2),
                    "update_again_s": round(again, 2), "ratio": round(update / first, 3),
                    "ratio_again": round(again / first, 3),
                    "full_page_gets": full_page_gets,
                    "conditional": sum(c for (_, _, cond, _), c in seen.items() if cond),
                    "not_modified": sum(c for (_, s, _, _), c in seen.items() if s == 304),
                    "requests": sum(seen.values()),
                    "archive_first": size1, "growth_1": size2 - size1, "growth_2": size3 - size2,
                    "growth_pct": round(100 * (size3 - size2) / size1, 2),
                    "load": round(os.getloadavg()[0], 1),
                })
                print(json.dumps(rows[-1]), flush=True)
        ratio = statistics.median(r["ratio"] for r in rows + [{"ratio": r["ratio_again"]} for r in rows])
        print(json.dumps({"pages": args.pages, "median_update_over_first": ratio,
                          "full_page_gets": sum(r["full_page_gets"] for r in rows),
                          "median_growth_pct": statistics.median(r["growth_pct"] for r in rows)}))


if __name__ == "__main__":
    main()
