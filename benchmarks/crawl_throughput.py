"""Crawl throughput: `nitpicker crawl` against the rendering baseline ``render_limit.py``, on a ``gen_site.py`` site.

The yardstick and the site come from ``../shared/bench`` (see its README), used unchanged: ``gen_site.py``
writes a static site, ``python -m http.server`` serves it on 127.0.0.1, and ``render_limit.py`` renders it
the least a crawler must (one browser, K reused tabs, ``goto(wait_until="load")``, one evaluate, BFS).

For each K in ``--parallels`` one round runs, in this order, so that a change in the machine's load hits
both sides alike:

  a  baseline   ``render_limit.py -k K`` with the Chromium nitpicker uses
  b  no-image   ``nitpicker crawl --no-image --parallels K --interval 0``
  c  images     ``nitpicker crawl --parallels K --interval 0``
  a  baseline   again; the ratios are against the mean of the two baseline runs around b and c

It prints pages/s (pages rendered ÷ wall time of the process, start-up included on both sides), each
nitpicker run's ratio to the baseline, the peak RSS and PSS of the process tree (sampled from /proc every
0.2 s), the CPU seconds of the tree (in all and per page: the work, whatever the machine's load), the load
average, and where nitpicker's time went per page (the phases
the crawl records in its commit's stats). Ratios only: no absolute timing is asserted anywhere.

    .venv/bin/python benchmarks/crawl_throughput.py --pages 300 --parallels 1,2,4

``--render never`` crawls b and c without a browser (pages read from the HTML as sent): their pages are
the pages read, and the baseline still renders, so "vs a" says how much faster than the least rendering.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_site import free_port, serve  # noqa: E402

from nitpicker_core.crawler.phases import ORDER as PHASES  # noqa: E402

BENCH = Path(os.environ.get("NITPICKER_BENCH_DIR", ROOT.parent / "shared" / "bench"))
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
SAMPLE_EVERY = 0.2
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


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
        fields = stat[stat.rfind(")") + 2 :].split()
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


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> tuple[str, float]:
    """(kind, user + system seconds so far) of one process: python, driver (node), chromium or its name."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode(errors="replace")
    except OSError:
        return "", 0.0
    comm = stat[stat.find("(") + 1 : stat.rfind(")")]
    fields = stat[stat.rfind(")") + 2 :].split()
    kind = (
        "python"
        if comm.startswith("python") or comm == "nitpicker"
        else ("driver" if comm.startswith("node") else "chromium" if "chrom" in comm.lower() else comm)
    )
    return kind, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class TreeSampler(threading.Thread):
    """Peak summed RSS / PSS and process count of ``pid`` and all its descendants, and CPU by kind of process.

    The CPU split is each process's last sampled time (up to 0.2 s of a process's end is missed).
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_rss = self.peak_pss = self.peak_procs = 0
        self._cpu: dict[int, tuple[str, float]] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = _tree(self.pid)
            self.peak_rss = max(self.peak_rss, sum(_rss(p) for p in pids))
            self.peak_pss = max(self.peak_pss, sum(_pss(p) for p in pids))
            self.peak_procs = max(self.peak_procs, len(pids))
            for pid in pids:
                kind, seconds = _cpu(pid)
                if kind:
                    self._cpu[pid] = (kind, seconds)
            self._halt.wait(SAMPLE_EVERY)

    def cpu_by_kind(self) -> dict[str, float]:
        split: Counter[str] = Counter()
        for kind, seconds in self._cpu.values():
            split[kind] += seconds
        return dict(split)

    def stop(self) -> None:
        self._halt.set()
        self.join()


@dataclass
class Run:
    label: str
    parallels: int
    wall: float = 0.0
    inner: float | None = None  # the run's own crawl time (after start-up), as it reports it
    pages: int = 0  # internal URLs rendered (200s and 404s alike, as the baseline counts them)
    ok: int = 0  # of which answered 200
    peak_rss: int = 0
    peak_pss: int = 0
    peak_procs: int = 0
    cpu: float = 0.0  # user + system seconds of the whole (reaped) process tree
    cpu_split: dict[str, float] = field(default_factory=dict)  # seconds by python / driver / chromium
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after
    exit_code: int = 0
    phases: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.pages / self.wall if self.wall else 0.0


def measure(cmd: list[str], log: Path, run: Run, env: dict[str, str] | None = None) -> str:
    """Run ``cmd`` to its end, sampling its tree; returns its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    with log.open("wb") as errors:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, cwd=ROOT, env=env)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        out, _ = proc.communicate()
        run.wall = time.monotonic() - start
        sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.load = (load, os.getloadavg()[0])
    run.exit_code = proc.returncode
    run.peak_rss, run.peak_pss, run.peak_procs = sampler.peak_rss, sampler.peak_pss, sampler.peak_procs
    run.cpu_split = sampler.cpu_by_kind()
    # Chromium's helpers are not all reaped through the tree, so rusage misses part of them: the sampled
    # per-process times, when larger, are the better total
    run.cpu = max(run.cpu, sum(run.cpu_split.values()))
    return out.decode(errors="replace")


def run_baseline(root: str, k: int, browser: str, work: Path, n: int) -> Run:
    run = Run("a baseline", k)
    log = work / f"baseline-{k}-{n}.log"
    cmd = [sys.executable, str(BENCH / "render_limit.py"), root, "-k", str(k), "--chromium", browser]
    out = measure(cmd, log, run)
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        run.notes.append(f"baseline failed (exit {run.exit_code}): {log.read_text(errors='replace')[-500:]}")
        return run
    run.pages, run.ok, run.inner = data["pages"], data["ok"], data["crawl_wall_s"]
    if data.get("nav_err"):
        run.notes.append(f"{data['nav_err']} navigation errors")
    return run


def run_nitpicker(
    root: str,
    k: int,
    images: bool,
    work: Path,
    tree: Path | None = None,
    label: str | None = None,
    render: str = "always",
) -> Run:
    name = f"{'img' if images else 'noimg'}-{k}" + ("-previous" if label else "") + f"-{render}"
    archive = work / f"{name}.nitpicker"
    archive.unlink(missing_ok=True)  # a kept directory measured again: a new archive, not an update
    cmd = [
        sys.executable,
        "-m",
        "nitpicker_cli.main",
        "crawl",
        root,
        "-o",
        str(archive),
        "--parallels",
        str(k),
        "--interval",
        "0",
    ]
    env = None
    if (
        tree is not None
    ):  # the code of a snapshot (its packages and plugins first on the path), not the tree's
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "plugins")])}
    if not images:
        cmd.append("--no-image")
    if render != "always":  # an older code's crawl has no such option: given only when asked for
        cmd += ["--render", render]
    run = Run(
        label or ("c images" if images else "b no-image") + ("" if render == "always" else f" {render}"), k
    )
    log = work / f"{name}.log"
    measure(cmd, log, run, env)
    tail = log.read_text(errors="replace").strip().splitlines()
    if run.exit_code and tail:
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
        run.pages = int(stats.get("rendered") or 0) + int(stats.get("parsed") or 0)  # read without a browser
        run.phases = stats.get("phases") or {}
        run.ok = sum(
            1
            for page in reader.pages(commit)
            if page.get("is_target")
            and not page.get("is_external")
            and page.get("content_type") == "text/html"
            and page.get("status") == 200
        )
        errors = reader.crawl_errors(commit)
        internal = [e for e in errors if "127.0.0.1" in e["url"] or "localhost" in e["url"]]
        if internal:
            run.notes.append(
                f"{len(internal)} internal crawl errors, e.g. "
                + "; ".join(f"{e['url']}: {e['message'][:120]}" for e in internal[:3])
            )
        rows = reader.execute(
            "SELECT pe.step, pe.message FROM page_error pe JOIN commit_page cp ON cp.state_id = pe.state_id "
            "WHERE cp.commit_id = ?",
            (commit,),
        )
        steps = Counter(r["step"] for r in rows if r["step"] != "console")
        if steps:
            run.notes.append(f"page errors by step {dict(steps)}")
        images = reader.execute(
            "SELECT COUNT(*) AS n, SUM(i.natural_width IS NULL) AS unloaded, SUM(i.is_lazy) AS lazy FROM image i "
            "JOIN commit_page cp ON cp.state_id = i.state_id WHERE cp.commit_id = ?",
            (commit,),
        )[0]
        if images["n"]:
            run.notes.append(
                f"image rows: {images['n']} ({images['lazy']} lazy, {images['unloaded']} not loaded)"
            )


# -- the site --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def served_site(pages: int, work: Path) -> Any:
    """Generate the site with gen_site.py and serve it with http.server on 127.0.0.1; yields its root URL."""
    site = work / "site"
    port = free_port()  # the site's canonical and og: URLs name the port it is served on
    subprocess.run(
        [
            sys.executable,
            str(BENCH / "gen_site.py"),
            "--pages",
            str(pages),
            "--out",
            str(site),
            "--base",
            f"http://127.0.0.1:{port}",
        ],
        check=True,
        capture_output=True,
    )
    with serve(site, port) as port:
        yield f"http://127.0.0.1:{port}/"


# -- reporting -------------------------------------------------------------------------------------------
def mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


def baseline_rate(runs: list[Run], k: int) -> float:
    rates = [r.rate for r in runs if r.label == "a baseline" and r.parallels == k and r.rate]
    return sum(rates) / len(rates) if rates else 0.0


def print_table(runs: list[Run]) -> None:
    head = (
        f"{'run':<12}{'K':>3}{'pages':>7}{'200':>6}{'wall s':>9}{'inner s':>9}{'pages/s':>9}{'vs a':>7}"
        f"{'peak RSS MiB':>14}{'peak PSS MiB':>14}{'procs':>7}{'cpu s':>8}{'cpu ms/p':>9}{'load':>13}{'exit':>6}"
    )
    print(head)
    print("-" * len(head))
    for run in runs:
        base = baseline_rate(runs, run.parallels)
        ratio = f"{run.rate / base:.2f}" if base and run.label != "a baseline" else "-"
        inner = f"{run.inner:.1f}" if run.inner is not None else "-"
        per_page = f"{1000 * run.cpu / run.pages:.0f}" if run.pages else "-"
        print(
            f"{run.label:<12}{run.parallels:>3}{run.pages:>7}{run.ok:>6}{run.wall:>9.1f}{inner:>9}{run.rate:>9.2f}"
            f"{ratio:>7}{mib(run.peak_rss):>14}{mib(run.peak_pss):>14}{run.peak_procs:>7}{run.cpu:>8.1f}{per_page:>9}"
            f"{run.load[0]:>6.1f}→{run.load[1]:<6.1f}{run.exit_code:>6}"
        )


def print_phases(runs: list[Run]) -> None:
    """Mean milliseconds per page of each phase; a phase's time is one page's, so K pages overlap in it."""
    crawls = [r for r in runs if r.phases]
    if not crawls:
        return
    print("\nnitpicker per page, mean ms (each of the K tabs spends this on each of its pages):")
    print(f"{'run':<12}{'K':>3}" + "".join(f"{p:>15}" for p in PHASES))
    for run in crawls:
        cells = [run.phases.get(p, {}).get("mean_ms") for p in PHASES]
        print(
            f"{run.label:<12}{run.parallels:>3}"
            + "".join(f"{c if c is not None else '-':>15}" for c in cells)
        )


def print_done(run: Run) -> None:
    """One line per finished run, as it finishes: a run cut short still leaves its figures."""
    per_page = f"{1000 * run.cpu / run.pages:.0f}" if run.pages else "-"
    phases = " ".join(f"{p}={run.phases[p]['mean_ms']}" for p in PHASES if p in run.phases)
    split = " ".join(
        f"{kind} {1000 * s / max(1, run.pages):.0f}" for kind, s in sorted(run.cpu_split.items())
    )
    print(
        f"  done {run.label} K={run.parallels}: {run.pages} pages in {run.wall:.1f} s, {run.rate:.2f} pages/s, "
        f"cpu {per_page} ms/page ({split}), peak RSS {mib(run.peak_rss)} MiB, load {run.load[0]:.1f}→{run.load[1]:.1f}"
        + (f"; ms/page {phases}" if phases else ""),
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--pages", type=int, default=300, help="content pages of the generated site (default 300)"
    )
    ap.add_argument("--parallels", default="1,2,4", help="comma-separated K values (default 1,2,4)")
    ap.add_argument("--runs", default="a,b,c", help="which runs: a baseline, b no-image, c images")
    ap.add_argument("--keep", type=Path, help="keep the site, archives and logs in this directory")
    ap.add_argument(
        "--render",
        choices=("always", "never", "auto"),
        default="always",
        help="nitpicker's --render for runs b and c (default always)",
    )
    ap.add_argument(
        "--tree",
        type=Path,
        help="run nitpicker from this copy of the code (e.g. `git archive HEAD` "
        "unpacked), so edits made while the benchmark runs do not mix into it",
    )
    ap.add_argument(
        "--previous",
        type=Path,
        help="a copy of an earlier commit's code: its `--no-image` crawl runs right after this one's in each "
        "round (run p), and the ratio of the two is printed (what a change costs the crawl)",
    )
    args = ap.parse_args(argv)
    if not (BENCH / "render_limit.py").exists():
        print(f"no render_limit.py in {BENCH} (set NITPICKER_BENCH_DIR)", file=sys.stderr)
        return 2
    # shell-split by nitpicker, so the one switch (it contains spaces) must be quoted
    os.environ.setdefault("NITPICKER_BROWSER_ARGS", shlex.quote(LOOPBACK_ONLY))
    ks = [int(k) for k in args.parallels.split(",") if k.strip()]
    wanted = set(args.runs.split(","))

    from nitpicker_core.crawler.browser import find_browser

    browser = find_browser()
    if browser is None:
        print("no Chromium found", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            work = args.keep
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="crawl-bench-")))
        root = stack.enter_context(served_site(args.pages, work))
        print(
            f"site: gen_site.py --pages {args.pages} at {root}; browser {browser}; {os.cpu_count()} CPUs; "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        # Warm the browser binary and the page cache so the first measured run is not the cold one
        subprocess.run(
            [
                sys.executable,
                str(BENCH / "render_limit.py"),
                root,
                "-k",
                "1",
                "--max-pages",
                "3",
                "--chromium",
                browser,
            ],
            check=False,
            capture_output=True,
        )
        runs: list[Run] = []
        for k in ks:
            order = ["a", "b", "p", "c", "a"] if wanted & {"b", "c"} else ["a"]
            if args.previous:
                wanted.add("p")
            for n, which in enumerate(w for w in order if w in wanted):
                if which == "a":
                    runs.append(run_baseline(root, k, browser, work, n))
                elif which == "p":
                    runs.append(run_nitpicker(root, k, False, work, args.previous, "p previous"))
                else:
                    runs.append(run_nitpicker(root, k, which == "c", work, args.tree, render=args.render))
                print_done(runs[-1])
        print()
        print_table(runs)
        print_phases(runs)
        if args.previous:
            print("\nthis code against the previous one (--no-image, pages/s and CPU per page):")
            # each round's pair (a K may be given more than once: --parallels 2,2,2 is three rounds)
            nows = [r for r in runs if r.label.startswith("b no-image")]
            thens = [r for r in runs if r.label == "p previous"]
            ratios = []
            for now, then in zip(nows, thens, strict=False):
                if then.rate and now.pages and then.pages:
                    cpu = (now.cpu / now.pages) / (then.cpu / then.pages)
                    ratios.append(cpu)
                    print(f"  K={now.parallels}: rate {now.rate / then.rate:.2f}, cpu/page {cpu:.2f}")
            if len(ratios) > 1:
                print(f"  cpu/page over the {len(ratios)} rounds: median {statistics.median(ratios):.2f}")
        notes = [(r, note) for r in runs for note in r.notes]
        if notes:
            print("\nnotes:")
            for run, note in notes:
                print(f"  {run.label:<12} K={run.parallels}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
