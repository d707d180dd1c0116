"""What a `nitpicker` command costs before it does any work: `nitpicker --version` and a 3-page crawl.

Every CLI command builds the plugin manager, which imports every installed plugin's module; the test suite
and scripts that call nitpicker many times pay this on each call. The baseline is the same interpreter
starting and exiting (`python -c pass`), measured alternately with nitpicker in one run so machine load
hits both alike. CPU time (user + system of the child) is the steadier figure; wall time is shown too.

The crawl is one of a 3-page site served by this process on 127.0.0.1: nearly all of its time is fixed
cost (interpreter, plugins, the environment manifest, Chromium's start, the commit's indexing). Shown: its
wall and CPU time, the seconds until the site sees its first request (the start-up before any work) and
the crawl's own ``seconds`` from its JSON summary. The environment manifest (what the archive writer
records with each commit) is also timed on its own, inside a child. Each tree runs with a cache
directory of its own (XDG_CACHE_HOME), warmed by one untimed run: the figures are those of a machine where
nitpicker has crawled before. Crawl times vary by seconds on a loaded machine: use medians of many rounds.

``--baseline-tree DIR`` measures another checkout alternately with this one (PYTHONPATH selects the tree),
e.g. the commit before a change: ``git worktree add /tmp/before HEAD~3``. Both trees are byte-compiled
first, as ``bin/setup`` does (these machines set PYTHONDONTWRITEBYTECODE).

    .venv/bin/python benchmarks/cli_start.py                           # 10 rounds of --version, 5 crawls
    .venv/bin/python benchmarks/cli_start.py --baseline-tree /tmp/before
    .venv/bin/python benchmarks/cli_start.py --imports                 # also the slowest top-level imports
    .venv/bin/python benchmarks/cli_start.py --rounds 0 --crawls 0 --site http://127.0.0.1:8766/index.html \
        --site-rounds 3 --baseline-tree /tmp/before                   # a site's crawl: its start and its end

``--site URL`` crawls URL with ``--render never --no-fetch-external --no-image --parallels 4`` (and
``--site-flags``) with each tree in turn, and splits the child's CPU at two points the child notes itself: the
start (interpreter, imports, plugins, options: until ``Crawler.run`` begins) and the end (from the archive
writer's ``FileSink.finish`` to the process's exit: closing the commit and its link aggregates, the crawl
checks, writing the file, the summary, the exit; not the pages still queued for the writer before it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = [sys.executable, "-c", "pass"]
VERSION = [sys.executable, "-m", "nitpicker_cli.main", "--version"]
# The environment manifest as the archive writer builds it for a crawl, timed inside the child (wall: a
# `chromium --version` it starts counts); a tree whose manager has no records (`distributions`) scans.
MANIFEST = [
    sys.executable,
    "-c",
    """
import time
from nitpicker_core.archive.manifest import crawl_environment
from nitpicker_core.plugins import make_plugin_manager
pm = make_plugin_manager()
extra = {"plugins": pm.distributions()} if hasattr(pm, "distributions") else {}
start = time.perf_counter()
crawl_environment(extra)
print(time.perf_counter() - start)
""",
]
PAGES = {
    "index.html": '<a href="a.html">A</a> <a href="b.html">B</a>',
    "a.html": '<a href="b.html">B</a>',
    "b.html": '<a href="index.html">home</a>',
}


def tree_env(tree: Path, **extra: str) -> dict[str, str]:
    """The environment that runs ``tree``'s code: its packages and plugins first on the path."""
    path = os.pathsep.join([str(tree), str(tree / "plugins")])
    return {**os.environ, "PYTHONPATH": path, "PYTHONWARNINGS": "ignore", **extra}


def run_child(argv: list[str], tree: Path | None = None, **extra: str) -> tuple[float, float, str]:
    """Wall seconds, user + system CPU seconds and stdout of one child process running ``argv``.

    With ``tree``, the child runs that checkout's code: in it (``python -m`` puts the working directory
    first on the path) and with it first on PYTHONPATH."""
    env = tree_env(tree, **extra) if tree else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd=tree)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def compile_tree(tree: Path) -> None:
    folders = [
        str(tree / name) for name in ("nitpicker_core", "nitpicker_cli", "nitpicker_viewer", "plugins")
    ]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j0", *folders], check=True, stdout=subprocess.DEVNULL
    )


REQUESTS: list[float] = []  # when the tiny site answered each request (perf_counter)


@contextlib.contextmanager
def tiny_site(folder: Path) -> Iterator[str]:
    """Three linked pages served on 127.0.0.1 from a thread of this process; yields the start URL."""
    for name, links in PAGES.items():
        title = name.removesuffix(".html")
        (folder / name).write_text(
            f"<!doctype html><html lang=en><head><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>Page {title}.</p>{links}</body></html>"
        )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            REQUESTS.append(time.perf_counter())

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()


def crawl_once(tree: Path, url: str, work: Path, label: str, counter: list[int]) -> tuple[float, ...]:
    """Wall, CPU, the crawl's own seconds and the seconds until its first request, of one crawl of ``url``
    with ``tree``'s code."""
    counter[0] += 1
    REQUESTS.clear()
    start = time.perf_counter()
    output = work / f"{label}-{counter[0]}.nitpicker"
    wall, cpu, out = run_child(
        [sys.executable, "-m", "nitpicker_cli.main", "crawl", url, "-o", str(output), "--json"],
        tree,
        XDG_CACHE_HOME=str(work / f"cache-{label}"),
    )
    summary = json.loads(out)
    if summary.get("pages") != len(PAGES) or summary.get("status") != "complete":
        raise SystemExit(f"the crawl with {tree} did not crawl the 3 pages: {out.strip()}")
    output.unlink()
    return wall, cpu, float(summary["seconds"]), min(REQUESTS) - start


# Runs the CLI in the child, noting its CPU seconds when the crawl begins and when the writer starts to finish
PHASES = """
import json, os, runpy, sys, time
import nitpicker_core.crawler.engine as engine
import nitpicker_archive_writer as writer
marks = {}
run, finish = engine.Crawler.run, writer.FileSink.finish
async def noted_run(self):
    marks.setdefault("run", time.process_time())
    return await run(self)
def noted_finish(self, *args, **kwargs):
    marks.setdefault("finish", time.process_time())
    return finish(self, *args, **kwargs)
engine.Crawler.run, writer.FileSink.finish = noted_run, noted_finish
import atexit
atexit.register(lambda: print(json.dumps(marks), file=sys.stderr))
sys.argv = ["nitpicker", *sys.argv[1:]]
runpy.run_module("nitpicker_cli.main", run_name="__main__", alter_sys=True)
"""


def site_crawl(
    tree: Path, url: str, flags: list[str], work: Path, label: str
) -> tuple[float, float, float, int]:
    """Start CPU, end CPU, whole CPU and pages of one crawl of ``url`` with ``tree``'s code."""
    output = work / f"{label}.nitpicker"
    output.unlink(missing_ok=True)
    argv = [sys.executable, "-c", PHASES, "crawl", url, "-o", str(output), "--json", "--render", "never"]
    argv += ["--no-fetch-external", "--no-image", "--parallels", "4", *flags]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=tree_env(tree), cwd=work, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # exit codes 1 and 2 are the site's errors: the summary is printed all the same
    if not done.stdout.strip():
        raise SystemExit(f"the crawl with {tree} failed: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    marks = json.loads(done.stderr.strip().splitlines()[-1])
    return marks["run"], cpu - marks["finish"], cpu, int(json.loads(done.stdout)["pages"])


def slowest_imports(tree: Path, count: int = 12) -> list[tuple[int, str]]:
    """The top-level imports of a CLI start with their cumulative microseconds, slowest first."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *VERSION[1:]],
        capture_output=True,
        text=True,
        check=True,
        env=tree_env(tree),
        cwd=tree,
    )
    rows = []
    for line in run.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and not parts[2].startswith("  "):
            rows.append((int(parts[1]), parts[2].strip()))
    return sorted(rows, reverse=True)[:count]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="--version rounds (default 10)")
    parser.add_argument("--crawls", type=int, default=5, help="crawl rounds per tree (default 5; 0: none)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout measured (default: this one)")
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--imports", action="store_true", help="list the slowest top-level imports too")
    parser.add_argument("--site", help="also crawl this URL (--render never) and split its start and end CPU")
    parser.add_argument("--site-rounds", type=int, default=3, help="crawls of --site per tree (default 3)")
    parser.add_argument(
        "--site-flags", default="", help="more crawl options for --site, e.g. '--max-pages 20'"
    )
    args = parser.parse_args()
    trees = {"this": args.tree.resolve()}
    if args.baseline_tree:
        trees = {"before": args.baseline_tree.resolve(), "after": args.tree.resolve()}
    cache = Path(tempfile.mkdtemp(prefix="cli-start-cache-"))  # each tree's XDG_CACHE_HOME, warmed below
    for label, tree in trees.items():
        compile_tree(tree)
        run_child(MANIFEST, tree, XDG_CACHE_HOME=str(cache / label))
        run_child(VERSION, tree)  # warm the OS file cache once, untimed

    bare: list[float] = []
    version: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
    for _ in range(args.rounds):
        bare.append(run_child(BASELINE)[1])
        for label, tree in trees.items():
            version[label].append(run_child(VERSION, tree)[:2])
    b = median(bare)
    print(f"python -c pass                 {b * 1000:7.0f} ms CPU (median of {args.rounds})")
    for label, runs in version.items():
        cpu, wall = median([r[1] for r in runs]), median([r[0] for r in runs])
        print(
            f"nitpicker --version ({label:6}) {cpu * 1000:7.0f} ms CPU {wall * 1000:7.0f} ms wall   "
            f"{cpu / b:5.1f}x a bare interpreter"
        )
    if args.baseline_tree:
        ratio = median([r[1] for r in version["after"]]) / median([r[1] for r in version["before"]])
        print(f"--version after / before        {ratio:7.2f} (CPU)")

    manifest: dict[str, list[float]] = {label: [] for label in trees}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            manifest[label].append(float(run_child(MANIFEST, tree, XDG_CACHE_HOME=str(cache / label))[2]))
    print()
    for label, values in manifest.items():
        print(
            f"environment manifest ({label:6}) {median(values) * 1000:7.0f} ms wall (median of {args.rounds})"
        )

    if args.crawls:
        with tempfile.TemporaryDirectory(prefix="cli-start-") as tmp:
            work = Path(tmp)
            site = work / "site"
            site.mkdir()
            with tiny_site(site) as url:
                counter = [0]
                for label, tree in trees.items():  # warms each tree's cache: the Chromium version is asked
                    crawl_once(tree, url, work, label, counter)
                crawls: dict[str, list[tuple[float, ...]]] = {label: [] for label in trees}
                for _ in range(args.crawls):
                    for label, tree in trees.items():
                        crawls[label].append(crawl_once(tree, url, work, label, counter))
        print()
        for label, crawled in crawls.items():
            wall, cpu, own, first = (median([r[i] for r in crawled]) for i in range(4))
            print(
                f"3-page crawl ({label:6})  {wall:6.2f} s wall {cpu:6.2f} s CPU   first request after "
                f"{first:5.2f} s, the crawl's own seconds {own:5.2f} (median of {args.crawls})"
            )
        if args.baseline_tree:
            before, after = crawls["before"], crawls["after"]
            ratios = [median([r[i] for r in after]) / median([r[i] for r in before]) for i in (0, 1, 3)]
            print(
                f"crawl after / before            {ratios[0]:7.2f} (wall) {ratios[1]:5.2f} (CPU) "
                f"{ratios[2]:5.2f} (until the first request)"
            )

    if args.site:
        with tempfile.TemporaryDirectory(prefix="cli-start-site-") as tmp:
            sites: dict[str, list[tuple[float, float, float, int]]] = {label: [] for label in trees}
            for _ in range(args.site_rounds):
                for label, tree in trees.items():
                    sites[label].append(
                        site_crawl(tree, args.site, args.site_flags.split(), Path(tmp), label)
                    )
        print()
        for label, measured in sites.items():
            start, end, whole = (median([r[i] for r in measured]) for i in range(3))
            print(
                f"{args.site} ({label:6}) {measured[0][3]} pages: start {start:5.2f} s CPU, end {end:5.2f} s CPU, "
                f"whole {whole:6.2f} s CPU (median of {args.site_rounds})"
            )

    shutil.rmtree(cache, ignore_errors=True)
    if args.imports:
        print("\nslowest top-level imports (cumulative):")
        for micros, name in slowest_imports(args.tree.resolve()):
            print(f"  {micros / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
