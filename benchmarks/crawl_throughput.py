"""Crawl throughput: `nitpicker crawl` against a bare Playwright BFS baseline, on a synthetic local site.

One run serves a generated site (``benchmarks/sitegen.py``) on 127.0.0.1 and, for each K in ``--parallels``,
measures three subprocesses against it:

  a  baseline  this script with ``--baseline-only``: one browser (nitpicker's ``launch``), K reused pages,
               goto(domcontentloaded) + bounded networkidle wait, links via eval_on_selector_all, BFS
  b  no-image  ``nitpicker crawl --no-image --parallels K``
  c  images    ``nitpicker crawl --parallels K``

It prints pages/s (internal HTML pages rendered ÷ wall time), the ratios b/a and c/a, the wall time and the
peak RSS (and PSS) of each subprocess tree, sampled from /proc every 0.2 s. Then it compares what nitpicker
stored with what the baseline saw. Ratios only: no absolute timing is asserted.

    .venv/bin/python benchmarks/crawl_throughput.py --pages 300 --parallels 2,4
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nitpicker_core.urls import normalize  # noqa: E402

LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
IDLE_TIMEOUT = 5.0  # nitpicker's default bounded networkidle wait (scrape plugin, "idle")
NAV_TIMEOUT = 60.0
SAMPLE_EVERY = 0.2
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
LINKS_JS = "els => els.map(a => a.href)"


# -- the baseline (runs in its own process) --------------------------------------------------------------
async def baseline(root: str, parallels: int, out: Path, max_pages: int | None) -> None:
    from playwright.async_api import async_playwright

    from nitpicker_core.crawler.browser import launch

    origin = urlsplit(root).netloc
    seen = {root}
    visited: dict[str, dict[str, Any]] = {}
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait(root)
    started = time.monotonic()
    async with async_playwright() as p:
        browser = await launch(p)

        async def worker() -> None:
            context = await browser.new_context(viewport={"width": 1280, "height": 960})
            page = await context.new_page()
            try:
                while True:
                    url = await queue.get()
                    try:
                        visited[url] = await visit(page, url)
                    finally:
                        queue.task_done()
            finally:
                with contextlib.suppress(Exception):
                    await context.close()

        async def visit(page: Any, url: str) -> dict[str, Any]:
            try:
                response = await page.goto(url, wait_until="domcontentloaded", timeout=NAV_TIMEOUT * 1000)
            except Exception as exc:  # noqa: BLE001 - recorded, the BFS goes on
                return {"status": None, "type": None, "error": str(exc).splitlines()[0]}
            with contextlib.suppress(Exception):
                await page.wait_for_load_state("networkidle", timeout=IDLE_TIMEOUT * 1000)
            status = response.status if response else None
            ctype = ((response.headers.get("content-type") if response else None) or "").split(";")[0].strip()
            hrefs: list[str] = []
            with contextlib.suppress(Exception):
                hrefs = await page.eval_on_selector_all("a[href]", LINKS_JS)
            for href in hrefs:
                target = urldefrag(href)[0]
                parts = urlsplit(target)
                if parts.scheme in ("http", "https") and parts.netloc == origin and target not in seen:
                    if max_pages is not None and len(seen) >= max_pages:
                        break
                    seen.add(target)
                    queue.put_nowait(target)
            return {"status": status, "type": ctype or None, "error": None}

        workers = [asyncio.create_task(worker()) for _ in range(parallels)]
        await queue.join()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        await browser.close()
    out.write_text(json.dumps({"seconds": time.monotonic() - started, "visited": visited}))


# -- measuring a subprocess tree -------------------------------------------------------------------------
def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _tree(root: int) -> list[int]:
    children = _children_map()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Peak summed RSS / PSS and process count of ``pid`` and all its descendants."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_rss = self.peak_pss = self.peak_procs = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = _tree(self.pid)
            self.peak_rss = max(self.peak_rss, sum(_rss(p) for p in pids))
            self.peak_pss = max(self.peak_pss, sum(_pss(p) for p in pids))
            self.peak_procs = max(self.peak_procs, len(pids))
            self._halt.wait(SAMPLE_EVERY)

    def stop(self) -> None:
        self._halt.set()
        self.join()


@dataclass
class Run:
    label: str
    parallels: int
    wall: float = 0.0
    inner: float | None = None  # the run's own crawl time, when it reports one
    pages: int = 0  # internal HTML pages rendered (200s and 404s alike)
    ok_pages: set[str] = field(default_factory=set)  # internal 200 text/html URLs, normalized
    peak_rss: int = 0
    peak_pss: int = 0
    peak_procs: int = 0
    cpu: float = 0.0  # user + system seconds of the whole (reaped) process tree
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after
    exit_code: int = 0
    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.pages / self.wall if self.wall else 0.0


def measure(cmd: list[str], log: Path, site: Any, run: Run) -> None:
    site.reset_counts()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    with log.open("wb") as sink:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        code = proc.wait()
        run.wall = time.monotonic() - start
        sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.load = (load, os.getloadavg()[0])
    run.exit_code, run.requests = code, site.reset_counts()
    run.peak_rss, run.peak_pss, run.peak_procs = sampler.peak_rss, sampler.peak_pss, sampler.peak_procs
    stray = site.reset_stray()
    if stray:
        run.notes.append(f"{sum(stray.values())} requests for URLs the site never links to, e.g. "
                         f"{sorted(stray)[:8]}")


def run_baseline(root: str, k: int, work: Path, site: Any) -> Run:
    out = work / f"baseline-{k}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--baseline-only", "--url", root,
           "--parallels", str(k), "--out", str(out)]
    run = Run("a baseline", k)
    measure(cmd, work / f"baseline-{k}.log", site, run)
    if run.exit_code or not out.exists():
        run.notes.append(f"baseline failed (exit {run.exit_code}): {(work / f'baseline-{k}.log').read_text()[-800:]}")
        return run
    data = json.loads(out.read_text())
    run.inner = data["seconds"]
    html = {u: v for u, v in data["visited"].items() if v["type"] == "text/html"}
    run.pages = len(html)
    run.ok_pages = {normalize(u) for u, v in html.items() if v["status"] == 200}
    errors = [f"{u}: {v['error']}" for u, v in data["visited"].items() if v["error"]]
    if errors:
        run.notes.append(f"{len(errors)} navigation errors, e.g. {errors[:3]}")
    return run


def run_nitpicker(root: str, k: int, images: bool, work: Path, site: Any) -> Run:
    name = f"{'img' if images else 'noimg'}-{k}"
    archive = work / f"{name}.nitpicker"
    cmd = [str(ROOT / ".venv" / "bin" / "nitpicker"), "crawl", root, "-o", str(archive), "--parallels", str(k)]
    if not images:
        cmd.append("--no-image")
    run = Run("c images" if images else "b no-image", k)
    log = work / f"{name}.log"
    measure(cmd, log, site, run)
    tail = log.read_text(errors="replace").strip().splitlines()
    if tail:
        run.notes.append(f"exit {run.exit_code}; last line: {tail[-1][:300]}")
    if not archive.exists():
        run.notes.append("no archive written")
        return run
    inspect_archive(archive, run)
    return run


def inspect_archive(archive: Path, run: Run) -> None:
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        commit = reader.resolve()
        stats = reader.commits()[0].get("stats") or {}
        run.inner = stats.get("seconds")
        statuses: Counter[tuple[bool, bool, Any, Any]] = Counter()
        for page in reader.pages(commit):
            html = page.get("content_type") == "text/html"
            internal = not page.get("is_external")
            statuses[(internal, bool(page.get("is_target")), page.get("status"), page.get("content_type"))] += 1
            if page.get("is_target") and html and internal:
                run.pages += 1
                if page.get("status") == 200:
                    run.ok_pages.add(normalize(page["url"]))
        run.notes.append("pages by (internal, is_target, status, type): "
                         + ", ".join(f"{key}={n}" for key, n in sorted(statuses.items(), key=str)))
        run.notes.append(f"commit status {reader.commits()[0].get('status')}, stats {json.dumps(stats)}")
        errors = reader.crawl_errors(commit)
        if errors:
            kinds = Counter((e["kind"], e["phase"]) for e in errors)
            run.notes.append(f"{len(errors)} crawl errors {dict(kinds)}, e.g. "
                             + "; ".join(f"{e['url']}: {e['message'][:120]}" for e in errors[:3]))
        rows = reader.execute(
            "SELECT pe.step, pe.message FROM page_error pe JOIN commit_page cp ON cp.state_id = pe.state_id "
            "WHERE cp.commit_id = ?", (commit,))
        if rows:
            steps = Counter(r["step"] for r in rows)
            run.notes.append(f"{len(rows)} page errors by step {dict(steps)}, e.g. "
                             + "; ".join(f"{r['step']}: {r['message'][:120]}" for r in rows[:3]))
        images = reader.execute(
            "SELECT COUNT(*) AS n, SUM(i.natural_width IS NULL) AS unloaded, SUM(i.is_lazy) AS lazy FROM image i "
            "JOIN commit_page cp ON cp.state_id = i.state_id WHERE cp.commit_id = ?", (commit,))[0]
        if images["n"]:
            run.notes.append(f"image rows: {images['n']} ({images['lazy']} lazy, {images['unloaded']} not loaded)")
        run.notes.append(f"resources stored: {len(reader.resources(commit))}")


# -- reporting -------------------------------------------------------------------------------------------
def mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


def print_table(runs: list[Run], baselines: dict[int, Run]) -> None:
    head = (f"{'run':<12}{'K':>3}{'pages':>7}{'wall s':>9}{'crawl s':>9}{'pages/s':>9}{'vs a':>7}"
            f"{'peak RSS MiB':>14}{'peak PSS MiB':>14}{'procs':>7}{'cpu s':>8}{'load':>11}{'exit':>6}")
    print(head)
    print("-" * len(head))
    for run in runs:
        base = baselines.get(run.parallels)
        ratio = run.rate / base.rate if base and base.rate else 0.0
        inner = f"{run.inner:.1f}" if run.inner is not None else "-"
        print(f"{run.label:<12}{run.parallels:>3}{run.pages:>7}{run.wall:>9.1f}{inner:>9}{run.rate:>9.2f}"
              f"{ratio:>7.2f}{mib(run.peak_rss):>14}{mib(run.peak_pss):>14}{run.peak_procs:>7}{run.cpu:>8.1f}"
              f"{run.load[0]:>5.1f}→{run.load[1]:<5.1f}{run.exit_code:>6}")


def print_requests(runs: list[Run]) -> None:
    print("\nrequests the server saw per run (method kind=count):")
    for run in runs:
        parts = ", ".join(f"{m} {k}={n}" for (m, k), n in sorted(run.requests.items()))
        print(f"  {run.label:<12} K={run.parallels}: {parts}")


def compare(runs: list[Run], baselines: dict[int, Run], expected: set[str]) -> None:
    print("\ninternal 200 HTML pages vs the site (and vs the baseline of the same K):")
    for run in runs:
        base = baselines.get(run.parallels)
        line = f"  {run.label:<12} K={run.parallels}: {len(run.ok_pages)}/{len(expected)}"
        missing, extra = sorted(expected - run.ok_pages), sorted(run.ok_pages - expected)
        if missing:
            line += f", missing {len(missing)} e.g. {missing[:5]}"
        if extra:
            line += f", unexpected {len(extra)} e.g. {extra[:5]}"
        if base is not None and base is not run:
            only_base, only_run = base.ok_pages - run.ok_pages, run.ok_pages - base.ok_pages
            line += f"; vs baseline: -{len(only_base)} +{len(only_run)}"
            if only_base:
                line += f" (baseline only e.g. {sorted(only_base)[:5]})"
        print(line)
    print("\nnotes:")
    for run in runs:
        for note in run.notes:
            print(f"  {run.label:<12} K={run.parallels}: {note}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=2000, help="pages in the synthetic site (default 2000)")
    ap.add_argument("--parallels", default="2,4", help="comma-separated K values (default 2,4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", default="a,b,c", help="which runs: a baseline, b no-image, c images")
    ap.add_argument("--keep", type=Path, help="keep archives and logs in this directory")
    ap.add_argument("--baseline-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--max-pages", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # shell-split by nitpicker, so the one switch (it contains spaces) must be quoted
    os.environ.setdefault("NITPICKER_BROWSER_ARGS", shlex.quote(LOOPBACK_ONLY))
    ks = [int(k) for k in args.parallels.split(",") if k.strip()]

    if args.baseline_only:
        asyncio.run(baseline(args.url, ks[0], args.out, args.max_pages))
        return 0

    from sitegen import Site, SiteServer

    from nitpicker_core.crawler.browser import find_browser

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    wanted = set(args.runs.split(","))
    site = Site(args.pages, args.seed)
    with contextlib.ExitStack() as stack:
        stack.enter_context(SiteServer(site))
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            work = args.keep
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="crawl-bench-")))
        root = f"http://localhost:{site.port}/"
        expected = {normalize(root.rstrip("/") + p) for p in site.page_paths()}
        print(f"site: {args.pages} pages at {root} (external = 127.0.0.1:{site.port}); browser {find_browser()}; "
              f"NITPICKER_BROWSER_ARGS={os.environ['NITPICKER_BROWSER_ARGS']!r}; {os.cpu_count()} CPUs", flush=True)
        # Warm the browser binary and the page cache so the first measured run is not the cold one
        warm = [sys.executable, str(Path(__file__).resolve()), "--baseline-only", "--url", root,
                "--parallels", "1", "--out", str(work / "warmup.json"), "--max-pages", "3"]
        subprocess.run(warm, check=False, capture_output=True, cwd=ROOT)
        runs: list[Run] = []
        baselines: dict[int, Run] = {}
        for k in ks:
            if "a" in wanted:
                baselines[k] = run_baseline(root, k, work, site)
                runs.append(baselines[k])
                print(f"  done a K={k}: {baselines[k].wall:.1f} s", flush=True)
            for images in (False, True):
                if ("c" if images else "b") in wanted:
                    runs.append(run_nitpicker(root, k, images, work, site))
                    print(f"  done {runs[-1].label} K={k}: {runs[-1].wall:.1f} s", flush=True)
        print()
        print_table(runs, baselines)
        print_requests(runs)
        compare(runs, baselines, expected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
