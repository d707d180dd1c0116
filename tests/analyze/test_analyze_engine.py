"""The analyze engine: workers that read HTML themselves, time limits, kills, the results cache, fallbacks."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

import pytest
from analyze_probe import SOURCE
from archives import SITE, build_archive
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT, wait_until

from nitpicker_core import Analyzer, PageReport, ScrapeResult, hookimpl
from nitpicker_core.analyze import analyze, analyzer_registry, pool
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.analysis import settings_hash
from nitpicker_core.config import load_config
from nitpicker_core.plugins import make_plugin_manager

LOAD = ",".join([*BUILTIN_PLUGINS, "probe"])


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    root = make_dist(tmp_path_factory.mktemp("dist"), "nitpicker-probe", "probe", "probe_plugin", SOURCE)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


@pytest.fixture
def probe_pm(dist):
    return make_plugin_manager(allow={*BUILTIN_PLUGINS, "probe"}, deny=set())


def page(path: str, body: str) -> ScrapeResult:
    html = (
        f"<!doctype html><html lang='en'><head><title>{path}</title></head><body><p>{body}</p></body></html>"
    )
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html),
        metadata={"title": path},
        html=html,
    )


def html_of(path: str, body: str) -> str:
    return page(path, body).html


def run(pm, archive: Path, log: Path, names=("probe",), timeout=None, **settings):
    config = load_config(pm, data={"plugins": {"probe": {"log": str(log), **settings}}})
    return analyze(pm, config, archive, list(names), timeout=timeout)


def log_lines(log: Path, kind: str) -> list[str]:
    if not log.exists():
        return []
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines() if line.startswith(kind + " ")]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def cells(archive: Path, commit=None) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    with open_archive(archive) as reader:
        for row in reader.analysis(commit, analyzer="probe"):
            out.setdefault(row["url"].removeprefix(SITE), {})[row["column"]] = row["value"]
    return out


def errors(archive: Path) -> dict[str, str]:
    with open_archive(archive) as reader:
        return {e["url"].removeprefix(SITE): e["message"] for e in reader.analyzer_errors(analyzer="probe")}


def test_workers_read_the_html_themselves_and_run_setup_once(probe_pm, tmp_path):
    archive = build_archive(
        tmp_path / "site.nitpicker", [page("/a", "bad words"), page("/b", "fine"), page("/c", "also fine")]
    )
    log = tmp_path / "log"
    result = run(probe_pm, archive, log, words=["w"])
    assert result.summary()["analyzers"] == {
        "probe": {
            "pages": 3,
            "urls": 0,
            "cached": 0,
            "violations": 1,
            "errors": 0,
            "timeouts": 0,
            "mode": "pool",
            "skipped": 0,
            "reads": "rendered",
            "source_missing": 0,
        }
    }
    assert result.stats == {"pages": 3, "violations": 1, "errors": {"probe": 0}}
    found = cells(archive)
    assert {k: (v["length"], v["words"], v["html_in_metadata"]) for k, v in found.items()} == {
        "/a": (len(html_of("/a", "bad words")), ["w"], False),
        "/b": (len(html_of("/b", "fine")), ["w"], False),
        "/c": (len(html_of("/c", "also fine")), ["w"], False),
    }
    workers = {int(pid) for pid in log_lines(log, "setup")}
    assert {v["pid"] for v in found.values()} <= workers and os.getpid() not in workers
    assert len(workers) == 2  # concurrency 2: setup once per worker, not per page
    assert sorted(log_lines(log, "teardown")) == sorted(map(str, workers))
    assert not any(alive(pid) for pid in workers)
    with open_archive(archive) as reader:
        assert [(v["url"], v["rule"], v["severity"], v["snippet"]) for v in reader.violations()] == [
            (SITE + "/a", "has-bad", "warning", "bad")
        ]
        (run_row,) = reader.analyzer_runs()
        assert (run_row["version"], run_row["status"]) == ("1", "complete")
        assert run_row["settings_hash"] == settings_hash(run_row["settings"])


def test_workers_are_recycled_after_pages_per_worker_pages(probe_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page(f"/{n}", n) for n in "abcde"])
    log = tmp_path / "log"
    seen = []
    config = load_config(probe_pm, data={"plugins": {"probe": {"log": str(log)}}})
    result = analyze(probe_pm, config, archive, ["recycler"], progress=lambda *args: seen.append(args))
    assert result.summaries["recycler"].errors == 0
    assert seen == [("recycler", n, 5, 0) for n in range(1, 6)]
    workers = log_lines(log, "setup")
    assert len(workers) == 3 and sorted(log_lines(log, "teardown")) == sorted(workers)  # 2 + 2 + 1 pages
    with open_archive(archive) as reader:
        pids = [c["value"] for c in reader.analysis(analyzer="recycler") if c["column"] == "pid"]
    assert [pids.count(int(pid)) for pid in workers] == [2, 2, 1]
    assert not any(alive(int(pid)) for pid in workers)


def test_only_ids_cross_the_process_boundary(tmp_path):
    assert pool.Task._fields == ("url", "html_sha256", "metadata", "html_kind")
    assert "html" not in pool.WorkerSpec.__dataclass_fields__


def test_hang_times_out_crash_and_exception_become_error_rows_and_the_run_goes_on(probe_pm, tmp_path):
    archive = build_archive(
        tmp_path / "site.nitpicker",
        [
            page("/a", "one"),
            page("/hang", "zzz"),
            page("/b", "two"),
            page("/boom", "x"),
            page("/crash", "y"),
            page("/c", "three"),
        ],
    )
    log = tmp_path / "log"
    started = time.monotonic()
    result = run(probe_pm, archive, log, timeout=2)
    assert time.monotonic() - started < 300  # the hung page sleeps 600 s: it was cut off, not waited for
    assert result.summaries["probe"].as_dict() == {
        "pages": 6,
        "urls": 0,
        "cached": 0,
        "violations": 0,
        "errors": 3,
        "timeouts": 1,
        "mode": "pool",
        "skipped": 0,
        "reads": "rendered",
        "source_missing": 0,
    }
    assert errors(archive) == {
        "/hang": "timed out after 2 s",
        "/boom": "ValueError: boom page",
        "/crash": "worker exited with code 3",
    }
    assert sorted(cells(archive)) == ["/a", "/b", "/c"]
    workers = {int(pid) for pid in log_lines(log, "setup")}
    assert len(workers) >= 3  # two at the start and at least the one replacing the hung worker
    assert not any(alive(pid) for pid in workers)
    with open_archive(archive) as reader:
        assert reader.analyzer_runs()[0]["status"] == "complete-with-errors"


def test_an_aborted_run_leaves_no_worker_behind(probe_pm, tmp_path):
    class Stop:
        @hookimpl
        def analyze_page_reported(self, url, analyzer, report, run):
            raise KeyboardInterrupt  # what Ctrl-C looks like to the main process

    probe_pm.add_plugin(Stop(), "stop")
    archive = build_archive(
        tmp_path / "site.nitpicker", [page("/hang", "z"), page("/a", "one"), page("/b", "two")]
    )
    log = tmp_path / "log"
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run(probe_pm, archive, log)
    assert time.monotonic() - started < 300  # the hung worker (asleep for 600 s) was killed, not waited for
    workers = [int(pid) for pid in log_lines(log, "setup")]
    assert len(workers) == 2 and not any(alive(pid) for pid in workers)


def test_second_run_and_unchanged_pages_of_a_new_commit_come_from_the_cache(probe_pm, tmp_path):
    pages = [page("/a", "bad"), page("/b", "two"), page("/c", "three")]
    archive = build_archive(tmp_path / "site.nitpicker", pages)
    log = tmp_path / "log"
    run(probe_pm, archive, log)
    assert sorted(log_lines(log, "page")) == [SITE + "/a", SITE + "/b", SITE + "/c"]
    first = cells(archive)

    log.unlink()
    again = run(probe_pm, archive, log)  # same commit, same version and settings: nothing to compute
    assert not log.exists()  # no worker started, no each_page call
    assert again.summaries["probe"].as_dict() == {
        "pages": 3,
        "urls": 0,
        "cached": 3,
        "violations": 1,
        "errors": 0,
        "timeouts": 0,
        "mode": "none",
        "skipped": 0,
        "reads": "rendered",
        "source_missing": 0,
    }
    assert cells(archive) == first

    build_archive(archive, [page("/a", "bad"), page("/b", "changed"), page("/c", "three")])  # a new commit
    third = run(probe_pm, archive, log)
    assert log_lines(log, "page") == [SITE + "/b"]
    assert (third.commit, third.summaries["probe"].cached, third.summaries["probe"].violations) == (2, 2, 1)
    now = cells(archive)
    assert now["/a"] == first["/a"] and now["/c"] == first["/c"]
    assert now["/b"]["length"] == len(html_of("/b", "changed"))
    with open_archive(archive) as reader:
        assert [v["url"] for v in reader.violations(2)] == [SITE + "/a"]  # copied from the cache

    log.unlink()
    config = load_config(probe_pm, data={"plugins": {"probe": {"log": str(log)}}})
    forced = analyze(probe_pm, config, archive, ["probe"], use_cache=False)  # --no-cache
    assert sorted(log_lines(log, "page")) == [SITE + "/a", SITE + "/b", SITE + "/c"]
    assert forced.summaries["probe"].cached == 0 and forced.summaries["probe"].violations == 1

    log.unlink()
    changed = run(probe_pm, archive, log, words=["new"])  # other settings: another cache key, all recomputed
    assert sorted(log_lines(log, "page")) == [SITE + "/a", SITE + "/b", SITE + "/c"]
    assert changed.summaries["probe"].cached == 0
    assert {tuple(v["words"]) for v in cells(archive).values()} == {("new",)}
    with open_archive(archive) as reader:
        keys = reader.execute(
            "SELECT analyzer, version, COUNT(*) FROM analysis_cache GROUP BY 1, 2, settings_hash"
        )
        assert sorted(tuple(k) for k in keys) == [("probe", "1", 3), ("probe", "1", 4)]


def test_pool_that_cannot_start_runs_serially_with_a_warning(probe_pm, tmp_path, caplog):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a", "one"), page("/b", "two")])
    with caplog.at_level(logging.WARNING):
        result = run(probe_pm, archive, tmp_path / "log", fail_in_workers=True)
    assert result.summaries["probe"].mode == "serial" and result.summaries["probe"].errors == 0
    assert {v["pid"] for v in cells(archive).values()} == {os.getpid()}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert (
        "analyzer probe: no worker process could run (setup failed: RuntimeError: no workers today); "
        "running it in this process"
    ) in warnings


# --- which HTML an analyzer reads, and checks it left out ------------------------------------------------


def sent(path: str, body: str, source: str | None) -> ScrapeResult:
    """A page whose server sent ``source`` (None: an archive that did not keep it) and rendered otherwise."""
    result = page(path, body)
    result.source = source
    return result


def test_an_analyzer_reading_source_gets_the_sent_html_or_says_it_got_the_rendered_one(probe_pm, tmp_path):
    source_a = "<!doctype html><p>as sent by the server</p>"
    archive = build_archive(
        tmp_path / "site.nitpicker", [sent("/a", "rendered a", source_a), sent("/b", "rendered b", None)]
    )
    log = tmp_path / "log"
    result = run(probe_pm, archive, log, names=("source-probe", "probe"))
    assert result.summaries["source-probe"].as_dict() == {
        "pages": 2,
        "urls": 0,
        "cached": 0,
        "violations": 0,
        "errors": 0,
        "timeouts": 0,
        "mode": "pool",
        "skipped": 0,
        "reads": "source",
        "source_missing": 1,
    }
    with open_archive(archive) as reader:
        found = {
            (c["url"].removeprefix(SITE), c["column"]): c["value"]
            for c in reader.analysis(analyzer="source-probe")
            if c["column"] in ("kind", "length")
        }
        rendered = {
            c["url"].removeprefix(SITE): c["value"]
            for c in reader.analysis(analyzer="probe")
            if c["column"] == "length"
        }
        source_sha = reader.page(SITE + "/a")["source_sha256"]
        cached = {
            (row[0], row[1])
            for row in reader.execute(
                "SELECT html_sha256, settings_hash FROM analysis_cache WHERE analyzer = 'source-probe'"
            )
        }
        rendered_b = reader.page(SITE + "/b")["html_sha256"]
    assert found == {
        ("/a", "kind"): "source",
        ("/a", "length"): len(source_a),
        ("/b", "kind"): "rendered",
        ("/b", "length"): len(html_of("/b", "rendered b")),
    }
    assert rendered == {"/a": len(html_of("/a", "rendered a")), "/b": len(html_of("/b", "rendered b"))}
    # cached by the sha of the HTML read; a result made on the server's HTML has a key of its own
    digest = settings_hash(result_settings(archive, "source-probe"))
    assert cached == {(source_sha, digest + "+source"), (rendered_b, digest)}

    log.unlink()
    again = run(probe_pm, archive, log, names=("source-probe",))
    assert not log.exists() and again.summaries["source-probe"].cached == 2
    assert again.summaries["source-probe"].source_missing == 1

    writer = ArchiveWriter.open(archive)  # the cache's garbage collection keeps results of the sent HTML
    try:
        assert writer.gc()["analysis_cache"] == 0
    finally:
        writer.close()


def test_builtin_analyzers_declare_what_they_read(pm):
    registry = analyzer_registry(pm)
    declared = {name: registry[name].reading({}) for name in registry.names()}
    assert {name: declared[name] for name in ("markup", "main-contents", "text", "search", "axe")} == {
        "markup": "source",
        "main-contents": "rendered",
        "text": "rendered",
        "search": "rendered",
        "axe": "rendered",
    }


def result_settings(archive: Path, analyzer: str) -> dict:
    with open_archive(archive) as reader:
        (row,) = [r for r in reader.analyzer_runs() if r["analyzer"] == analyzer]
    return row["settings"]


def test_a_reads_setting_overrides_what_the_analyzer_reads(probe_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [sent("/a", "rendered a", "<p>sent</p>")])
    log = tmp_path / "log"
    result = run(probe_pm, archive, log, names=("source-probe",), reads="rendered")
    assert (result.summaries["source-probe"].reads, result.summaries["source-probe"].source_missing) == (
        "rendered",
        0,
    )
    with open_archive(archive) as reader:
        kinds = [c["value"] for c in reader.analysis(analyzer="source-probe") if c["column"] == "kind"]
    assert kinds == ["rendered"]
    from nitpicker_core.errors import UsageError

    with pytest.raises(UsageError, match="^source-probe: reads must be one of source, rendered, not 'dom'$"):
        run(probe_pm, archive, log, names=("source-probe",), reads="dom")


def test_a_check_left_out_is_a_stored_finding_and_counted_also_from_the_cache(probe_pm, tmp_path):
    archive = build_archive(
        tmp_path / "site.nitpicker",
        [sent("/a", "big page", "<p>big as sent</p>"), sent("/b", "small", "<p>small as sent</p>")],
    )
    log = tmp_path / "log"
    first = run(probe_pm, archive, log, names=("source-probe",))
    assert (first.summaries["source-probe"].skipped, first.summaries["source-probe"].violations) == (1, 1)
    build_archive(
        archive, [sent("/a", "big page", "<p>big as sent</p>"), sent("/b", "small", "<p>still</p>")]
    )
    log.unlink()
    second = run(probe_pm, archive, log, names=("source-probe",))  # a new commit: /a comes from the cache
    assert log_lines(log, "page") == [SITE + "/b"]
    assert (second.summaries["source-probe"].skipped, second.summaries["source-probe"].cached) == (1, 1)
    with open_archive(archive) as reader:
        for commit in (1, 2):
            assert [
                (v["url"], v["rule"], v["severity"], v["message"])
                for v in reader.violations(commit, analyzer="source-probe")
            ] == [(SITE + "/a", "skipped", "info", "big-rule not checked: the page is too big")]


class Sleeper(Analyzer):
    name = "sleeper"

    def each_page(self, page):
        if page.url.endswith("/slow"):
            time.sleep(30)  # the scenario: a page the analyzer never finishes within the limit
        return PageReport({"ok": True})


def test_in_process_analyzers_are_time_limited_too(pm, tmp_path):
    class P:
        @hookimpl
        def register_analyzers(self, register):
            register(Sleeper())

    pm.add_plugin(P(), "sleeper-plugin")
    archive = build_archive(tmp_path / "site.nitpicker", [page("/slow", "z"), page("/fast", "a")])
    started = time.monotonic()
    result = analyze(pm, load_config(pm, data={}), archive, ["sleeper"], timeout=1)
    assert time.monotonic() - started < 10
    assert result.summaries["sleeper"].as_dict() == {
        "pages": 2,
        "urls": 0,
        "cached": 0,
        "violations": 0,
        "errors": 1,
        "timeouts": 1,
        "mode": "serial",
        "skipped": 0,
        "reads": "rendered",
        "source_missing": 0,
    }
    with open_archive(archive) as reader:
        assert [(e["url"], e["message"]) for e in reader.analyzer_errors()] == [
            (SITE + "/slow", "timed out after 1 s")
        ]
        assert [(c["url"], c["value"]) for c in reader.analysis()] == [(SITE + "/fast", True)]


@pytest.mark.browser
def test_a_hung_browser_worker_is_killed_with_its_chromium(probe_pm, tmp_path):
    archive = build_archive(
        tmp_path / "site.nitpicker", [page("/a", "one"), page("/hang", "z"), page("/b", "two")]
    )
    log = tmp_path / "log"
    result = run(probe_pm, archive, log, names=("browser-probe",), timeout=5)
    assert result.stats["errors"] == {"browser-probe": 1}
    with open_archive(archive) as reader:
        titles = {c["url"]: c["value"] for c in reader.analysis(analyzer="browser-probe")}
        assert [(e["url"], e["message"]) for e in reader.analyzer_errors()] == [
            (SITE + "/hang", "timed out after 5 s")
        ]
    assert titles == {SITE + "/a": "/a", SITE + "/b": "/b"}
    trees = [[int(p) for p in line.split()] for line in log_lines(log, "pids")]
    assert len(trees) == 2 and all(len(tree) >= 3 for tree in trees)  # worker, driver, chromium (and helpers)
    pids = [pid for tree in trees for pid in tree]
    wait_until(lambda: not any(alive(pid) for pid in pids), "every worker, driver and Chromium to exit", 30)


# --- the CLI --------------------------------------------------------------------------------------------


def test_cli_repeatable_list_settings_summary_and_exit_codes(dist, cli, tmp_path):
    env = {"PYTHONPATH": f"{ROOT}:{dist}", "NITPICKER_LOAD_PLUGINS": LOAD}
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a", "bad"), page("/b", "two")])
    done = cli(
        "analyze", str(archive), "--plugin", "probe", "--probe-words", "a", "--probe-words", "b, c", env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "pages": 2,
        "violations": 1,
        "errors": {"probe": 0},
        "analyzers": {
            "probe": {
                "pages": 2,
                "urls": 0,
                "cached": 0,
                "violations": 1,
                "errors": 0,
                "timeouts": 0,
                "mode": "pool",
                "skipped": 0,
                "reads": "rendered",
                "source_missing": 0,
            }
        },
    }
    assert "probe: 2 pages, 0 cached, 1 violations, 0 errors (0 timeouts)" in done.stderr.splitlines()
    assert {tuple(v["words"]) for v in cells(archive).values()} == {("a", "b", "c")}

    broken = build_archive(tmp_path / "broken.nitpicker", [page("/boom", "x"), page("/boom2", "y")])
    failed = cli("analyze", str(broken), "--plugin", "probe", env=env)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["analyzers"]["probe"]["errors"] == 2
    assert "nitpicker: warning: probe failed on every page" in failed.stderr.splitlines()

    bad = cli("analyze", str(archive), "--plugin", "probe", "--timeout", "0", env=env)
    assert bad.returncode != 0 and "--timeout" in bad.stderr

    refused = cli("analyze", str(archive), "--plugin", "probe", "--probe-usage-error", env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == ["nitpicker: error: probe: these settings make no sense"]
    with open_archive(archive) as reader:  # refused before anything was written: the first run is intact
        assert [r["settings"]["usage_error"] for r in reader.analyzer_runs() if r["analyzer"] == "probe"] == [
            False
        ]


def test_an_interrupted_run_keeps_the_pages_it_finished_and_the_next_run_does_the_rest(probe_pm, tmp_path):
    reported: list[str] = []

    class StopAfterTwo:
        @hookimpl
        def analyze_page_reported(self, url, analyzer, report, run):
            reported.append(url)
            if len(reported) == 2:
                raise KeyboardInterrupt  # Ctrl-C after two pages came back

    stop = StopAfterTwo()
    probe_pm.add_plugin(stop, "stop")
    archive = build_archive(tmp_path / "site.nitpicker", [page(f"/{p}", p) for p in "abcd"])
    log = tmp_path / "log"
    with pytest.raises(KeyboardInterrupt):
        run(probe_pm, archive, log)
    probe_pm.unregister(stop)
    log.unlink()
    again = run(probe_pm, archive, log)
    assert again.summaries["probe"].cached == 2  # issue 33: it was 0 (nothing kept before 200 pages)
    assert sorted(log_lines(log, "page")) == sorted(set(SITE + f"/{p}" for p in "abcd") - set(reported))
    assert sorted(cells(archive)) == ["/a", "/b", "/c", "/d"]
