"""Latency of every registered query on a large synthetic archive: cold (fresh process, fresh unpack) and warm.

The archive is generated through the archive API by ``synth_archive.py`` (or reused with ``--archive``).
Queries are discovered from the registry at run time, so new ones are measured without touching this file.

COLD runs each query in a new process (this script with ``--one``) whose ``NITPICKER_TAR_CACHE_DIR`` is a
fresh temporary directory, so the tar is unpacked again; the child times plugin loading, ``open_archive``
(the unpack) and the query separately. The OS page cache is not dropped, so "cold" means a cold nitpicker,
not a cold disk. WARM runs each query repeatedly in this process with the archive already open (one
untimed warm-up, then ``--runs`` timed runs) and reports p50 and p95.

Targets: a cold query in at most 1 s, a warm p95 of at most 100 ms.

    .venv/bin/python benchmarks/query_latency.py --pages 10000          # a quick check, ~2 minutes
    .venv/bin/python benchmarks/query_latency.py                          # 100k pages, 3M anchors
    .venv/bin/python benchmarks/query_latency.py --only pages,summary     # a subset, reusing the archive
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nitpicker_core.archive import open_archive  # noqa: E402
from nitpicker_core.plugins import LOAD_ENV, make_plugin_manager  # noqa: E402
from nitpicker_core.query import query_registry, run_query  # noqa: E402

COLD_QUERY_TARGET = 1.0  # seconds
WARM_P95_TARGET = 0.100  # seconds
MARKER = "QUERY-LATENCY-RESULT "
WORK = Path("/tmp/qbench")


# --- the child: one cold query --------------------------------------------------------------------------


def one(archive: Path, name: str, params: dict[str, Any]) -> None:
    """Runs in a fresh process: time plugin loading, the unpacking open, the query and the JSON encoding."""
    t = time.perf_counter()
    registry = query_registry(make_plugin_manager())
    plugins = time.perf_counter() - t
    t = time.perf_counter()
    reader = open_archive(archive)
    opened = time.perf_counter() - t
    try:
        t = time.perf_counter()
        result = run_query(registry, reader, name, params)
        queried = time.perf_counter() - t
        t = time.perf_counter()
        encoded = json.dumps(result, default=str)
        encode = time.perf_counter() - t
    finally:
        reader.close()
    rows, total = count_rows(result)
    print(
        MARKER
        + json.dumps(
            {
                "plugins": plugins,
                "open": opened,
                "query": queried,
                "encode": encode,
                "bytes": len(encoded),
                "rows": rows,
                "total": total,
            }
        )
    )


# --- parameters -----------------------------------------------------------------------------------------


def samples(reader: Any) -> dict[str, list[Any]]:
    """Values from the archive to try for required parameters, keyed by kind."""
    commit = reader.resolve(None)

    def column(sql: str) -> list[Any]:
        return [r[0] for r in reader.execute(sql, (commit,) if "?" in sql else ())]

    # A typical page well inside the crawl, with JSON-LD and tags if there are any.
    page = column(
        "SELECT u.url FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
        "WHERE cp.commit_id = ? AND ps.status = 200 AND ps.is_external = 0 AND ps.html_sha256 IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM jsonld j WHERE j.state_id = ps.id) "
        "AND EXISTS (SELECT 1 FROM tag t WHERE t.state_id = ps.id) "
        'ORDER BY cp."order" LIMIT 1 OFFSET 300'
    )
    page = page or column(
        "SELECT u.url FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        'WHERE cp.commit_id = ? ORDER BY cp."order" LIMIT 1'
    )
    resource = column(
        "SELECT u.url FROM commit_resource_referrer r JOIN url u ON u.id = r.resource_url_id "
        "WHERE r.commit_id = ? GROUP BY r.resource_url_id ORDER BY COUNT(*) DESC LIMIT 1"
    )
    image = column("SELECT src FROM image LIMIT 1")
    external = column(
        "SELECT u.url FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps "
        "ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 1 LIMIT 1"
    )
    jsonld_types: dict[str, int] = {}
    for (raw,) in reader.execute("SELECT types FROM jsonld LIMIT 5000"):
        for kind in json.loads(raw or "[]"):
            jsonld_types[kind] = jsonld_types.get(kind, 0) + 1
    return {
        "page": page,
        "resource": resource,
        "image": image,
        "external": external,
        "provider": column("SELECT provider FROM tag GROUP BY provider ORDER BY COUNT(*) DESC LIMIT 3"),
        "category": column("SELECT category FROM tag GROUP BY category ORDER BY COUNT(*) DESC LIMIT 3"),
        "type": sorted(jsonld_types, key=lambda k: -jsonld_types[k])[:3],
        "kind": column("SELECT kind FROM crawl_error GROUP BY kind ORDER BY COUNT(*) DESC LIMIT 3"),
        "rule": column("SELECT rule FROM violation GROUP BY rule ORDER BY COUNT(*) DESC LIMIT 3"),
        "analyzer": column("SELECT DISTINCT analyzer FROM violation LIMIT 3"),
        "severity": column("SELECT severity FROM violation GROUP BY severity ORDER BY COUNT(*) DESC"),
        "commit": column("SELECT id FROM commits ORDER BY id"),
        "field": ["title", "description", "canonical", "h1"],
    }


def candidates(name: str, schema: dict[str, Any], pool: dict[str, list[Any]]) -> list[Any]:
    """Values worth trying for one required parameter, most likely first."""
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type", "string")
    text = f"{name} {schema.get('description', '')}".lower()
    if kind == "integer":
        if name in ("base", "commit", "a", "b") or "commit" in text:
            return pool["commit"]
        if "status" in name:
            return [404, 200, 500]
        return [max(schema.get("minimum", 1), 1)]
    if kind == "boolean":
        return [True, False]
    if kind == "array":
        return [pool["field"][:2]]
    urls = [*pool["page"], *pool["resource"], *pool["image"], *pool["external"]]
    if "resource" in text or "image" in text:
        urls = [*pool["resource"], *pool["image"], *pool["page"], *pool["external"]]
    keyed = {
        "url": urls,
        "page": urls,
        "href": urls,
        "src": urls,
        "target": urls,
        "resource": urls,
        "provider": pool["provider"],
        "tag": pool["provider"],
        "technology": pool["provider"],
        "category": pool["category"],
        "type": pool["type"],
        "jsonld_type": pool["type"],
        "schema_type": pool["type"],
        "kind": pool["kind"],
        "error_kind": pool["kind"],
        "rule": pool["rule"],
        "analyzer": pool["analyzer"],
        "severity": pool["severity"],
        "field": pool["field"],
        "column": pool["field"],
    }
    if name in keyed:
        return keyed[name] or [""]
    for key, values in keyed.items():
        if key in name and values:
            return values
    if "url" in text:
        return urls
    return [*pool["field"], *pool["page"][:1], ""]


def nonempty(result: Any) -> bool:
    if isinstance(result, dict):
        if "total" in result:
            return bool(result["total"])
        if "items" in result:
            return bool(result["items"])
    return bool(result)


def choose_params(
    registry: Any, reader: Any, name: str, pool: dict[str, list[Any]]
) -> tuple[dict[str, Any], str]:
    """Parameters for ``name``: the defaults, plus for required ones the first sampled values that work.

    A query whose function needs an optional parameter that has no default (so the registry passes nothing)
    fails with TypeError; then those parameters are sampled too, and the note says so.
    """
    query = registry[name]
    required = [p for p in query.required if p in query.params]
    params, note, error = _try_samples(registry, reader, name, required, pool)
    if error and "required positional argument" in error:
        optional = [p for p, schema in query.params.items() if p not in required and "default" not in schema]
        params, note, retry = _try_samples(registry, reader, name, [*required, *optional], pool)
        note = f"fails without {', '.join(optional)} ({error}); measured with it set" + (
            f"; {note}" if note else ""
        )
        error = retry
    return params, note or error


def _try_samples(
    registry: Any, reader: Any, name: str, names: list[str], pool: dict[str, list[Any]]
) -> tuple[dict[str, Any], str, str]:
    """(params, note, error): the first combination giving a non-empty result, else the first that runs."""
    query = registry[name]
    options = [candidates(p, dict(query.params[p]), pool) for p in names]
    fallback: dict[str, Any] | None = None
    error = ""
    for combo in itertools.islice(itertools.product(*options), 16):
        params = dict(zip(names, combo, strict=True))
        try:
            result = run_query(registry, reader, name, params)
        except Exception as exc:  # a sample that does not fit: try the next
            error = f"{type(exc).__name__}: {exc}"
            continue
        if nonempty(result):
            return params, "", ""
        fallback = params if fallback is None else fallback
    if fallback is not None:
        return fallback, "empty result with every sample", ""
    return dict(zip(names, (o[0] for o in options), strict=True)), "", error or "no sample fits"


# --- measuring ------------------------------------------------------------------------------------------


def count_rows(result: Any) -> tuple[int | None, int | None]:
    """(rows returned, total if the query reports one)."""
    if isinstance(result, dict):
        total = result.get("total") if isinstance(result.get("total"), int) else None
        if isinstance(result.get("items"), list):
            return len(result["items"]), total
        lists = [v for v in result.values() if isinstance(v, list)]
        return (sum(len(v) for v in lists) if lists else len(result)), total
    if isinstance(result, list):
        return len(result), None
    return None, None


def cold(archive: Path, name: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop(LOAD_ENV, None)
    cache = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=WORK))
    env["NITPICKER_TAR_CACHE_DIR"] = str(cache)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--archive",
        str(archive),
        "--one",
        name,
        "--params",
        json.dumps(params),
    ]
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    wall = time.perf_counter() - t
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return {**json.loads(line[len(MARKER) :]), "wall": wall}
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": tail[:200]}


def nearest_rank(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


class Deadline:
    """Interrupt the SQLite statement running on ``reader`` after ``seconds`` (a Python loop is not stopped)."""

    def __init__(self, reader: Any, seconds: float) -> None:
        self.timer = threading.Timer(seconds, self._fire, (reader._conn,))  # noqa: SLF001
        self.fired = False

    def _fire(self, conn: Any) -> None:
        self.fired = True
        conn.interrupt()

    def __enter__(self) -> Deadline:
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()


def warm(
    registry: Any, reader: Any, name: str, params: dict[str, Any], runs: int, budget: float, timeout: float
) -> dict[str, Any]:
    t = time.perf_counter()
    deadline = Deadline(reader, timeout)
    try:
        with deadline:
            result = run_query(registry, reader, name, params)  # the untimed warm-up
    except Exception as exc:
        if deadline.fired:
            return {"error": f"timeout after {timeout:.0f} s (interrupted)"}
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    first = time.perf_counter() - t
    times: list[float] = []
    spent = first
    while len(times) < runs and (spent < budget or len(times) < 3):
        if first > budget and times:
            break  # a very slow query: one warm run besides the warm-up is enough to report
        t = time.perf_counter()
        run_query(registry, reader, name, params)
        times.append(time.perf_counter() - t)
        spent += times[-1]
    rows, total = count_rows(result)
    return {
        "first": first,
        "p50": statistics.median(times),
        "p95": nearest_rank(times, 0.95),
        "runs": len(times),
        "rows": rows,
        "total": total,
    }


# --- SQL diagnosis --------------------------------------------------------------------------------------


def explain(registry: Any, reader: Any, name: str, params: dict[str, Any], timeout: float) -> list[str]:
    """The statements ``name`` runs, each timed on its own (up to ``timeout``), with SQLite's query plan."""
    statements: list[str] = []
    conn = reader._conn  # noqa: SLF001 - a benchmark may look inside
    conn.set_trace_callback(statements.append)
    t = time.perf_counter()
    try:
        with Deadline(reader, timeout) as deadline:
            run_query(registry, reader, name, params)
    except Exception:
        if not deadline.fired:
            raise
    finally:
        conn.set_trace_callback(None)
    total = time.perf_counter() - t
    seen: set[str] = set()
    distinct = [s for s in statements if not (s in seen or seen.add(s))]  # type: ignore[func-returns-value]
    heavy = []
    sql_time = 0.0
    for sql in distinct:
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            continue
        t = time.perf_counter()
        try:
            with Deadline(reader, timeout) as deadline:
                conn.execute(sql).fetchall()
        except Exception:
            if not deadline.fired:
                raise
        elapsed = time.perf_counter() - t
        sql_time += elapsed * statements.count(sql)
        heavy.append((elapsed, sql))
    stopped = " (stopped at the timeout)" if total >= timeout else ""
    lines = [
        f"{name}: {len(statements)} statements ({len(distinct)} distinct), query {total * 1000:.0f} ms"
        f"{stopped}, of which SQL ~{sql_time * 1000:.0f} ms (the rest is Python)"
    ]
    for elapsed, sql in sorted(heavy, reverse=True)[:3]:
        short = " ".join(sql.split())
        lines.append(
            f"  [{elapsed * 1000:.0f} ms x{statements.count(sql)}] "
            f"{short[:600]}{' …' if len(short) > 600 else ''}"
        )
        depth = {0: 0}
        for node, parent, _, detail in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall():
            depth[node] = depth.get(parent, 0) + 1
            lines.append("      " + "  " * depth[node] + detail)
    return lines


# --- the report -----------------------------------------------------------------------------------------


def fmt(value: Any, scale: float = 1.0, digits: int = 2) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def verdict(c: dict[str, Any], w: dict[str, Any]) -> str:
    if "error" in c and "error" in w:
        return "ERROR"
    misses = []
    if "error" not in c and c["query"] > COLD_QUERY_TARGET:
        misses.append("cold")
    if "error" not in w and w["p95"] > WARM_P95_TARGET:
        misses.append("warm")
    return "MISS " + "+".join(misses) if misses else "ok"


def table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'query':<22} {'cold open s':>11} {'cold query s':>12} {'warm p50 ms':>11} {'warm p95 ms':>11} "
        f"{'runs':>4} {'rows':>6} {'total':>9}  target"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        c, w = r["cold"], r["warm"]
        rows = w.get("rows", c.get("rows"))
        total = w.get("total", c.get("total"))
        lines.append(
            f"{r['name']:<22} {fmt(c.get('open')):>11} {fmt(c.get('query'), 1, 3):>12} "
            f"{fmt(w.get('p50'), 1000, 1):>11} {fmt(w.get('p95'), 1000, 1):>11} {w.get('runs', '-'):>4} "
            f"{'-' if rows is None else rows:>6} {'-' if total is None else total:>9}  {verdict(c, w)}"
        )
        for key, where in (("error", c), ("error", w)):
            if key in where:
                lines.append(f"{'':<22} error: {where[key]}")
                break
        if r.get("note"):
            lines.append(f"{'':<22} note: {r['note']} (params {json.dumps(r['params'])})")
    return "\n".join(lines)


def default_archive(pages: int) -> Path:
    label = f"{pages // 1000}k" if pages % 1000 == 0 else str(pages)
    return WORK / f"{label}.nitpicker"


def ensure_archive(path: Path, pages: int, anchors_per_page: int, commits: int, regenerate: bool) -> None:
    import synth_archive

    if path.exists() and not regenerate:
        with open_archive(path) as reader:
            made = reader.info().get("synthetic") or {}
        note = (
            ""
            if (made.get("pages"), made.get("commits", 1)) == (pages, commits)
            else (
                f" (made with {made.get('pages', '?')} pages and {made.get('commits', 1)} commit(s), "
                f"not {pages} and {commits}: use --regenerate)"
            )
        )
        print(f"reusing {path} ({path.stat().st_size / 1e6:.0f} MB){note}")
        return
    print(
        f"generating {path}: {pages:,} URLs, {anchors_per_page} anchors per page on average, "
        f"{commits} commit(s) …"
    )
    stats = synth_archive.generate(path, pages, anchors_per_page, commits, log=print)
    print(synth_archive.report(stats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--anchors-per-page", type=int, default=30)
    parser.add_argument(
        "--archive",
        type=Path,
        help="archive to reuse (generated there if missing); default /tmp/qbench/<pages>.nitpicker",
    )
    parser.add_argument(
        "--commits",
        type=int,
        default=2,
        help="crawls in a generated archive (the second changes a few percent of the site, so diff has work)",
    )
    parser.add_argument("--regenerate", action="store_true", help="generate even if the archive exists")
    parser.add_argument(
        "--build-aggregates",
        action="store_true",
        help="recompute the stored aggregates of every complete commit first (older archives)",
    )
    parser.add_argument("--runs", type=int, default=20, help="timed warm runs per query")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of warm runs per query at most")
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds one run of a query may take (cold: the process is killed; warm and "
        "explain: the SQLite statement is interrupted)",
    )
    parser.add_argument("--only", help="comma-separated query names to measure")
    parser.add_argument("--explain", type=int, default=3, help="query plans of the N slowest queries")
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()

    archive = (args.archive or default_archive(args.pages)).absolute()
    if args.one:
        one(archive, args.one, json.loads(args.params))
        return
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ.pop(LOAD_ENV, None)
    warm_cache = Path(tempfile.mkdtemp(prefix="warm-cache-", dir=WORK))
    os.environ["NITPICKER_TAR_CACHE_DIR"] = str(warm_cache)
    try:
        ensure_archive(archive, args.pages, args.anchors_per_page, args.commits, args.regenerate)
        if args.build_aggregates:
            build_aggregates(archive)
        measure(archive, args)
    finally:
        shutil.rmtree(warm_cache, ignore_errors=True)


def aggregate_report(reader: Any) -> str:
    """What the stored per-commit aggregates cost when the commits completed (or that there are none)."""
    try:
        rows = reader.execute("SELECT commit_id, seconds, build FROM agg_commit ORDER BY commit_id")
    except Exception:  # an archive written before aggregates existed
        rows = []
    if not rows:
        return "no stored aggregates: every query computes on demand (rebuild with --build-aggregates)"
    parts = []
    for commit, seconds, totals in rows:
        data = json.loads(totals)
        steps = sorted(data.get("steps", {}).items(), key=lambda kv: -kv[1])[:3]
        parts.append(
            f"commit {commit}: {seconds:.1f} s wall, {data.get('cpu_seconds', 0):.1f} s CPU "
            f"(slowest steps: {', '.join(f'{k} {v:.1f} s' for k, v in steps)})"
        )
    return "aggregates built at commit finish: " + "; ".join(parts)


def build_aggregates(archive: Path) -> None:
    """Recompute the stored aggregates of every complete commit (an archive from older code)."""
    from nitpicker_core.archive import ArchiveWriter

    with ArchiveWriter.open(archive) as writer:
        for commit in [
            c for (c,) in writer._conn.execute("SELECT id FROM commits WHERE status = 'complete'")
        ]:
            print(
                f"building aggregates of commit {commit} … {writer.build_aggregates(commit):.1f} s",
                flush=True,
            )
        writer.write()


def measure(archive: Path, args: argparse.Namespace) -> None:
    registry = query_registry(make_plugin_manager())
    names = [q.name for q in registry]
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        names = [n for n in names if n in wanted]
    print(f"{len(names)} queries registered: {', '.join(names)}")
    t = time.perf_counter()
    reader = open_archive(archive)
    print(f"this process: open_archive {time.perf_counter() - t:.2f} s")
    print(aggregate_report(reader))
    results: list[dict[str, Any]] = []
    try:
        pool = samples(reader)
        for name in names:
            params, note = choose_params(registry, reader, name, pool)
            c = cold(archive, name, params, args.timeout)
            w = warm(registry, reader, name, params, args.runs, args.budget, args.timeout)
            results.append({"name": name, "params": params, "note": note, "cold": c, "warm": w})
            problem = c.get("error") or w.get("error") or ""
            print(
                f"  {name}: cold {fmt(c.get('query'), 1, 3)} s, warm p95 {fmt(w.get('p95'), 1000, 1)} ms"
                f"{'  ' + problem if problem else ''}",
                flush=True,
            )
        print()
        print(
            f"archive {archive} ({archive.stat().st_size / 1e6:.0f} MB); targets: cold query <= "
            f"{COLD_QUERY_TARGET:.0f} s, warm p95 <= {WARM_P95_TARGET * 1000:.0f} ms"
        )
        print(table(results))
        opens = [r["cold"]["open"] for r in results if "open" in r["cold"]]
        plugins = [r["cold"]["plugins"] for r in results if "plugins" in r["cold"]]
        if opens:
            print(
                f"\ncold open_archive (fresh unpack): median {statistics.median(opens):.2f} s, "
                f"max {max(opens):.2f} s; plugin loading: median {statistics.median(plugins):.2f} s"
            )
        slow = sorted(
            results,
            key=lambda r: -r["warm"].get("p50", math.inf if "timeout" in r["warm"].get("error", "") else -1),
        )
        if args.explain and slow:
            print(f"\nquery plans of the {min(args.explain, len(slow))} slowest (by warm p50):")
            for r in slow[: args.explain]:
                try:
                    print("\n".join(explain(registry, reader, r["name"], r["params"], args.timeout)))
                except Exception as exc:  # the diagnosis is best effort
                    print(f"{r['name']}: cannot explain ({type(exc).__name__}: {exc})")
    finally:
        reader.close()
    out = args.json or archive.with_suffix(".results.json")
    out.write_text(json.dumps(results, indent=1, default=str))
    print(f"\nresults written to {out}")


if __name__ == "__main__":
    main()
