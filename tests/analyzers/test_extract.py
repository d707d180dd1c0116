"""Custom extraction and custom search on /extract-site/: values across two commits, history, diffs, checks.

One crawl per module: the site at version 1, then (its price changed) an ``--update``, so the archive has
commits 1 and 2; each test analyzes its own copy.
"""

from __future__ import annotations

import csv
import json
import shutil
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from nitpicker_extract.spec import parse, parse_all
from nitpicker_search.custom import CustomSearchAnalyzer, parse_searches
from support import run_cli

from nitpicker_core import Analyzer, Cell, Column, PageInput, PageReport, UsageError, hookimpl, read
from nitpicker_core.analyze.engine import check_settings
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_viewer.app import create_app

PRICE = "price=css:.price"
EXTRACTORS = (
    PRICE,
    "sku=css:[itemprop=sku]@content",
    "tags=all:css:.tags li",
    "by-script=css:#js::text",
    "by-script-sent=raw:css:#js",
    "domain=regex:[\\w.]{1,64}@([\\w.]+)",  # a comma, kept: each --extract is one whole item
    "stock=xpath://p[@class='stock']/text()",
    "list-items=xpath:count(//li)",  # not "items": a column of structured-data
)


@pytest.fixture(scope="module")
def crawled(site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The archive with commits 1 (price 10.00) and 2 (price 12.50), and the site's root URL."""
    root = f"{site}/extract-site/{uuid.uuid4().hex[:10]}/"
    workdir = tmp_path_factory.mktemp("extract")
    archive = workdir / "shop.nitpicker"
    first = run_cli(
        "crawl", "-o", str(archive), "--parallels", "2", "--no-image", root, cwd=workdir, timeout=300
    )
    assert first.returncode == 0, first.stderr
    with urllib.request.urlopen(root + "__next", timeout=30) as response:
        assert json.load(response)["version"] == 2
    second = run_cli(
        "crawl", "--parallels", "2", "--no-image", "--update", str(archive), cwd=workdir, timeout=300
    )
    assert second.returncode == 0, second.stderr
    return archive, root


def copy(crawled: tuple[Path, str], workdir: Path) -> Path:
    archive = workdir / "shop.nitpicker"
    shutil.copy(crawled[0], archive)
    return archive


def analyze(archive: Path, *args: str, config: str = "") -> Any:
    if config:
        (archive.parent / "nitpicker.toml").write_text(config, encoding="utf-8")
    return run_cli("analyze", str(archive), *args, cwd=archive.parent, timeout=300)


def cells(archive: Path, root: str, analyzer: str, commit: int | None = None) -> dict[str, dict[str, Any]]:
    """{page name: {column: value, or (value, note) when there is a note}}."""
    with open_archive(archive) as reader:
        rows = reader.analysis(commit, analyzer=analyzer)
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        value = (row["value"], row["note"]) if row["note"] else row["value"]
        found.setdefault(row["url"].removeprefix(root) or "home", {})[row["column"]] = value
    return found


def query(archive: Path, *args: str) -> Any:
    result = run_cli("query", str(archive), *args, cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


NO = (None, "no match")


def test_extractors_read_text_attributes_all_matches_and_the_html_as_sent(
    crawled: tuple[Path, str], tmp_path: Path
) -> None:
    archive = copy(crawled, tmp_path)
    flags = [part for spec in EXTRACTORS for part in ("--extract", spec)]
    result = analyze(archive, "--plugin", "extract", "--plugin", "extract-source", *flags, "--commit", "1")
    assert result.returncode == 0, result.stderr
    root = crawled[1]
    product = {"tags": ["blue", "small"], "domain": "example.com", "list-items": "3"}
    assert cells(archive, root, "extract", 1) == {
        "home": {
            "price": NO,
            "sku": NO,
            "tags": ([], "no match"),
            "by-script": NO,
            "domain": NO,
            "stock": NO,
            "list-items": "3",
        },
        "p1": {
            **product,
            "price": "€10.00",
            "sku": "SKU-1",
            "by-script": "Added by script",
            "stock": "In stock",
        },
        "p2": {**product, "price": NO, "sku": "SKU-2", "by-script": NO, "stock": "Out of stock"},
        "slow": {
            "price": NO,
            "sku": NO,
            "tags": ([], "no match"),
            "by-script": NO,
            "domain": NO,
            "stock": NO,
            "list-items": "1",
        },
    }
    # raw: reads the HTML as sent, where the script has not added its paragraph yet
    assert cells(archive, root, "extract-source", 1) == {
        page: {"by-script-sent": NO} for page in ("home", "p1", "p2", "slow")
    }


def test_the_price_across_two_commits_its_history_and_the_diff(
    crawled: tuple[Path, str], tmp_path: Path
) -> None:
    archive, root = copy(crawled, tmp_path), crawled[1]
    config = f"[plugins.extract]\nrules = ['{PRICE}']\n"
    for commit in ("1", "2"):  # extraction re-runs on stored commits: no crawl
        result = analyze(archive, "--plugin", "extract", "--commit", commit, config=config)
        assert result.returncode == 0, result.stderr
    assert [cells(archive, root, "extract", c)["p1"] for c in (1, 2)] == [
        {"price": "€10.00"},
        {"price": "€12.50"},
    ]
    history = query(archive, "history", "--url", root + "p1", "--field", "extract/price")
    assert [(c["commit"], c["value"]) for c in history["commits"]] == [(1, "€10.00"), (2, "€12.50")]
    assert history["changes"] == [{"commit": 2, "base": 1, "old": "€10.00", "new": "€12.50"}]
    unchanged = query(archive, "history", "--url", root + "p2", "--field", "extract/price")
    assert [c["value"] for c in unchanged["commits"]] == [None, None] and unchanged["changes"] == []
    typo = run_cli(
        "query", str(archive), "history", "--url", root + "p1", "--field", "extract/prize", cwd=tmp_path
    )
    assert typo.returncode == 1 and "no analyzer cell 'extract/prize'" in typo.stderr
    assert "cells: extract/price" in typo.stderr
    diff = query(archive, "page-diff", "--url", root + "p1", "--base", "1")
    assert diff["analysis"] == {"extract/price": ["€10.00", "€12.50"]}
    assert {
        "change": "field_changed",
        "field": "extract/price",
        "old": "€10.00",
        "new": "€12.50",
        "text": "extract/price changed from “€10.00” to “€12.50”",
    } in diff["summary"]
    # the pages and analysis queries show the column the way they show every analyzer's
    columns = query(archive, "analysis-columns", "--analyzer", "extract")
    assert columns["items"] == [{"analyzer": "extract", "column": "price", "pages": 4}]
    detail = query(archive, "page-detail", "--url", root + "p1")
    assert {"analyzer": "extract", "cells": {"price": "€12.50"}, "notes": {}} in detail["analysis"]
    app = create_app(archive, make_plugin_manager())  # the viewer's pages table offers the column
    try:
        exported = app.test_client().get("/pages?acol=extract:price&export=json").get_json()
    finally:
        app.config["NITPICKER_CLOSE"]()
    assert {r["url"].removeprefix(root): r["acol:extract:price"] for r in exported["items"]} == {
        "": None,
        "p1": "€12.50",
        "p2": None,
        "slow": None,
    }
    report = run_cli(
        "report", str(archive), "--csv", str(tmp_path / "csv"), "--only", "Page List", cwd=tmp_path
    )
    assert report.returncode == 0, report.stderr
    with open(tmp_path / "csv" / "page-list.csv", encoding="utf-8-sig", newline="") as sheet:
        rows = list(csv.DictReader(sheet))
    assert {r["URL"].removeprefix(root): r["Custom extraction: price"] for r in rows} == {
        "": "",
        "p1": "€12.50",
        "p2": "",
        "slow": "",
    }


def test_a_regex_that_backtracks_is_a_finding_on_its_page(crawled: tuple[Path, str], tmp_path: Path) -> None:
    archive, root = copy(crawled, tmp_path), crawled[1]
    result = analyze(
        archive,
        "--plugin",
        "extract-source",
        "--extract",
        "runaway=raw:regex:(a|aa)+$",
        "--extract-time-limit",
        "0.5",
    )
    assert result.returncode == 0, result.stderr
    found = cells(archive, root, "extract-source")
    assert found["slow"] == {"runaway": (None, "timed out after 0.5 s")}
    assert found["p1"] == {"runaway": NO}
    with open_archive(archive) as reader:
        violations = reader.violations(analyzer="extract-source")
    assert [(v["url"].removeprefix(root), v["rule"]) for v in violations] == [("slow", "timeout")]


SEARCH = (
    "--search-contains",
    "out-of-stock=Out of stock",
    "--search-missing",
    "price-shown=/€\\d+\\.\\d\\d/",
    "--search-within",
    "price-shown=main",
    "--search-priority",
    "out-of-stock=high",
)


def test_custom_search_checks_gate_with_fail_on(crawled: tuple[Path, str], tmp_path: Path) -> None:
    archive, root = copy(crawled, tmp_path), crawled[1]
    result = analyze(archive, "--plugin", "custom-search", *SEARCH)
    assert result.returncode == 0, result.stderr
    assert cells(archive, root, "custom-search") == {
        "home": {"out-of-stock": 0, "price-shown": (None, "'main' not found")},
        "p1": {"out-of-stock": 0, "price-shown": 1},
        "p2": {"out-of-stock": 1, "price-shown": 0},
        "slow": {"out-of-stock": 0, "price-shown": (None, "'main' not found")},
    }
    gated = run_cli("issues", str(archive), "--format", "json", *SEARCH, "--fail-on", "high", cwd=tmp_path)
    assert gated.returncode == 3, gated.stderr
    checks = {c["id"]: c for c in json.loads(gated.stdout)["items"] if c["id"].startswith("custom-search/")}
    assert (
        checks["custom-search/out-of-stock"]["priority"],
        checks["custom-search/out-of-stock"]["findings"],
    ) == ("high", 1)
    assert (
        checks["custom-search/price-shown"]["priority"],
        checks["custom-search/price-shown"]["findings"],
    ) == ("medium", 3)
    assert "--fail-on high: 1 findings (custom-search/out-of-stock)" in gated.stderr
    # at low priority the same finding no longer gates
    lowered = [*SEARCH[:-1], "out-of-stock=low"]
    passed = run_cli("issues", str(archive), "--format", "json", *lowered, "--fail-on", "high", cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("--extract", "price=css:.price["), "extract: extractor 'price': invalid CSS selector '.price['"),
        (("--extract", "price=xpath://div[@"), "extract: extractor 'price': invalid XPath '//div[@'"),
        (
            ("--extract", "price=regex:(unclosed"),
            "extract: extractor 'price': invalid regular expression '(unclosed'",
        ),
        (
            ("--extract", "title=css:h1"),
            "extract: extractor 'title': the name is a built-in column; choose another",
        ),
        (
            ("--extract", "near_similarity=css:h1"),  # a content column of the duplicate checks
            "extract: extractor 'near_similarity': the name is a built-in column; choose another",
        ),
        (
            ("--extract", "h1_count=css:h1"),  # a column of the pages query
            "extract: extractor 'h1_count': the name is a built-in column; choose another",
        ),
        (
            ("--extract", "Words=css:main"),  # another analyzer's column, case aside
            "extract: extractor 'Words': the name is a column of the analyzer 'main-contents'; choose another",
        ),
        (
            ("--extract", "price=css:.price", "--extract", "items=xpath:count(//li)"),
            "extract: extractor 'items': the name is a column of the analyzer 'structured-data'; choose another",
        ),
        (
            ("--extract", "price=jq:.price"),
            "extract: extractor 'price': 'jq:.price' does not start with css:, xpath: or regex:",
        ),
        (("--extract", "a=css:p", "--extract", "a=css:b"), "extract: extractor 'a': named twice"),
        (
            ("--search-contains", "x=/(/"),
            "custom-search: search 'x': keyword '/(/': invalid regular expression",
        ),
        (
            ("--search-contains", "x=a", "--search-priority", "x=urgent"),
            "custom-search: search 'x': priority 'urgent' is not one of",
        ),
        (
            ("--search-missing", "x=a", "--search-within", "x=main["),
            "custom-search: search 'x': invalid selector 'main['",
        ),
        (
            ("--search-contains", "x=a", "--search-priority", "y=high"),
            "custom-search: search 'y': --search-priority names no",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_extractor_before_any_work(
    crawled: tuple[Path, str], tmp_path: Path, args: tuple[str, ...], error: str
) -> None:
    archive = copy(crawled, tmp_path)
    with open_archive(archive) as reader:
        before = reader.analysis()
    result = analyze(archive, *args)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nitpicker: error: {error}"), result.stderr
    with open_archive(archive) as reader:
        assert reader.analysis() == before  # nothing analyzed


def test_an_installed_plugins_column_is_no_extractor_name_and_the_pages_query_has_the_columns_named(
    crawled: tuple[Path, str],
) -> None:
    """In process, as `analyze` checks settings: a third-party analyzer's column refuses the name, before any
    page is read; the `pages` query's rows have exactly the columns the check knows as built in."""

    class ShopData(Analyzer):
        name = "shop-data"
        columns = (Column("price", "Price"),)

        def each_page(self, page: PageInput) -> PageReport:
            raise AssertionError("no page is read")

    class Plugin:
        @hookimpl
        def register_analyzers(self, register: Any) -> None:
            register(ShopData())

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "shop-data-plugin")
    rules = {"plugins": {"extract": {"rules": ["sku=css:.sku", "PRICE=css:.price"]}}}
    with pytest.raises(UsageError) as refused:
        check_settings(pm, load_config(pm, data=rules), ["extract"])
    assert str(refused.value) == (
        "extract: extractor 'PRICE': the name is a column of the analyzer 'shop-data'; choose another"
    )
    free = {"plugins": {"extract": {"rules": ["sku=css:.sku", "cost=css:.price"]}}}
    assert check_settings(pm, load_config(pm, data=free), ["extract"]) == ["extract"]
    rows = query(crawled[0], "pages", "--limit", "1")  # read only: the module's archive itself
    assert set(rows["items"][0]) == set(read.PAGE_LIST_COLUMNS)


def test_spec_syntax() -> None:
    ex = parse("sku=all:raw:css:[itemprop=sku]@content")
    assert (ex.name, ex.kind, ex.expr, ex.html, ex.all, ex.output, ex.attr) == (
        "sku",
        "css",
        "[itemprop=sku]",
        "source",
        True,
        "attr",
        "content",
    )
    assert parse("body=css:main::html").output == "html"
    assert parse("p=rendered:regex:a, b{1,2}").expr == "a, b{1,2}"  # commas and all, kept whole
    assert [e.name for e in parse_all(["a=css:p", "b=xpath://p"])] == ["a", "b"]
    searches = parse_searches({"contains": ["a=x"], "missing": ["b=/y/i"], "priority": ["b=low"]})
    assert [(s.name, s.mode, s.priority) for s in searches] == [
        ("a", "contains", "medium"),
        ("b", "missing", "low"),
    ]


def test_a_custom_search_past_its_time_limit_is_a_finding_and_the_others_still_run() -> None:
    analyzer = CustomSearchAnalyzer()
    settings = {"contains": ["runaway=/(a|aa)+$/", "bee=b"], "time_limit": 0.2}
    analyzer.setup(settings)
    html = f"<html><body><p>{'a' * 40}b</p></body></html>"
    report = analyzer.each_page(PageInput("http://localhost/x", html, {}, settings))
    assert report.cells == {"runaway": Cell(None, "timed out after 0.2 s"), "bee": 1}
    assert [(v.rule, v.message) for v in report.violations] == [
        ("timeout", "search 'runaway': /(a|aa)+$/ timed out after 0.2 s"),
        ("bee", "'b' found 1 times"),
    ]
    assert [(r.id, r.priority) for r in analyzer.rules()] == [
        ("runaway", "medium"),
        ("bee", "medium"),
        ("timeout", "medium"),
    ]
