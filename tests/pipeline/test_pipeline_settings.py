"""`nitpicker pipeline` and analyzer settings: the same flags as `analyze`, checked before the crawl, same exit rule."""

from __future__ import annotations

import json

import pytest
from pipeline_helpers import events, journal_of
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT, run_cli

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

BOOM = """
from nitpicker_core import Analyzer, Column, PageReport, hookimpl

class Boom(Analyzer):
    name = "boom"
    columns = (Column("never", "Never"),)
    concurrency = 1

    def each_page(self, page):
        if "page-c" in page.url:
            raise ValueError("boom")
        return PageReport({"never": 1})

class AlwaysBoom(Boom):
    name = "always-boom"

    def each_page(self, page):
        raise ValueError("boom")

@hookimpl
def register_analyzers(register):
    register(Boom())
    register(AlwaysBoom())
"""


def by_page(archive, analyzer):
    """{path under /recursive/: {column: value}}"""
    found: dict = {}
    with open_archive(archive) as reader:
        for row in reader.analysis(analyzer=analyzer):
            found.setdefault(row["url"].split("/recursive/", 1)[1], {})[row["column"]] = row["value"]
    return found


def test_repeated_list_flags_and_every_analyzers_flags(site, tmp_path):
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "r.nitpicker",
        "--no-image",
        "--plugin",
        "search",
        "--plugin",
        "markup",
        "--plugin",
        "main-contents",
        "--search-keywords",
        "page",
        "--search-keywords",
        "/Page [BC]/, links",
        "--search-scope",
        "body",
        "--markup-disable",
        "heading-skip",
        "--markup-disable",
        "multiple-h1,empty-link",
        "--main-content-selector",
        "ul",
        "--axe-lang",
        "ja",
        "--axe-tags",
        "wcag2a",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stages"] == {"crawl": "done", "analyze": "done"}
    per_analyzer = {
        "pages": 4,
        "urls": 0,
        "cached": 0,
        "violations": 0,
        "errors": 0,
        "timeouts": 0,
        "mode": "pool",
        "skipped": 0,
        "reads": "rendered",
        "source_missing": 0,
    }
    assert summary["analyze"] == {
        # the pages analyzed (issue 18: not 12, a sum over the three analyzers)
        "pages": 4,
        "violations": 1,
        "errors": {"markup": 0, "main-contents": 0, "search": 0},
        "analyzers": {
            "markup": {**per_analyzer, "reads": "source"},
            "main-contents": {**per_analyzer, "violations": 1},
            "search": per_analyzer,
        },
    }
    lines = result.stderr.splitlines()
    assert "main-contents: 4 pages, 0 cached, 1 violations, 0 errors (0 timeouts)" in lines
    archive = tmp_path / "r.nitpicker"
    counts = {
        path: (row["keyword:page"], row["keyword:/Page [BC]/"], row["keyword:links"], row["total"])
        for path, row in by_page(archive, "search").items()
    }
    assert counts == {
        "": (3, 2, 0, 5),
        "page-a": (2, 2, 0, 4),
        "page-b": (1, 1, 0, 2),
        "page-c": (0, 0, 1, 1),
    }
    assert {path: row["method"] for path, row in by_page(archive, "main-contents").items()} == {
        "": "selector",
        "page-a": "selector",
        "page-b": "selector",
        "page-c": "densest-block",
    }
    with open_archive(archive) as reader:
        settings = {r["analyzer"]: r["settings"] for r in reader.analyzer_runs()}
    assert settings["search"] == {"keywords": ["page", "/Page [BC]/", "links"], "scope": "body"}
    assert settings["markup"]["disable"] == ["heading-skip", "multiple-h1", "empty-link"]
    assert settings["main-contents"] == {"selector": "ul"}
    declared = events(journal_of(archive))[0]["declaration"]["params"]["settings"]
    assert (declared["axe_lang"], declared["axe_tags"]) == ("ja", ["wcag2a"])  # accepted, journaled
    assert declared["search_keywords"] == ["page", "/Page [BC]/", "links"]


def test_bad_settings_are_refused_before_the_crawl(site, tmp_path):
    (tmp_path / "nitpicker.toml").write_text(
        '[plugins.search]\nkeywords = ["/(unclosed/"]\n', encoding="utf-8"
    )
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "r.nitpicker",
        "--no-image",
        "--plugin",
        "search",
        cwd=tmp_path,
        timeout=300,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "nitpicker: error: search: keyword '/(unclosed/': invalid regular expression: missing ) at position 9"
    ]
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "r.nitpicker",
        "--plugin",
        "markup",
        "--markup-disable",
        "nope",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("nitpicker: error: markup disable (--markup-disable): unknown rule nope")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nitpicker.toml"]  # no archive, no journal
    # --no-analyze: the analyzers' settings do not matter
    result = run_cli(
        "pipeline",
        f"{site}/recursive/page-c",
        "--single",
        "--no-image",
        "-o",
        "c.nitpicker",
        "--no-analyze",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["stages"] == {"crawl": "done"}


@pytest.fixture(scope="module")
def boom_env(tmp_path_factory):
    dist = make_dist(tmp_path_factory.mktemp("boom-dist"), "nitpicker-boom", "boom", "boom_plugin", BOOM)
    return {"PYTHONPATH": f"{ROOT}:{dist}", "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "boom"])}


def test_an_analyzer_failing_on_every_page_makes_exit_code_1(site, boom_env, tmp_path):
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "r.nitpicker",
        "--no-image",
        "--plugin",
        "boom",
        "--plugin",
        "always-boom",
        cwd=tmp_path,
        env=boom_env,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stages"] == {"crawl": "done", "analyze": "done"}
    assert {name: (s["pages"], s["errors"]) for name, s in summary["analyze"]["analyzers"].items()} == {
        "boom": (4, 1),
        "always-boom": (4, 4),
    }
    assert result.stderr.splitlines()[-1] == "nitpicker: warning: always-boom failed on every page"
    finished = events(journal_of(tmp_path / "r.nitpicker"))[-1]
    assert (finished["event"], finished["state"], finished["exit_code"]) == ("run_finished", "complete", 1)
    # resumed: the analysis is reused, and so is its verdict on the exit code
    resumed = run_cli("pipeline", "--resume", "r.nitpicker", cwd=tmp_path, env=boom_env, timeout=300)
    assert resumed.returncode == 1, resumed.stderr
    assert json.loads(resumed.stdout)["stages"] == {"crawl": "reused", "analyze": "reused"}
    # one failing page of four is a finding, not a failed analyzer
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "r2.nitpicker",
        "--no-image",
        "--plugin",
        "boom",
        cwd=tmp_path,
        env=boom_env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
