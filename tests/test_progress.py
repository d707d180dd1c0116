"""The progress line's numbers and the run summaries' counts: they mean what their names say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archives import build_archive, demo_pages

from nitpicker_cli.progress import progress_line
from nitpicker_core.crawler.limits import Limits
from nitpicker_core.crawler.queue import QueueCounts, QueueItem, UrlQueue


def test_progress_line_says_internal_external_queued_errors_rate_and_eta():
    counts = QueueCounts(
        internal_done=130,
        internal_rendered=85,
        internal_found=250,
        external_done=12,
        external_found=20,
        pending=100,
        in_progress=8,
    )
    assert progress_line(counts, 10, (3, 1)) == (
        "internal 130/250 done (85 rendered) · external 12/20 checked · 100 queued · 8 in progress · "
        "errors 3 internal / 1 external · 52% · 10 parallel"
    )
    timed = progress_line(counts, 10, (3, 1), elapsed=71, rate=2.0)
    assert timed.endswith("· 52% · 2.0 URLs/s · ETA 0:00:54 · 0:01:11 · 10 parallel")  # 108 left at 2/s
    assert "ETA -:--:--" in progress_line(counts, 1, elapsed=1, rate=None)  # nothing done yet: no guess


def test_progress_line_names_the_hosts_slowed_down():
    counts = QueueCounts(1, 1, 2, 0, 0, 1, 1, slowed=("127.0.0.1:8000 answers 429", "example.com times out"))
    assert progress_line(counts, 2).endswith(
        "· 2 parallel · slowed: 127.0.0.1:8000 answers 429, example.com times out"
    )


def test_urls_outside_the_scope_count_as_internal_checks_that_no_limit_holds():
    # a subfolder audit: the host's pages outside /docs/ are internal URLs, checked and not crawled
    queue = UrlQueue(limits=Limits(max_pages=1, max_depth=0))
    queue.add([QueueItem("http://h/docs/", depth=0)])
    queue.finish(queue.pop().url, rendered=True)  # type: ignore[union-attr]
    queue.add(
        [
            QueueItem("http://h/about.html", outside_scope=True, metadata_only=True, depth=1),
            QueueItem("http://other/", external=True, metadata_only=True, depth=1),
        ]
    )
    while (item := queue.pop()) is not None:  # --max-pages 1 and --max-depth 0 hold neither
        queue.finish(item.url)
    counts = queue.counts()
    assert (counts.internal_done, counts.internal_found, counts.outside_done, counts.outside_found) == (
        2,
        2,
        1,
        1,
    )
    assert (counts.external_done, counts.external_found, queue.held()) == (1, 1, {})
    assert progress_line(counts, 2).startswith(
        "internal 2/2 done (1 rendered, 1/1 outside the scope checked) · external 1/1 checked · "
    )


def _crawl_with_a_failed_guess() -> tuple[UrlQueue, list[QueueCounts]]:
    """The crawler's sequence for a pagination guess that 404s: discard while in progress, then finish."""
    queue = UrlQueue()
    seen = []
    queue.add(["http://h/"])
    queue.finish(queue.pop().url, rendered=True)  # type: ignore[union-attr]
    seen.append(queue.counts())
    queue.add(["http://h/list/page/1", "http://h/list/page/2"])
    queue.add([QueueItem("http://h/list/page/3", predicted=True)])
    seen.append(queue.counts())
    while (item := queue.pop()) is not None:
        seen.append(queue.counts())
        if item.predicted:
            queue.discard(item.url)  # the guess does not exist: forgotten without trace…
        queue.finish(item.url, rendered=not item.predicted)  # …and the worker still says it is done
        seen.append(queue.counts())
    return queue, seen


def test_a_forgotten_guess_is_never_counted_done_nor_external():
    # issue 18: "11(11) done / 11 found URLs (+5/0 ext) (145%)" on a site without external URLs
    queue, seen = _crawl_with_a_failed_guess()
    final = seen[-1]
    assert (final.internal_done, final.internal_found, final.external_done, final.external_found) == (
        3,
        3,
        0,
        0,
    )
    assert final.percent == 100 and all(c.percent <= 100 for c in seen)
    assert queue.state("http://h/list/page/3") is None


def test_found_and_done_never_count_down():
    # issue 18: the found count went down (9 → 8) when a guess was dropped
    _, seen = _crawl_with_a_failed_guess()
    for before, after in zip(seen, seen[1:], strict=False):
        assert after.internal_found >= before.internal_found and after.internal_done >= before.internal_done
        assert after.internal_done <= after.internal_found


def test_a_guess_that_exists_counts_once_fetched():
    queue = UrlQueue()
    queue.add([QueueItem("http://h/page/2", predicted=True)])
    assert (queue.counts().internal_found, queue.counts().pending) == (0, 0)  # a guess is no found URL yet
    queue.finish(queue.pop().url, rendered=True)  # type: ignore[union-attr]
    assert (queue.counts().internal_done, queue.counts().internal_found) == (1, 1)


class _Flags:
    """An analyzer that finds one violation per page (registered in the test: it runs in this process)."""

    label = "Flags"
    columns = ()
    each_url = None

    def __init__(self, name: str) -> None:
        self.name = name

    def each_page(self, page):
        from nitpicker_core import PageReport, Violation

        return PageReport({}, [Violation("flag", f"{self.name} flags {page.url}", "warning")])


@pytest.fixture(scope="module")
def analyzed_twice(tmp_path_factory):
    """Two analyzers over a four-page archive, then the same run again (every page done the first time)."""
    from nitpicker_core import Analyzer, hookimpl
    from nitpicker_core.analyze import analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    class Flags(_Flags, Analyzer):
        pass

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Flags("flag-a"))
            register(Flags("flag-b"))

    archive = build_archive(Path(tmp_path_factory.mktemp("analyzed")) / "site.nitpicker")
    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "flags-plugin")
    config = load_config(pm, data={})
    first = analyze(pm, config, archive, ["flag-a", "flag-b"]).summary()
    again = analyze(pm, config, archive, ["flag-a", "flag-b"]).summary()
    return first, again


def test_analyze_pages_are_the_pages_analyzed_not_a_sum_over_analyzers(analyzed_twice):
    # issue 18: `"pages": 20` was a sum over five analyzers for a five-URL crawl
    first, _ = analyzed_twice
    assert {name: a["pages"] for name, a in first["analyzers"].items()} == {"flag-a": 4, "flag-b": 4}
    assert first["pages"] == 4


def test_analyze_violations_of_a_rerun_are_the_stored_ones(analyzed_twice):
    # issue 18: a cached re-run printed a top-level "violations": 0 while markup said 22
    first, again = analyzed_twice
    assert again["analyzers"]["flag-a"]["violations"] == first["analyzers"]["flag-a"]["violations"] == 4
    assert again["analyzers"]["flag-a"]["cached"] == 4  # every page was done by the first run
    assert again["violations"] == first["violations"] == 8


def test_summary_facts_of_an_archive(tmp_path):
    """Pages, errors by kind with the reason, findings by priority and the change since the parent, read back
    through the queries."""
    from nitpicker_cli.summary import findings_lines, gather
    from nitpicker_core import CrawlErrorRecord, ScrapeResult
    from nitpicker_core.plugins import make_plugin_manager

    def refused(pm, crawl):
        url = "http://127.0.0.1:9/gone"
        pm.hook.crawl_error(
            url=url, crawl=crawl, error=CrawlErrorRecord(url, "connection-refused", "refused", "x")
        )
        pm.hook.crawl_page_scraped(
            crawl=crawl,
            result=ScrapeResult(
                url=url, is_external=True, is_target=False, extra={"error_kind": "connection-refused"}
            ),
        )

    archive = build_archive(tmp_path / "a.nitpicker", also=refused)
    facts = gather(make_plugin_manager(), archive)
    assert facts["commit"] == 1 and facts["pages"] == 4 and facts["changed"] is None
    assert facts["errors"] == [
        {
            "kind": "connection-refused",
            "count": 1,
            "internal": 0,
            "external": 1,
            "reason": "connection refused (nothing listens on 127.0.0.1:9)",
            "example": "http://127.0.0.1:9/gone",
        }
    ]
    assert facts["findings"]["by_priority"]["high"] >= 1  # the broken link to /missing
    assert findings_lines(facts["findings"])[0].startswith("Findings: ")


def test_a_crawl_summary_and_its_json_say_the_same_as_the_queries(tmp_path):
    """Two commits: the summary's change since the parent is the diff query's, its numbers the run's own."""
    from nitpicker_cli.commands.crawl import crawl_result, crawl_summary
    from nitpicker_cli.summary import gather
    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive
    from nitpicker_core.crawler.engine import CrawlStats
    from nitpicker_core.plugins import make_plugin_manager

    archive = tmp_path / "two.nitpicker"
    build_archive(archive)
    build_archive(archive, [r for r in demo_pages() if not r.url.endswith("/blog/")])
    pm = make_plugin_manager()
    with open_archive(archive) as reader:
        diff = run_query(query_registry(pm), reader, "diff", {})
        issues = run_query(query_registry(pm), reader, "issues", {})["items"]
    facts = gather(pm, archive)
    assert facts["changed"] == {
        "base": 1,
        **{k: len(diff[k]) for k in ("added", "removed", "gone", "modified")},
    }
    assert facts["findings"]["since"] == {
        "base": 1,
        "new": sum(i["new"] or 0 for i in issues),
        "fixed": sum(i["fixed"] or 0 for i in issues),
    }
    assert facts["findings"]["since"]["fixed"] >= 1  # /blog/'s own findings are gone
    stats = CrawlStats(
        pages=4,
        rendered=3,
        skipped=0,
        internal_errors=0,
        external_errors=1,
        seconds=12.4,
        errors_by_kind={"dns": 1},
        limits={"max_pages": 3, "not_crawled_max_pages": 2},
    )
    result = crawl_result(archive, stats, facts)
    assert (result["commit"], result["pages"], result["rendered"], result["urls"]) == (
        2,
        3,
        3,
        {"internal": 4, "external": 1, "outside_scope": 0},
    )  # /blog/ is still linked: a URL, no longer a page
    assert result["errors"] == {"internal": 0, "external": 1, "by_kind": []}  # none recorded in this archive
    assert result["not_crawled"] == {"max_pages": 2, "max_depth": 0}
    assert result["next"] == [
        f"nitpicker viewer {archive}",
        f"nitpicker analyze {archive}",
        f"nitpicker issues {archive}",
    ]
    lines = crawl_summary(Path("two.nitpicker"), stats, facts)
    # the numbers of the summary query: 3 pages among 4 internal URLs; errors as 4xx, 5xx and failed per side
    totals = facts["totals"]
    assert (totals["pages"], totals["internal_urls"], totals["external_urls"]) == (3, 4, 1)
    assert lines[:2] == [
        "Crawl complete: 3 pages of 4 internal URLs (3 rendered, 0 skipped), 1 external URL checked in 12 s",
        "Errors: 1 internal (1 4xx), 0 external",
    ]  # the archive's, not the run's stats
    assert "2 found URLs not crawled (--max-pages 3)" in lines
    subfolder = {
        **facts,
        "urls": {"internal": 95, "external": 1, "outside_scope": 91},
    }  # the host's other pages
    assert crawl_summary(Path("two.nitpicker"), stats, subfolder)[0] == (
        "Crawl complete: 3 pages of 95 internal URLs (3 rendered, 0 skipped), 91 internal URLs outside the scope "
        "checked, "
        "1 external URL checked in 12 s"
    )
    changed = facts["changed"]
    assert (
        f"Changed since commit 1: {changed['added']} added · {changed['removed']} removed · "
        f"{changed['modified']} modified"
    ) in lines
    assert lines[-5:] == [
        "Archive: two.nitpicker (commit 2)",
        "Next:",
        "  nitpicker viewer two.nitpicker",
        "  nitpicker analyze two.nitpicker",
        "  nitpicker issues two.nitpicker",
    ]


def test_json_with_the_flag_or_when_stdout_is_no_terminal(monkeypatch):
    import io

    from nitpicker_cli.summary import for_people

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert not for_people(False)  # piped or redirected
    monkeypatch.setattr("sys.stdout", Terminal())
    assert for_people(False) and not for_people(True)


def test_rate_and_eta_follow_the_last_half_minute_not_the_browser_start():
    from nitpicker_cli.progress import ErrorTally, _CrawlView

    view = _CrawlView(2, ErrorTally())
    start = view.started
    view.counts = QueueCounts(
        internal_done=0,
        internal_rendered=0,
        internal_found=1,
        external_done=0,
        external_found=0,
        pending=1,
        in_progress=0,
    )
    assert view.rate(start + 20) is None  # 20 s of browser start, nothing done: no rate, no ETA guess
    for second in range(21, 61):  # then one URL a second
        view.counts = QueueCounts(
            internal_done=second - 20,
            internal_rendered=second - 20,
            internal_found=100,
            external_done=0,
            external_found=0,
            pending=60,
            in_progress=0,
        )
        rate = view.rate(start + second)
    assert rate is not None and 0.95 <= rate <= 1.05  # not 40 URLs / 60 s


def test_summary_says_the_waits_per_host_and_the_blocked_urls():
    from nitpicker_cli.summary import blocked_lines, waited_lines

    assert waited_lines({"a.example": 0.3}) == []  # under a second in all: nothing to say
    (line,) = waited_lines({"a.example": 2.0, "b.example": 12.44})
    assert line.startswith("Waited: 12.4 s on b.example, 2.0 s on a.example (")
    totals = {
        "blocked": 3,
        "blocked_by_status": [{"status": 403, "count": 2}, {"status": 429, "count": 1}],
        "internal": {"blocked": 2},
        "external": {"blocked": 1},
    }
    assert blocked_lines(totals)[0].startswith("Blocked: 2 internal, 1 external (2 × 403, 1 × 429)")
    assert blocked_lines({"blocked": 0}) == []


@pytest.mark.parametrize(
    "env",
    [{}, {"FORCE_COLOR": "1"}, {"FORCE_COLOR": ""}, {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"}],
)
def test_rich_is_asked_wherever_it_might_see_a_terminal(monkeypatch, env) -> None:
    from rich.console import Console

    from nitpicker_cli.progress import _Live, _may_be_terminal

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # stderr is pytest's capture here, no TTY: where nitpicker does not ask, rich would have said no
    if not _may_be_terminal():
        assert not Console(stderr=True).is_terminal
    assert _Live(silent=False).enabled == Console(stderr=True).is_terminal
    assert not _Live(silent=True).enabled


def test_a_crawl_without_a_terminal_imports_no_rich() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from nitpicker_cli.progress import Progress\n"
        "with Progress(4) as p: p.update(None)\n"
        "print(p.enabled, sorted(m for m in sys.modules if m.split('.')[0] == 'rich'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "plugins")])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False []"
