"""Docs-site benchmark: nitpicker against LinkChecker and linkinator on Python's HTML docs, checked against the files.

The site is Debian's ``python3.11-doc`` (about 530 Sphinx pages), copied to a temporary folder with three
faults injected (``docs_site_files.py``): a broken internal link, an orphan page and a duplicated title. It is
served by ``http.server``'s file handler on 127.0.0.1 (with a listen backlog of 1,024, see ``SERVER``) and crawled, internal links only, by

  nitpicker   ``nitpicker crawl http://127.0.0.1:PORT/index.html --no-fetch-external --no-image --parallels K``
              (with ``--render never`` given to this script, the crawl reads pages without a browser)
  linkchecker ``linkchecker --threads K -o csv -v http://127.0.0.1:PORT/index.html`` (checks intern URLs only
              by default; a separate venv under the cache folder)
  linkinator  ``linkinator http://127.0.0.1:PORT/ --recurse --concurrency K --retry-errors`` with every other
              origin skipped (it recurses only below the start URL as a string prefix, so it starts at ``/``)

  floor       ``python_floor.py http://127.0.0.1:PORT/index.html --parallels K``: fetch, parse and follow in
              Python and nothing else (no archive, no checks), the floor any Python crawler stands on

runs alternating for ``--rounds``. Each tool's answers are compared with what the files say: HTML pages
reachable from index.html, broken anchor targets (with their source pages), and for nitpicker also the
duplicated titles (``duplicates``) and the orphans (``crawl --inventory`` of every HTML file, then
``isolated-pages``). It prints a table, ratios of wall time (nitpicker / other tool, same round) and a JSON
line, and exits 1 when nitpicker's answers disagree with the files. No traffic leaves 127.0.0.1.

    apt-get install -y python3.11-doc      # or pass --install
    .venv/bin/python benchmarks/docs_site.py --rounds 2
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import docs_site_files as files  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the console script of the project's .venv (NITPICKER_BIN names another, e.g. a worktree's with PYTHONPATH)
NITPICKER = Path(os.environ.get("NITPICKER_BIN") or ROOT / ".venv" / "bin" / "nitpicker")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nitpicker-bench"
LINKCHECKER = CACHE / "linkchecker-venv" / "bin" / "linkchecker"
LINKINATOR = CACHE / "linkinator" / "node_modules" / ".bin" / "linkinator"
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
FLOOR = Path(__file__).resolve().parent / "python_floor.py"
TOOLS = ("nitpicker", "linkchecker", "linkinator", "floor")


@dataclass
class Run:
    tool: str
    round: int
    wall: float = 0.0
    exit_code: int = 0
    pages: set[str] = field(default_factory=set)  # site file paths of the HTML pages it answered 200
    broken: dict[str, set[str]] = field(default_factory=dict)  # missing target path -> source paths
    other_broken: int = 0  # broken rows that are not anchors to pages (scripts, styles, …), where told apart
    notes: list[str] = field(default_factory=list)


# -- setting up ------------------------------------------------------------------------------------------
def install(tools: set[str]) -> None:
    if not files.SOURCE.is_dir():
        subprocess.run(["apt-get", "install", "-y", "python3.11-doc"], check=True)
    if "linkchecker" in tools and not LINKCHECKER.exists():
        subprocess.run([sys.executable, "-m", "venv", str(LINKCHECKER.parents[1])], check=True)
        subprocess.run([str(LINKCHECKER.parent / "pip"), "install", "-q", "linkchecker"], check=True)
    if "linkinator" in tools and not LINKINATOR.exists():
        LINKINATOR.parents[2].mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(LINKINATOR.parents[2]),
                "linkinator",
            ],
            check=True,
        )


def missing(tools: set[str]) -> str | None:
    if not files.SOURCE.is_dir():
        return f"{files.SOURCE} is missing: `{files.INSTALL_HINT}` (or rerun with --install)"
    if not NITPICKER.exists():
        return f"{NITPICKER} is missing: create the project's .venv first"
    if "linkchecker" in tools and not LINKCHECKER.exists():
        return f"{LINKCHECKER} is missing: rerun with --install (pip into that venv), or drop it from --tools"
    if "linkinator" in tools and not LINKINATOR.exists():
        return f"{LINKINATOR} is missing: rerun with --install (npm into {LINKINATOR.parents[2]}), or drop it"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ``python -m http.server`` with a listen backlog a web server has (nginx: 511) instead of socketserver's 5. With
# 5, a client that opens connections faster than the one accepting thread takes them overflows the queue; the
# kernel drops the handshake and the client waits out TCP's SYN retransmissions (1, 2, 4, 8… s). Measured: 2,576
# listen overflows in one linkinator run, which then took 115-223 s instead of 5 s, and whichever tool ran
# after another in a round was the one hit; no tool of the benchmark is then measured, only the backlog.
SERVER = (
    "import functools, http.server, sys\n"
    "class Server(http.server.ThreadingHTTPServer):\n"
    "    request_queue_size = 1024\n"
    "handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory='.')\n"
    "Server(('127.0.0.1', int(sys.argv[1])), handler).serve_forever()\n"
)


@contextlib.contextmanager
def serve(site: Path, port: int | None = None) -> Any:
    """``http.server``'s file handler (with a real backlog) on ``port`` (a free loopback port when None)."""
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)],
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"docs_site: http.server did not start on 127.0.0.1:{port}")
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def timed(cmd: list[str], log: Path, run: Run, stdout: Path | None = None) -> None:
    with log.open("wb") as err, stdout.open("wb") if stdout else contextlib.nullcontext(err) as out:
        start = time.monotonic()
        run.exit_code = subprocess.run(cmd, stdout=out, stderr=err, cwd=ROOT, check=False).returncode
        run.wall = time.monotonic() - start


# -- the tools -------------------------------------------------------------------------------------------
def query(archive: Path, name: str, **params: Any) -> Any:
    cmd = [str(NITPICKER), "query", str(archive), name]
    for key, value in params.items():
        cmd += [f"--{key}", str(value).lower() if isinstance(value, bool) else str(value)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode:
        raise RuntimeError(f"nitpicker query {name} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def rows_of(answer: Any) -> list[dict[str, Any]]:
    """The rows of a paginated query answer, whatever the key it keeps them under."""
    if isinstance(answer, list):
        return answer
    for key in ("items", "rows"):
        if isinstance(answer.get(key), list):
            return answer[key]
    raise RuntimeError(f"no rows in query answer with keys {sorted(answer)}")


def run_nitpicker(origin: str, k: int, work: Path, run: Run, render: str = "always") -> None:
    archive = work / f"nitpicker-{run.round}.nitpicker"
    cmd = [
        str(NITPICKER),
        "crawl",
        f"{origin}/index.html",
        "--no-fetch-external",
        "--no-image",
        "--parallels",
        str(k),
        "-o",
        str(archive),
        *(["--render", render] if render != "always" else []),
    ]
    timed(cmd, work / f"nitpicker-{run.round}.log", run)
    if not archive.exists():
        run.notes.append(f"no archive (exit {run.exit_code}): {tail(work / f'nitpicker-{run.round}.log')}")
        return
    for row in rows_of(query(archive, "pages", strict=True, external=False, limit=10000)):
        path = files.path_of(row["url"], origin)
        if path and row.get("status") == 200:
            run.pages.add(path)
    for row in rows_of(query(archive, "broken-links", group="target", limit=10000, per_group=1000)):
        path = files.path_of(row["url"], origin)
        if path:
            run.broken[path] = {p for p in (files.path_of(u, origin) for u in referring(row)) if p}
    run.notes.extend(page_errors(archive))


def page_errors(archive: Path) -> list[str]:
    """Steps that failed on a page after it answered (a timed-out extract leaves it without title and links)."""
    sys.path.insert(0, str(ROOT))
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        rows = reader.execute(
            "SELECT u.url, pe.step, pe.message FROM page_error pe JOIN commit_page cp ON cp.state_id = pe.state_id "
            "JOIN url u ON u.id = cp.url_id WHERE cp.commit_id = ? AND pe.step != 'console'",
            (reader.resolve(),),
        )
    return [f"page error ({r['step']}) on {r['url']}: {r['message'][:160]}" for r in rows]


def referring(row: dict[str, Any]) -> list[str]:
    return [p if isinstance(p, str) else p["url"] for p in row.get("sources") or []]


def run_linkchecker(origin: str, k: int, work: Path, run: Run) -> None:
    out = work / f"linkchecker-{run.round}.csv"
    cmd = [str(LINKCHECKER), "--no-status", "--threads", str(k), "-o", "csv", "-v", f"{origin}/index.html"]
    timed(cmd, work / f"linkchecker-{run.round}.log", run, stdout=out)
    lines = [line for line in out.read_text(errors="replace").splitlines() if not line.startswith("#")]
    for row in csv.DictReader(lines, delimiter=";"):
        path = files.path_of(row.get("url") or "", origin)
        if not path:
            continue
        if row["valid"] == "True":
            if path.endswith((".html", ".htm")):
                run.pages.add(path)
        elif path.endswith((".html", ".htm")) or "." not in Path(path).name:
            source = files.path_of(row.get("parentname") or "", origin)
            run.broken.setdefault(path, set()).update({source} if source else set())
        else:
            run.other_broken += 1


def run_linkinator(origin: str, k: int, work: Path, run: Run) -> None:
    out = work / f"linkinator-{run.round}.json"
    skip = "^(?!" + origin.replace(".", r"\.") + "/)"
    cmd = [
        str(LINKINATOR),
        f"{origin}/",
        "--recurse",
        "--format",
        "json",
        "--concurrency",
        str(k),
        "--skip",
        skip,
        "--retry-errors",
        "--retry-errors-count",
        "3",
    ]
    timed(cmd, work / f"linkinator-{run.round}.log", run, stdout=out)
    try:
        links = json.loads(out.read_text())["links"]
    except (ValueError, KeyError) as exc:
        # seen once: exit 13 (Node's "unsettled top-level await") with nothing written, the next run fine
        run.notes.append(
            f"no usable output (exit {run.exit_code}; {exc}): {tail(work / f'linkinator-{run.round}.log')}"
        )
        return
    errors = 0
    for link in links:
        path = files.path_of(link["url"], origin)
        if not path:
            continue
        if link["state"] == "OK":
            if path.endswith((".html", ".htm")):
                run.pages.add(path)
        elif link["state"] == "BROKEN":
            if link.get("status") != 404:
                errors += 1
            elif path.endswith((".html", ".htm")) or "." not in Path(path).name:
                source = files.path_of(link.get("parent") or "", origin)
                run.broken.setdefault(path, set()).update({source} if source else set())
            else:
                run.other_broken += 1
    if errors:
        run.notes.append(f"{errors} internal links BROKEN without a status (connection errors, not 404s)")


def run_floor(origin: str, k: int, work: Path, run: Run) -> None:
    out = work / f"floor-{run.round}.json"
    cmd = [sys.executable, str(FLOOR), f"{origin}/index.html", "--parallels", str(k)]
    timed(cmd, work / f"floor-{run.round}.log", run, stdout=out)
    try:
        found = json.loads(out.read_text())
    except ValueError as exc:
        run.notes.append(
            f"no usable output (exit {run.exit_code}; {exc}): {tail(work / f'floor-{run.round}.log')}"
        )
        return
    run.pages = {p for p in (files.path_of(url, origin) for url in found["pages"]) if p}
    for url, sources in found["broken"].items():
        path = files.path_of(url, origin)
        if path:
            run.broken[path] = {p for p in (files.path_of(u, origin) for u in sources) if p}


def tail(log: Path) -> str:
    lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
    return lines[-1][:300] if lines else "(empty log)"


# -- nitpicker's other answers ---------------------------------------------------------------------------
def nitpicker_extras(archive: Path, origin: str, truth: files.Truth, k: int, work: Path) -> dict[str, Any]:
    """Duplicated titles from the crawl; orphans from an inventory of every HTML file on a copy of it."""
    extras: dict[str, Any] = {}
    groups = rows_of(query(archive, "duplicates", field="title", limit=10000))
    extras["duplicate_titles"] = {g["value"]: {files.path_of(u, origin) for u in urls_of(g)} for g in groups}
    inventory = work / "inventory.txt"
    inventory.write_text("".join(f"{origin}/{p}\n" for p in sorted(truth.html_files)))
    copy = work / "inventory.nitpicker"
    shutil.copyfile(archive, copy)
    cmd = [
        str(NITPICKER),
        "crawl",
        "--inventory",
        str(inventory),
        "-o",
        str(copy),
        "--no-fetch-external",
        "--no-image",
        "--parallels",
        str(k),
    ]
    run = Run("nitpicker --inventory", 0)
    timed(cmd, work / "inventory.log", run)
    extras["inventory_seconds"] = run.wall
    if run.exit_code not in (0, 2):
        extras["inventory_error"] = f"exit {run.exit_code}: {tail(work / 'inventory.log')}"
        return extras
    rows = rows_of(query(copy, "isolated-pages", include_roots=False, limit=10000))
    extras["orphans"] = {files.path_of(r["url"], origin) for r in rows}
    return extras


def urls_of(group: dict[str, Any]) -> list[str]:
    return [p if isinstance(p, str) else p["url"] for p in group.get("urls") or []]


# -- reporting -------------------------------------------------------------------------------------------
def pairs(broken: dict[str, set[str]]) -> int:
    return sum(len(sources) for sources in broken.values())


def check(run: Run, truth: files.Truth) -> list[str]:
    """How ``run`` differs from the files (pages and broken anchor targets with their sources)."""
    problems = []
    if run.pages != truth.reachable:
        problems.append(
            f"pages: {len(run.pages)} vs {len(truth.reachable)} in the files; missing "
            f"{sorted(truth.reachable - run.pages)[:8]}, unexpected {sorted(run.pages - truth.reachable)[:8]}"
        )
    if set(run.broken) != set(truth.broken):
        problems.append(f"broken targets {sorted(run.broken)} vs the files' {sorted(truth.broken)}")
    elif pairs(run.broken) != pairs(truth.broken):
        problems.append(
            f"broken source→target pairs {pairs(run.broken)} vs {pairs(truth.broken)} in the files"
        )
    if files.BROKEN_TARGET not in run.broken:
        problems.append(
            f"the injected broken link {files.BROKEN_SOURCE} → {files.BROKEN_HREF} was not reported"
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds of every tool (default 1)")
    ap.add_argument(
        "--parallels",
        type=int,
        default=4,
        help="K: nitpicker --parallels, linkchecker --threads, linkinator --concurrency, floor --parallels (default 4)",
    )
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {','.join(TOOLS)}")
    ap.add_argument(
        "--install",
        action="store_true",
        help=f"install python3.11-doc (apt) and the other tools into {CACHE} when missing",
    )
    ap.add_argument("--keep", type=Path, help="keep the site, archives and logs in this folder")
    ap.add_argument(
        "--render",
        choices=("always", "never", "auto"),
        default="always",
        help="nitpicker's --render: never reads every page from the HTML as sent, no browser; auto renders a sample per page template and the templates it shows JavaScript at work in (default always)",
    )
    args = ap.parse_args(argv)
    tools = {t for t in args.tools.split(",") if t}
    if "nitpicker" not in tools or not tools <= set(TOOLS):
        ap.error(f"--tools must include nitpicker and name only {', '.join(TOOLS)}")
    if args.install:
        install(tools)
    problem = missing(tools)
    if problem:
        print(f"docs_site: {problem}", file=sys.stderr)
        return 2
    # shell-split by nitpicker, so the one switch (it contains spaces) must be quoted
    os.environ.setdefault("NITPICKER_BROWSER_ARGS", shlex.quote(LOOPBACK_ONLY))
    order = [t for t in TOOLS if t in tools]
    with contextlib.ExitStack() as stack:
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            args.keep.mkdir(parents=True)
            work = args.keep
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="docs-site-bench-")))
        site = work / "site"
        files.prepare(site)
        truth = files.read(site)
        port = stack.enter_context(serve(site))
        origin = f"http://127.0.0.1:{port}"
        print(
            f"site: {files.SOURCE} → {site}, {len(truth.html_files)} HTML files, {len(truth.reachable)} reachable "
            f"from index.html, {len(truth.broken)} broken targets ({pairs(truth.broken)} source→target pairs), "
            f"{len(truth.orphans)} orphans, served at {origin}; K={args.parallels}; {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        runs: list[Run] = []
        for rnd in range(1, args.rounds + 1):
            # alternate the order so neither tool always runs on a warmer page cache
            for tool in order if rnd % 2 else order[::-1]:
                run = Run(tool, rnd)
                if tool == "nitpicker":
                    run_nitpicker(origin, args.parallels, work, run, args.render)
                elif tool == "linkchecker":
                    run_linkchecker(origin, args.parallels, work, run)
                elif tool == "floor":
                    run_floor(origin, args.parallels, work, run)
                else:
                    run_linkinator(origin, args.parallels, work, run)
                runs.append(run)
                print(
                    f"  round {rnd} {tool}: {run.wall:.1f} s, exit {run.exit_code}, "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        first = work / "nitpicker-1.nitpicker"
        extras = nitpicker_extras(first, origin, truth, args.parallels, work) if first.exists() else {}
        return report(runs, truth, extras)


def report(runs: list[Run], truth: files.Truth, extras: dict[str, Any]) -> int:
    print(
        f"\n{'tool':<13}{'round':>6}{'wall s':>9}{'vs nitpicker':>14}{'pages':>7}{'broken':>8}{'pairs':>7}"
        f"{'other':>7}{'exit':>6}  agrees with the files"
    )
    nit = {r.round: r for r in runs if r.tool == "nitpicker"}
    for run in runs:
        base = nit.get(run.round)
        ratio = f"{base.wall / run.wall:.2f}" if base and run.wall and run is not base else "-"
        problems = check(run, truth)
        print(
            f"{run.tool:<13}{run.round:>6}{run.wall:>9.1f}{ratio:>14}{len(run.pages):>7}{len(run.broken):>8}"
            f"{pairs(run.broken):>7}{run.other_broken:>7}{run.exit_code:>6}  {'yes' if not problems else 'no'}"
        )
        run.notes[:0] = problems
    print(
        f"{'(the files)':<13}{'':>6}{'':>9}{'':>14}{len(truth.reachable):>7}{len(truth.broken):>8}"
        f"{pairs(truth.broken):>7}"
    )
    print("vs nitpicker = nitpicker's wall time / the tool's, same round (below 1: nitpicker faster)")
    failures = [
        f"{r.tool} round {r.round}: {p}" for r in runs if r.tool == "nitpicker" for p in check(r, truth)
    ]
    dups = extras.get("duplicate_titles")
    if dups is not None and dups != truth.duplicate_titles:
        failures.append(
            f"duplicates: {len(dups)} title groups vs {len(truth.duplicate_titles)} in the files; "
            f"differ on {sorted(set(dups) ^ set(truth.duplicate_titles))[:5]}"
        )
    orphans = extras.get("orphans")
    if "inventory_error" in extras:
        failures.append(f"inventory: {extras['inventory_error']}")
    elif orphans is not None and orphans != truth.orphans:
        failures.append(f"isolated-pages: {sorted(orphans)} vs the files' orphans {sorted(truth.orphans)}")
    print(
        f"\nnitpicker duplicates: {len(dups or {})} title groups (files: {len(truth.duplicate_titles)}), injected "
        f"{files.DUP_TO} found: {any(files.DUP_TO in g for g in (dups or {}).values())}"
    )
    print(
        f"nitpicker isolated-pages after --inventory ({extras.get('inventory_seconds', 0):.1f} s): "
        f"{sorted(orphans or ())} (files: {sorted(truth.orphans)})"
    )
    print("\nnotes:")
    for run in runs:
        for note in run.notes:
            print(f"  {run.tool} round {run.round}: {note}")
    walls = {t: [r.wall for r in runs if r.tool == t] for t in TOOLS}
    summary = {
        "site_html_files": len(truth.html_files),
        "reachable": len(truth.reachable),
        "broken_targets": len(truth.broken),
        "broken_pairs": pairs(truth.broken),
        "orphans": len(truth.orphans),
        # per round, in round order: one failed run of a tool must not hide what its other runs found
        "tools": {
            t: {
                "median_wall_s": round(statistics.median(w), 2),
                "pages": [len(r.pages) for r in runs if r.tool == t],
                "broken_targets": [len(r.broken) for r in runs if r.tool == t],
                "broken_pairs": [pairs(r.broken) for r in runs if r.tool == t],
                "exit": [r.exit_code for r in runs if r.tool == t],
                "agrees": [not check(r, truth) for r in runs if r.tool == t],
            }
            for t, w in walls.items()
            if w
        },
        "ratios_nitpicker_over": {
            t: round(
                statistics.median(
                    nit[r.round].wall / r.wall for r in runs if r.tool == t and r.round in nit and r.wall
                ),
                3,
            )
            for t, w in walls.items()
            if w and t != "nitpicker"
        },
        "nitpicker_correct": not failures,
    }
    print("\n" + json.dumps(summary))
    if failures:
        print("\nnitpicker disagrees with the files:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
