"""Analyzer failures an author can see: error rows with tracebacks, wrong return types isolated per page."""

from __future__ import annotations

import json

import pytest
from archives import SITE, build_archive
from flaky_analyzers import SOURCE, load
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT

from nitpicker_core import Analyzer, ScrapeResult, hookimpl, query_registry, run_query
from nitpicker_core.analyze import analyze
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config
from nitpicker_core.errors import ArchiveError
from nitpicker_core.plugins import make_plugin_manager

PATHS = ("/ok", "/boom", "/wrong", "/dict", "/cells", "/fine")


def page(path: str) -> ScrapeResult:
    html = f"<!doctype html><html lang='en'><head><title>{path}</title></head><body><h1>{path}</h1></body></html>"
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html),
        metadata={"title": path},
        html=html,
    )


@pytest.fixture
def flaky_pm():
    pm = make_plugin_manager()
    pm.add_plugin(load(), "flaky")
    return pm


def errors_of(archive, analyzer: str) -> dict[str, dict[str, object]]:
    with open_archive(archive) as reader:
        found = run_query(
            query_registry(make_plugin_manager()), reader, "analyzer-errors", {"analyzer": analyzer}, None
        )
    return {row["url"].removeprefix(SITE): row for row in found["items"]}


def test_each_page_raising_and_returning_wrong_types_are_error_rows_and_the_rest_is_stored(
    flaky_pm, tmp_path
):
    archive = build_archive(tmp_path / "site.nitpicker", [page(p) for p in PATHS])
    run = analyze(flaky_pm, load_config(flaky_pm, data={}), archive, ["flaky"])
    summary = run.summaries["flaky"]
    assert (summary.pages, summary.errors, summary.mode) == (6, 4, "serial")
    errors = errors_of(archive, "flaky")
    assert sorted(errors) == ["/boom", "/cells", "/dict", "/wrong"]
    assert errors["/boom"]["error"] == "ValueError: boom page"
    assert errors["/boom"]["traceback"].startswith("Traceback (most recent call last):")
    assert 'File "flaky_plugin.py", line 16, in each_page' in errors["/boom"]["traceback"]
    named = "each_page of analyzer 'flaky' (plugin 'flaky') returned "
    assert errors["/wrong"]["error"] == named + "a str, not a PageReport"
    assert errors["/dict"]["error"] == named + "a dict, not a PageReport"
    assert (
        errors["/cells"]["error"]
        == named + "a PageReport whose cells are not a dict of column keys (str) to values"
    )
    assert {row["analyzer"] for row in errors.values()} == {"flaky"}
    with open_archive(archive) as reader:
        lengths = {row["url"].removeprefix(SITE) for row in reader.analysis(analyzer="flaky")}
        seen = {v["url"].removeprefix(SITE) for v in reader.violations(analyzer="flaky")}
        (status,) = [r["status"] for r in reader.analyzer_runs()]
    assert lengths == seen == {"/ok", "/fine"}  # the pages after the failing ones were analyzed and stored
    assert status == "complete-with-errors"


def test_each_url_raising_and_returning_a_wrong_type_are_error_rows(flaky_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page(p) for p in ("/ok", "/boom", "/wrong")])
    run = analyze(flaky_pm, load_config(flaky_pm, data={}), archive, ["flaky-urls"])
    assert run.summaries["flaky-urls"].errors == 2
    errors = errors_of(archive, "flaky-urls")
    assert errors["/boom"]["error"] == "KeyError: 'no such key'"
    assert 'File "flaky_plugin.py", line 34, in each_url' in errors["/boom"]["traceback"]
    assert errors["/wrong"]["error"] == (
        "each_url of analyzer 'flaky-urls' (plugin 'flaky') returned a list, not a PageReport"
    )
    assert errors["/wrong"]["traceback"] is None
    with open_archive(archive) as reader:
        assert [r["url"] for r in reader.analysis(analyzer="flaky-urls")] == [SITE + "/ok"]


def test_a_second_run_retries_the_failed_pages_only_and_replaces_their_errors(flaky_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page(p) for p in ("/ok", "/boom")])
    config = load_config(flaky_pm, data={})
    analyze(flaky_pm, config, archive, ["flaky"])
    again = analyze(flaky_pm, config, archive, ["flaky"])
    assert (again.summaries["flaky"].cached, again.summaries["flaky"].errors) == (1, 1)
    assert list(errors_of(archive, "flaky")) == ["/boom"]  # one row, not one per run


class NoSetup(Analyzer):
    name = "no-setup"

    def setup(self, settings):
        raise OSError("the parser binary is missing")

    def each_page(self, page):
        raise AssertionError("never called: setup failed")


class NoSetupPlugin:
    @hookimpl
    def register_analyzers(self, register):
        register(NoSetup())


def test_a_failing_setup_is_every_page_s_error_with_the_setup_traceback(flaky_pm, tmp_path):
    flaky_pm.add_plugin(NoSetupPlugin(), "no-setup-plugin")
    archive = build_archive(tmp_path / "site.nitpicker", [page("/ok"), page("/fine")])
    run = analyze(flaky_pm, load_config(flaky_pm, data={}), archive, ["no-setup"])
    assert run.summaries["no-setup"].failed_everywhere
    errors = errors_of(archive, "no-setup")
    assert {e["error"] for e in errors.values()} == {"setup failed: OSError: the parser binary is missing"}
    assert all(
        "in setup" in e["traceback"] and 'raise OSError("the parser binary is missing")' in e["traceback"]
        for e in errors.values()
    )


class Hollow(Analyzer):
    name = "hollow"  # neither each_page nor each_url


class HollowPlugin:
    @hookimpl
    def register_analyzers(self, register):
        register(Hollow())


def test_an_analyzer_with_neither_method_leaves_only_its_plugin_out(flaky_pm, tmp_path):
    flaky_pm.add_plugin(HollowPlugin(), "hollow-plugin")
    archive = build_archive(tmp_path / "site.nitpicker", [page("/ok")])
    run = analyze(
        flaky_pm, load_config(flaky_pm, data={}), archive, ["flaky"]
    )  # no UsageError for the others
    assert run.summaries["flaky"].pages == 1
    status = flaky_pm.infos["hollow-plugin"].status
    assert status.startswith("unavailable: ") and status.endswith(
        "analyzer 'hollow' has neither each_page nor each_url"
    )


def test_a_commit_the_archive_lacks_leaves_no_stub(flaky_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/ok")])
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ArchiveError) as raised:
        analyze(flaky_pm, load_config(flaky_pm, data={}), archive, ["flaky"], commit=99)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert str(raised.value) == "site.nitpicker has no commit 99"  # the archive's name, not the stub's


# --- a real distribution through the real CLI (each_page in a worker process) ---------------------------

HOLLOW = """
from nitpicker_core import Analyzer, hookimpl


class Hollow(Analyzer):
    name = "hollow"


@hookimpl
def register_analyzers(register):
    register(Hollow())
"""


def test_cli_verbose_prints_each_error_with_its_traceback(cli, tmp_path_factory):
    dist = make_dist(
        tmp_path_factory.mktemp("flaky-dist"), "nitpicker-flaky", "flaky", "flaky_plugin", SOURCE
    )
    hollow = make_dist(
        tmp_path_factory.mktemp("hollow-dist"), "nitpicker-hollow", "hollow", "hollow_plugin", HOLLOW
    )
    env = {
        "PYTHONPATH": f"{ROOT}:{dist}:{hollow}",
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "flaky", "hollow"]),
    }
    workdir = tmp_path_factory.mktemp("flaky-run")
    archive = build_archive(workdir / "site.nitpicker", [page(p) for p in ("/ok", "/boom", "/wrong")])

    quiet = cli("analyze", str(archive), "--plugin", "flaky", env=env, cwd=workdir)
    assert quiet.returncode == 0, quiet.stderr
    summary = json.loads(quiet.stdout)
    assert summary["errors"] == {"flaky": 2} and summary["analyzers"]["flaky"]["mode"] == "pool"
    assert (
        "2 analyzer errors: see them with `nitpicker analyze --verbose` or "
        "`nitpicker query site.nitpicker analyzer-errors`"
    ) in quiet.stderr.splitlines()
    assert "Traceback" not in quiet.stderr
    warned = [
        line for line in quiet.stderr.splitlines() if line.startswith("nitpicker: warning: plugin hollow ")
    ]
    assert len(warned) == 1 and warned[0].startswith("nitpicker: warning: plugin hollow is unavailable: ")
    assert warned[0].endswith("analyzer 'hollow' has neither each_page nor each_url")  # and the others ran

    loud = cli("analyze", str(archive), "--plugin", "flaky", "--no-cache", "--verbose", env=env, cwd=workdir)
    assert loud.returncode == 0, loud.stderr
    lines = loud.stderr.splitlines()
    boom = lines.index(f"flaky: {SITE}/boom: ValueError: boom page")
    assert lines[boom + 1] == "    Traceback (most recent call last):"
    assert (
        '        raise ValueError("boom page")' in lines[boom + 1 :]
    )  # the traceback, indented under its error
    assert (
        f"flaky: {SITE}/wrong: each_page of analyzer 'flaky' (plugin 'flaky') returned a str, "
        "not a PageReport"
    ) in lines

    listed = cli("query", str(archive), "analyzer-errors", "--analyzer", "flaky", env=env, cwd=workdir)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["items"]
    assert [(r["url"], r["error"][:10]) for r in rows] == [
        (SITE + "/boom", "ValueError"),
        (SITE + "/wrong", "each_page "),
    ]
    assert "flaky_plugin.py" in rows[0]["traceback"]
    with open_archive(archive) as reader:
        assert [r["url"] for r in reader.analysis(analyzer="flaky")] == [SITE + "/ok"]
