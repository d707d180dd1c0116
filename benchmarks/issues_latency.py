"""Latency of `issues` and `issue-urls` on a large synthetic archive, with findings stored with the commits.

The archive comes from ``synth_archive.py`` (two commits: the second a re-crawl changing a few percent), or
``--archive``. Findings an older archive lacks are stored first through the writer, as a completing commit
would (that time is reported per commit). COLD runs each query in a new process with a fresh tar cache
(the unpack, plugin loading and the query timed apart; the OS page cache is not dropped). WARM runs each
query repeatedly in this process with the archive open and reports p50/p95 (the pages an element check's rows
are read from for their line:col are scanned again in every run). Every figure is also given as a
ratio to a baseline on the same machine: one ``SELECT count(*)`` pass over the commit's pages joined to
their states, so a loaded machine shows as a slow baseline rather than a slow query.

Targets (issue 15): `issues` ≤ 1 s cold and ≤ 100 ms warm, `issue-urls` paged ≤ 100 ms warm, the
lifecycle against a 100k-page base ≤ 2 s.

``--checks`` times instead what storing those findings costs: every crawl check (those of no analyzer) run on
the head commit the way the crawl runs them (one context, in the registry's order, so data shared by several
checks is paid by the first that reads it), with the total, the slowest checks, and against the same baseline
(target, issue 29: ≤ 10 s at 100,000 pages). ``--findings-out FILE`` writes every check's findings, sorted,
so two trees' results can be compared byte for byte.

    .venv/bin/python benchmarks/issues_latency.py --pages 10000
    .venv/bin/python benchmarks/issues_latency.py --archive /tmp/synth100k.nitpicker
    .venv/bin/python benchmarks/issues_latency.py --archive /tmp/synth100k.nitpicker --checks
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nitpicker_core_queries import element_rows  # noqa: E402

from nitpicker_core.archive import open_archive  # noqa: E402
from nitpicker_core.archive.writer import ArchiveWriter  # noqa: E402
from nitpicker_core.indexing import index_commit  # noqa: E402
from nitpicker_core.plugins import make_plugin_manager  # noqa: E402
from nitpicker_core.query import query_registry, run_query  # noqa: E402

MARKER = "ISSUES-LATENCY-RESULT "
# The duplicate-content checks (plugins/nitpicker_checks/duplicates.py) have their own target and figures
# (issue 31): ``--checks`` times them after the others and leaves them out of the total of issue 29.
DUPLICATES = ("content-exact-duplicate", "content-near-duplicate", "content-low")
BASELINE = (
    "SELECT count(*) FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.status IS NOT NULL"
)


def cases(head: int, first: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, query, parameters) measured: the overview, lifecycles, and pages of affected URLs."""
    return [
        ("issues (base: parent)", "issues", {}),
        (f"issues --base {first} (lifecycle)", "issues", {"base": str(first)}),
        (f"issues --base {head} (itself)", "issues", {"base": str(head)}),
        # no delta is stored for this pair: the lifecycle of 100k pages' findings is computed when asked
        (
            f"issues --commit {first} --base {head} (computed)",
            "issues",
            {"commit": str(first), "base": str(head)},
        ),
        ("issue-urls missing-csp, page 1", "issue-urls", {"check": "missing-content-security-policy"}),
        (
            "issue-urls missing-csp, offset 50000",
            "issue-urls",
            {"check": "missing-content-security-policy", "offset": 50000},
        ),
        ("issue-urls broken-link new", "issue-urls", {"check": "broken-link", "state": "new"}),
        # an element check: each row's page read and scanned for the line:col of its element (element_rows)
        ("issue-urls canonical-missing, page 1 (line:col)", "issue-urls", {"check": "canonical-missing"}),
        (
            "issue-urls canonical-missing, offset 50000 (line:col)",
            "issue-urls",
            {"check": "canonical-missing", "offset": 50000},
        ),
        ("issue-urls title-duplicate fixed", "issue-urls", {"check": "title-duplicate", "state": "fixed"}),
    ]


def one(archive: Path, name: str, params: dict[str, Any]) -> None:
    """The child of a cold run: times plugin loading, the unpack and the query, prints them on one line."""
    t = time.perf_counter()
    registry = query_registry(make_plugin_manager())
    plugins = time.perf_counter() - t
    t = time.perf_counter()
    reader = open_archive(archive)
    unpack = time.perf_counter() - t
    params = dict(params)
    commit = params.pop("commit", None)
    t = time.perf_counter()
    run_query(registry, reader, name, params, commit=commit)
    query = time.perf_counter() - t
    print(MARKER + json.dumps({"plugins": plugins, "unpack": unpack, "query": query}), flush=True)


def cold(archive: Path, name: str, params: dict[str, Any]) -> dict[str, Any]:
    cache = Path(tempfile.mkdtemp(prefix="issues-cold-"))
    env = {**os.environ, "NITPICKER_TAR_CACHE_DIR": str(cache)}
    try:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--archive",
                str(archive),
                "--one",
                name,
                "--params",
                json.dumps(params),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :])
    return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]}


def warm(reader: Any, registry: Any, name: str, params: dict[str, Any], runs: int) -> list[float]:
    params = dict(params)
    commit = params.pop("commit", None)  # the commit judged (HEAD when not given)
    run_query(registry, reader, name, params, commit=commit)  # untimed warm-up
    times = []
    for _ in range(runs):
        # the pages' scans for line:col are kept between queries: forgotten, so each run reads its pages
        element_rows._SCANS.clear()
        t = time.perf_counter()
        run_query(registry, reader, name, params, commit=commit)
        times.append(time.perf_counter() - t)
    return times


def baseline(reader: Any, commit: int, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        reader.execute(BASELINE, [commit])
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def time_checks(archive: Path, runs: int, top: int, findings_out: Path | None) -> None:
    """Every crawl check on the head commit, timed one by one in one context; the total and the slowest."""
    from nitpicker_core import Finding
    from nitpicker_core.check_context import CheckContext
    from nitpicker_core.indexing import collector_paused, evaluate
    from nitpicker_core.registries import check_registry

    pm = make_plugin_manager()
    crawl = [c for c in check_registry(pm) if not c.analyzer]
    checks = [c for c in crawl if c.id not in DUPLICATES]
    apart = [c for c in crawl if c.id in DUPLICATES]
    queries = query_registry(pm)
    with open_archive(archive) as reader:
        head = max(c["id"] for c in reader.commits() if c["status"] == "complete")
        pages = reader.execute("SELECT count(*) FROM commit_page WHERE commit_id = ?", [head])[0][0]
        base = baseline(reader, head, runs)
        reader.map_for_scans()  # as index_commit reads the commit (after the baseline, which does not)
        ctx = CheckContext(reader, head, queries)
        times: list[tuple[float, float, str, int, str | None]] = []
        found: dict[str, set[Finding]] = {}
        started, cpu_started = time.perf_counter(), time.process_time()
        with collector_paused():  # as index_commit runs them
            for check in checks:
                t, cpu = time.perf_counter(), time.process_time()
                findings, error = evaluate(check, ctx)
                times.append(
                    (time.perf_counter() - t, time.process_time() - cpu, check.id, len(findings), error)
                )
                # kept, as index_commit keeps them to store; sorted after the clock stops
                found[check.id] = findings
        total, cpu_total = time.perf_counter() - started, time.process_time() - cpu_started
        apart_started, apart_cpu = time.perf_counter(), time.process_time()
        with collector_paused():
            for check in apart:  # after the others, as they come in the registry: what they share is paid
                found[check.id] = evaluate(check, ctx)[0]
        apart_total, apart_cpu = time.perf_counter() - apart_started, time.process_time() - apart_cpu
    print(
        f"{archive.name}: {pages:,} URLs in commit {head}; {len(checks)} crawl checks in {total:.2f} s "
        f"({cpu_total:.2f} s of CPU; {total / base:,.0f}× the baseline of {base * 1000:.1f} ms; "
        f"{sum(t[3] for t in times):,} findings)"
    )
    if apart:
        print(
            f"apart from them, the {len(apart)} duplicate-content checks ({', '.join(c.id for c in apart)}): "
            f"{apart_total:.2f} s ({apart_cpu:.2f} s of CPU)"
        )
    print(f"slowest {top} (wall, CPU, share of the wall time):")
    for seconds, cpu, name, count, error in sorted(times, reverse=True)[:top]:
        note = f"  ERROR {error}" if error else ""
        print(f"  {name:44} {seconds:7.2f} s {cpu:7.2f} s {seconds / total:6.1%} {count:9,} findings{note}")
    failed = [(name, error) for _, _, name, _, error in times if error]
    for name, error in failed:
        print(f"error: {name}: {error}")
    if findings_out is not None:
        listed = {name: sorted([f.url, f.detail] for f in findings) for name, findings in found.items()}
        findings_out.write_text(json.dumps(listed, sort_keys=True, ensure_ascii=False, indent=0))
        print(f"findings written to {findings_out}")


def store_missing(archive: Path) -> list[tuple[int, float, int]]:
    """Store the findings of commits that lack them (an archive written before they existed)."""
    with open_archive(archive) as reader:
        commits = sorted(c["id"] for c in reader.commits() if c["status"] == "complete")
        has = bool(reader.execute("SELECT 1 FROM sqlite_master WHERE name = 'check_result'"))
        done = {r[0] for r in reader.execute("SELECT DISTINCT commit_id FROM check_result")} if has else set()
    built = []
    if set(commits) <= done:
        return built
    w = ArchiveWriter.open(archive)
    pm = make_plugin_manager()
    try:
        for commit in commits:
            t = time.perf_counter()
            stored = index_commit(w, commit, pm)
            built.append((commit, time.perf_counter() - t, stored))
        w.write()
    finally:
        w.close()
    return built


def copy_commit(archive: Path) -> None:
    """Add a second commit copied from the only one, minus 1 % of its URLs (a re-crawl that lost some pages).

    Generating a second 100,000-page commit takes as long as the first; a copy gives the lifecycle the same
    amount of work (every finding of the commit is looked up in the base) in seconds.
    """
    w = ArchiveWriter.open(archive)
    try:
        conn = w._conn
        first = conn.execute("SELECT max(id) FROM commits").fetchone()[0]
        columns = [
            r[1] for r in conn.execute("PRAGMA table_info(commits)") if r[1] not in ("id", "parent_id")
        ]
        listed = ", ".join(f'"{c}"' for c in columns)
        conn.execute(
            f"INSERT INTO commits (parent_id, {listed}) SELECT id, {listed} FROM commits WHERE id = ?",
            (first,),
        )
        second = conn.execute("SELECT max(id) FROM commits").fetchone()[0]
        for table, where in (
            ("commit_page", "AND url_id % 100 != 7"),
            ("commit_resource", ""),
            ("crawl_error", "AND url_id % 100 != 7"),
        ):
            cols = [
                r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in ("id", "commit_id")
            ]
            names = ", ".join(f'"{c}"' for c in cols)
            conn.execute(
                f"INSERT INTO {table} (commit_id, {names}) SELECT ?, {names} FROM {table} "
                f"WHERE commit_id = ? {where}",
                (second, first),
            )
        conn.execute("UPDATE ref SET commit_id = ? WHERE name = 'HEAD'", (second,))
        conn.commit()
        w._touch()
        t = time.perf_counter()
        w.build_aggregates(second)
        print(f"copied commit {first} as {second}; its aggregates in {time.perf_counter() - t:.1f} s")
        w.write()
    finally:
        w.close()


def scale_findings(archive: Path, factor: int) -> None:
    """Multiply every commit's stored findings ``factor`` times (URLs suffixed ``#sK``, hashes offset alike).

    The queries read only the finding tables, so this measures them at ``factor`` times the findings (what
    ``factor`` times the pages would store) without generating and checking that many pages. Lifecycles keep
    their meaning: a copy persists, appears or disappears exactly as its original does.
    """
    w = ArchiveWriter.open(archive)
    try:
        conn = w._conn
        conn.execute("CREATE TEMP TABLE original_finding AS SELECT * FROM set_finding")
        conn.execute("CREATE TEMP TABLE original_hash AS SELECT * FROM set_hash")
        for k in range(1, factor):
            conn.execute(
                "INSERT INTO set_finding (set_id, url, detail) SELECT set_id, url || '#s' || ?, detail "
                "FROM original_finding",
                (k,),
            )
            # the copy of a hash is the same in every set, so copies persist or change as their originals
            conn.execute(
                "INSERT OR IGNORE INTO set_hash (set_id, h) SELECT set_id, h + ? * 1000003 "
                "FROM original_hash",
                (k,),
            )
        conn.execute("UPDATE check_result SET findings = findings * ?, urls = urls * ?", (factor, factor))
        conn.execute(
            "UPDATE finding_delta SET new = new * ?, fixed = fixed * ?, persisting = persisting * ?, "
            "regressed = regressed * ?, new_urls = new_urls * ?, fixed_urls = fixed_urls * ?, "
            "persisting_urls = persisting_urls * ?, regressed_urls = regressed_urls * ?",
            (factor,) * 8,
        )
        conn.commit()
        w._touch()
        w.write()
    finally:
        w.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, help="reuse this archive (else generate one)")
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--copy-commit",
        action="store_true",
        help="the archive has one commit: add a second one copied from it (see copy_commit)",
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=1,
        help="multiply the stored findings this many times first (see scale_findings)",
    )
    parser.add_argument(
        "--checks",
        action="store_true",
        help="time every crawl check on the head commit instead (see time_checks)",
    )
    parser.add_argument("--top", type=int, default=10, help="with --checks: how many of the slowest to list")
    parser.add_argument("--findings-out", type=Path, help="with --checks: write every check's findings here")
    parser.add_argument("--only", help="run only the cases whose label contains this text (e.g. line:col)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.archive, args.one, json.loads(args.params))
        return
    archive = args.archive
    if archive is None:
        from synth_archive import generate

        archive = Path(tempfile.gettempdir()) / f"issues-bench-{args.pages}.nitpicker"
        if not archive.exists():
            generate(archive, args.pages, commits=2)
    if args.checks:
        time_checks(archive, args.runs, args.top, args.findings_out)
        return
    if args.copy_commit:
        copy_commit(archive)
    for commit, seconds, stored in store_missing(archive):
        print(f"stored {stored} checks' findings of commit {commit} in {seconds:.1f} s")
    if args.scale > 1:
        scale_findings(archive, args.scale)
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        commits = sorted(c["id"] for c in reader.commits() if c["status"] == "complete")
        head, first = commits[-1], commits[0]
        pages = reader.execute("SELECT count(*) FROM commit_page WHERE commit_id = ?", [head])[0][0]
        findings = reader.execute(
            "SELECT coalesce(sum(findings), 0) FROM check_result WHERE commit_id = ?", [head]
        )[0][0]
        base = baseline(reader, head, args.runs)
        print(
            f"{archive.name}: {pages:,} URLs in commit {head}, {findings:,} stored findings; "
            f"baseline (count(*) over the pages) {base * 1000:.1f} ms"
        )
        print(
            f"{'case':42} {'cold query':>11} {'(unpack)':>9} {'warm p50':>9} {'warm p95':>9} {'p95/base':>9}"
        )
        for label, name, params in cases(head, first):
            if args.only and args.only not in label:
                continue
            c = cold(archive, name, params)
            times = warm(reader, registry, name, params, args.runs)
            p50, p95 = statistics.median(times), sorted(times)[max(0, int(len(times) * 0.95) - 1)]
            if "error" in c:
                print(f"{label:42} error: {c['error']}")
                continue
            print(
                f"{label:42} {c['query'] * 1000:9.0f}ms {c['unpack']:8.1f}s {p50 * 1000:7.1f}ms "
                f"{p95 * 1000:7.1f}ms {p95 / base:9.2f}"
            )


if __name__ == "__main__":
    main()
