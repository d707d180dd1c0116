"""The `analysis` and `analysis-columns` queries, the cells in `page-detail`, the MCP tool over stdio, and the
lookups of issue 19 (`filter-values`, `search`, status classes, `every_type`)."""

from __future__ import annotations

import json

import pytest
from archives import SITE, build_archive
from support import McpStdio

from nitpicker_core import UsageError


def words(url: str) -> int:
    return len(url) * 3 % 17  # distinct per demo page, and not in URL order


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """The five-page demo archive analyzed by two analyzers with table cells (one with notes)."""
    from nitpicker_core import Analyzer, Cell, Column, PageReport, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    class Words(Analyzer):
        name = "words"
        columns = (Column("count", "Words"), Column("grade", "Grade"))

        def each_page(self, page):
            count = words(page.url)
            return PageReport(
                {
                    "count": count,
                    "grade": Cell("long" if count > 8 else "short", "by word count"),
                    "_seen": {"url": page.url},  # data, not a column: no list below shows it
                }
            )

    class Lang(Analyzer):
        name = "lang"
        columns = (Column("lang", "Language"),)

        def each_page(self, page):
            return PageReport({"lang": page.metadata.get("lang") or None})

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Words())
            register(Lang())

    path = build_archive(tmp_path_factory.mktemp("analysis") / "site.nitpicker")
    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "analysis-test-plugin")
    run_analyze(pm, load_config(pm, data={}), path, ["words", "lang"], commit=1)
    return path


@pytest.fixture(scope="module")
def ask(archive):
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.query import query_registry, run_query

    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        yield lambda name, **params: run_query(registry, reader, name, params)


def test_rows_per_page_and_analyzer_with_cells_and_notes(ask):
    data = ask("analysis", limit=100)
    analyzed = sorted({row["url"] for row in data["items"]})
    assert SITE + "/" in analyzed and SITE + "/about" in analyzed
    assert data["total"] == 2 * len(analyzed) == len(data["items"])
    assert [(r["url"], r["analyzer"]) for r in data["items"]] == sorted(
        (u, a) for u in analyzed for a in ("lang", "words")
    )
    home = {r["analyzer"]: r for r in data["items"] if r["url"] == SITE + "/"}
    count = words(SITE + "/")
    assert home["words"]["cells"] == {"count": count, "grade": "long" if count > 8 else "short"}
    assert home["words"]["notes"] == {"grade": "by word count"}
    assert home["lang"] == {"url": SITE + "/", "analyzer": "lang", "cells": {"lang": "en"}, "notes": {}}


def test_filters_by_analyzer_column_url_and_page(ask):
    only = ask("analysis", analyzer="words")["items"]
    assert only and {r["analyzer"] for r in only} == {"words"}
    counts = ask("analysis", column="count")["items"]
    assert [r["cells"] for r in counts] == [{"count": words(r["url"])} for r in counts]
    assert {r["url"] for r in ask("analysis", url="about")["items"]} == {SITE + "/about"}
    assert {r["url"] for r in ask("analysis", url="*/blog/")["items"]} == {SITE + "/blog/"}
    one = ask("analysis", page=SITE + "/")
    assert one["total"] == 2 and {r["url"] for r in one["items"]} == {SITE + "/"}
    assert ask("analysis", page=SITE + "/nowhere")["total"] == 0
    assert ask("analysis", analyzer="nobody")["items"] == []


def test_sorts_by_a_columns_value_and_pages_through(ask):
    rows = ask("analysis", column="count", sort="value", order="desc")["items"]
    values = [r["cells"]["count"] for r in rows]
    assert values == sorted(values, reverse=True) and len(set(values)) > 1
    urls = [r["url"] for r in rows]
    assert urls != sorted(urls) and urls != sorted(urls, reverse=True)  # the value decided, not the URL
    ascending = [r["url"] for r in ask("analysis", column="count", sort="value")["items"]]
    assert [words(url) for url in ascending] == sorted(values)
    first = ask("analysis", column="count", sort="value", limit=2)
    second = ask("analysis", column="count", sort="value", limit=2, offset=2)
    assert first["next_offset"] == 2 and [r["url"] for r in first["items"] + second["items"]] == ascending[:4]
    with pytest.raises(UsageError, match="needs parameter 'column'"):
        ask("analysis", sort="value")


def test_columns_and_page_detail_carry_the_cells(ask):
    columns = ask("analysis-columns")["items"]
    pages = len({r["url"] for r in ask("analysis")["items"]})
    assert columns == [
        {"analyzer": "lang", "column": "lang", "pages": pages},
        {"analyzer": "words", "column": "count", "pages": pages},
        {"analyzer": "words", "column": "grade", "pages": pages},
    ]
    detail = ask("page-detail", url=SITE + "/about")
    assert {entry["analyzer"]: entry["cells"] for entry in detail["analysis"]} == {
        "lang": {"lang": "en"},
        "words": {
            "count": words(SITE + "/about"),
            "grade": "long" if words(SITE + "/about") > 8 else "short",
        },
    }


def test_a_data_cell_is_read_by_its_name_and_is_no_column(ask, archive):
    from nitpicker_core import read
    from nitpicker_core.archive import open_archive

    rows = ask("analysis", column="_seen")["items"]
    assert rows and all(r["cells"] == {"_seen": {"url": r["url"]}} for r in rows)
    assert {c["column"] for c in ask("analysis-columns")["items"]} == {"lang", "count", "grade"}
    with open_archive(archive) as reader:
        assert [c["column"] for c in read.analysis_columns(reader, 1)["items"]] == ["lang", "count", "grade"]
        assert set(read.url_cells(reader, 1, SITE + "/about")) == {"lang/lang", "words/count", "words/grade"}
        pages = read.report_pages(reader, 1, scope="targets")["items"]
        assert pages and all({c[1] for c in p["cells"]} == {"lang", "count", "grade"} for p in pages)


def test_the_mcp_tool_follows_from_the_query(archive, ask, tmp_path):
    expected = ask("analysis", column="count", sort="value")
    with (tmp_path / "stderr.log").open("w+", encoding="utf-8") as errlog:
        stdio = McpStdio(archive.parent, errlog, None)
        try:
            tools = {tool.name: tool for tool in stdio.run(stdio.session.list_tools()).tools}
            assert {"analysis", "analysis_columns"} <= set(tools)
            assert tools["analysis"].input_schema["properties"]["sort"]["enum"] == [
                "url",
                "analyzer",
                "value",
            ]
            answer = stdio.call("analysis", archive=str(archive), column="count", sort="value")
            assert not answer.is_error, answer.content[0].text
            assert json.loads(answer.content[0].text) == expected
            bad = stdio.call("analysis", archive=str(archive), sort="value")
            assert bad.is_error and "needs parameter 'column'" in bad.content[0].text
        finally:
            stdio.close()


def test_filter_values_status_classes_and_search(ask):
    assert [v["value"] for v in ask("filter-values", field="analyzer")["items"]] == ["lang", "words"]
    assert ask("filter-values", field="status")["items"] == [
        {"value": 200, "count": 4},
        {"value": 404, "count": 1},
    ]
    assert ask("filter-values", field="page_content_type")["items"] == [{"value": "text/html", "count": 5}]
    assert ask("filter-values", field="status", limit=1)["more"] is True
    assert [r["url"] for r in ask("pages", status_class="4xx")["items"]] == [SITE + "/missing"]
    assert (
        ask("pages", status_class="2xx")["total"] == 4 and ask("pages", status_class="failed")["total"] == 0
    )
    assert ask("pages", every_type=True)["total"] == 5
    with pytest.raises(UsageError, match="must be one of 2xx, 3xx, 4xx, 5xx, failed"):
        ask("pages", status_class="4")
    assert [h["url"] for h in ask("search", q="BLOG")["items"]] == [SITE + "/blog/"]
    assert [h["url"] for h in ask("search", q="elsewhere")["items"]] == ["https://elsewhere.test/"]
    assert ask("search", q="Not Found")["items"][0]["url"] == SITE + "/missing"  # by its title
    hits = ask("search", q="site.test", limit=2)
    assert [h["url"] for h in hits["items"]] == [SITE + "/", SITE + "/about"] and hits["more"] is True
