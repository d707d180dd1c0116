"""End-to-end: `nitpicker pipeline` against URLs, with a third-party analyzer (the demo shop: tests/demo/)."""

from __future__ import annotations

import json

import pytest
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

COUNTER = """
from nitpicker_core import Analyzer, Column, PageReport, hookimpl

class Links(Analyzer):
    name = "link-count"
    columns = (Column("links", "Links"),)
    concurrency = 1

    def each_page(self, page):
        return PageReport({"links": len(page.document.findall(".//a"))})

@hookimpl
def register_analyzers(register):
    register(Links())
"""


def test_pipeline_crawls_and_analyzes_with_a_third_party_analyzer(cli, site, tmp_path):
    make_dist(tmp_path / "dist", "nitpicker-links", "links", "links_plugin", COUNTER)
    env = {
        "PYTHONPATH": f"{ROOT}:{tmp_path / 'dist'}",
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "links"]),
    }
    result = cli(
        "pipeline",
        f"{site}/recursive/",
        "-o",
        "demo.nitpicker",
        "--no-image",
        "--plugin",
        "link-count",
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["crawl"]["status"] == "complete" and summary["crawl"]["rendered"] == 4
    assert summary["analyze"] == {  # the engine's per-analyzer summary, as `nitpicker analyze` prints it
        "pages": 4,
        "violations": 0,
        "errors": {"link-count": 0},
        "analyzers": {
            "link-count": {
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
        },
    }
    assert "link-count: 4 pages, 0 cached, 0 violations, 0 errors (0 timeouts)" in result.stderr.splitlines()
    assert summary["stages"] == {"crawl": "done", "analyze": "done"}
    assert (tmp_path / "demo.nitpicker.runs" / summary["journal"]).is_file()
    with open_archive(tmp_path / "demo.nitpicker") as reader:
        cells = {row["url"].rsplit("/", 1)[1]: row["value"] for row in reader.analysis(analyzer="link-count")}
    assert cells == {"": 3, "page-a": 2, "page-b": 2, "page-c": 0}


def test_pipeline_without_analyzers_says_so(cli, site, tmp_path):
    no_analyzers = {"NITPICKER_LOAD_PLUGINS": "archive-writer,scrape,crawl-rules,core-queries,cmd-pipeline"}
    result = cli(
        "pipeline",
        f"{site}/about",
        "--single",
        "--no-image",
        "-o",
        "a.nitpicker",
        cwd=tmp_path,
        env=no_analyzers,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["analyze"] == {
        "skipped": "no analyzer is enabled (see `nitpicker plugins`)"
    }
