"""Fixtures of the pipeline tests: a test-only analyzer and sheet, journal helpers."""

from __future__ import annotations

import pytest
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT

PLUGIN = """
from nitpicker_core import Analyzer, Column, PageReport, Sheet, hookimpl

class PipeWords(Analyzer):
    name = "pipe-words"
    version = "1.0"
    columns = (Column("count", "Count"),)
    concurrency = 1

    def each_page(self, page):
        word = page.settings.get("word") or "Page"
        return PageReport({"count": page.document.text_content().count(word)})

def _rows(reader, commit):
    for page in reader.pages(commit):
        if not page.get("is_external"):
            yield [page["url"].split("/pipeline-site/", 1)[-1], page.get("status"), page.get("title") or ""]

@hookimpl
def register_settings(register):
    register("word", type="str", default="Page", help="the word pipe-words counts")

@hookimpl
def register_analyzers(register):
    register(PipeWords())

@hookimpl
def register_sheets(register):
    register(Sheet("Pipe Pages", ("Path", "Status", "Title"), _rows))
"""


@pytest.fixture(scope="session")
def pipe_env(tmp_path_factory):
    """Environment for CLI runs with the built-ins plus the `pipewords` test plugin."""
    dist = make_dist(
        tmp_path_factory.mktemp("pipe-dist"), "nitpicker-pipewords", "pipewords", "pipewords_plugin", PLUGIN
    )
    # the tree's own plugins first, before any installed copy of nitpicker's
    return {
        "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins'}:{dist}",
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "pipewords"]),
    }
