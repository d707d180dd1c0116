"""The `search` analyzer: exact keyword counts on the crawled /analyze/search/ pages, settings and parsing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from nitpicker_search import SearchAnalyzer, parse_settings
from nitpicker_search.keywords import parse_keyword, parse_keywords, visible_text
from support import crawl_subtree, run_cli

from nitpicker_core import Column, PageInput, UsageError
from nitpicker_core.analyze import analyzer_registry
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config

KEYWORDS = ["apple", "apple pie", "/pears?/i", "東京", r"/\d+ (kinds|pears)/", "/Apple/"]
CONFIG = "[plugins.search]\nkeywords = [{}]\n".format(", ".join(f"'{k}'" for k in KEYWORDS))
TOP, A, B = "/analyze/search/", "/analyze/search/page-a", "/analyze/search/page-b"


@pytest.fixture(scope="module")
def crawled(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return crawl_subtree(f"{site}{TOP}", tmp_path_factory.mktemp("search"))


def analyze(crawled: Path, workdir: Path, *args: str, config: str = "") -> tuple[Any, Path]:
    """``nitpicker analyze --plugin search`` on a copy of the crawl in ``workdir`` (``config``: its toml)."""
    archive = workdir / "site.nitpicker"
    shutil.copy(crawled, archive)
    if config:
        (workdir / "nitpicker.toml").write_text(config, encoding="utf-8")
    return run_cli("analyze", str(archive), "--plugin", "search", *args, cwd=workdir, timeout=300), archive


def cells(archive: Path, site: str) -> dict[str, dict[str, Any]]:
    """{page path: {column: value, or (value, note) when there is a note}}."""
    with open_archive(archive) as reader:
        rows = reader.analysis(analyzer="search")
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        value = (row["value"], row["note"]) if row["note"] else row["value"]
        found.setdefault(row["url"].removeprefix(site), {})[row["column"]] = value
    return found


def test_keywords_from_the_config_file_in_the_body(crawled: Path, site: str, tmp_path: Path) -> None:
    result, archive = analyze(crawled, tmp_path, config=CONFIG)
    assert result.returncode == 0, result.stderr
    columns = [f"keyword:{k}" for k in KEYWORDS] + ["total"]
    assert cells(archive, site) == {
        TOP: dict(zip(columns, [1, 0, 0, 0, 0, 1, 2], strict=True)),
        # apple: header, h1 "Apples", APPLE, Apple, pineapple, footer; "apple pie" only in the header (the
        # footer's "apple" and "pie" are separate paragraphs); hidden text, script and attributes never count
        A: dict(zip(columns, [6, 1, 3, 2, 2, 2, 16], strict=True)),
        B: dict(zip(columns, [1, 1, 0, 1, 0, 1, 4], strict=True)),
    }
    with open_archive(archive) as reader:
        assert reader.violations(analyzer="search") == []
        assert reader.analyzer_errors(analyzer="search") == []


def test_scope_and_keyword_flags(crawled: Path, site: str, tmp_path: Path) -> None:
    result, archive = analyze(
        crawled, tmp_path, "--search-scope", "main", "--search-keywords", "apple", "--search-keywords", "東京"
    )
    assert result.returncode == 0, result.stderr
    missing = (None, "scope 'main' not found")
    assert cells(archive, site) == {
        TOP: {"keyword:apple": missing, "keyword:東京": missing, "total": missing},
        A: {"keyword:apple": 4, "keyword:東京": 2, "total": 6},
        B: {"keyword:apple": missing, "keyword:東京": missing, "total": missing},
    }


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ("--search-keywords", "/(unclosed/"),
            "nitpicker: error: search: keyword '/(unclosed/': invalid regular expression: "
            "missing ) at position 9",
        ),
        (
            ("--search-keywords", "apple", "--search-scope", "main >"),
            "nitpicker: error: search: invalid scope selector 'main >': Expected selector, got <EOF at 6>",
        ),
    ],
)
def test_bad_settings_stop_before_the_run(
    crawled: Path, tmp_path: Path, args: tuple[str, ...], error: str
) -> None:
    result, archive = analyze(crawled, tmp_path, *args)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [error]
    with open_archive(archive) as reader:
        assert reader.analyzer_runs() == []


# -- parsing and counting without a crawl --------------------------------------------------------------
def count(body: str, keywords: list[str], scope: str = "body") -> dict[str, Any]:
    analyzer = SearchAnalyzer()
    settings = {"keywords": keywords, "scope": scope}
    analyzer.setup(settings)
    html = f"<!DOCTYPE html><html><head><title>apple</title></head><body>{body}</body></html>"
    report = analyzer.each_page(PageInput("http://localhost/x", html, {}, settings))
    return {k: (v.value, v.note) if hasattr(v, "note") else v for k, v in report.cells.items()}


def test_plain_keywords_are_case_insensitive_literals() -> None:
    assert count("<p>A.B a.b AxB</p><p>New   York, new york</p>", ["a.b", "new york", "NEW YORK"]) == {
        "keyword:a.b": 2,
        "keyword:new york": 2,
        "keyword:NEW YORK": 2,
        "total": 6,
    }


def test_regex_flags() -> None:
    body = "<p>Apple apple</p><p>line one</p><p>line two</p>"
    assert count(body, ["/apple/", "/APPLE/i", "/^line/m", "/^line/", "/one.line/s", "/apple/g"]) == {
        "keyword:/apple/": 1,
        "keyword:/APPLE/i": 2,
        "keyword:/^line/m": 2,
        "keyword:/^line/": 0,
        "keyword:/one.line/s": 1,
        "keyword:/apple/g": 1,
        "total": 7,
    }


def test_visible_text_only() -> None:
    body = """<p title="apple" data-x="apple">x</p><img alt="apple" src="a.png"><p hidden>apple</p>
    <div aria-hidden="true">apple</div><div style="display: none">apple</div><script>apple</script>
    <style>.apple {}</style><noscript>apple</noscript><template>apple</template><!-- apple -->
    <textarea>apple</textarea><p>app<b>le</b></p>"""
    assert count(body, ["apple"]) == {"keyword:apple": 1, "total": 1}


def test_scope_matches_are_counted_once() -> None:
    body = "<div class='s'>apple <div class='s'>apple</div></div><p>apple</p><div class='s'>apple</div>"
    assert count(body, ["apple"], scope=".s") == {"keyword:apple": 3, "total": 3}
    assert count(body, ["apple"], scope="article") == {
        "keyword:apple": (None, "scope 'article' not found"),
        "total": (None, "scope 'article' not found"),
    }


def test_no_keywords_no_columns() -> None:
    analyzer = SearchAnalyzer()
    analyzer.setup({"keywords": [], "scope": "body"})
    assert analyzer.columns == ()
    report = analyzer.each_page(PageInput("http://localhost/x", "<p>apple</p>", {}, {}))
    assert (report.cells, report.violations) == ({}, [])


def test_repeated_keywords_make_one_column() -> None:
    assert [k.text for k in parse_keywords(["b", "a", "b"])] == ["b", "a"]


def test_columns_follow_the_configured_settings(pm: Any) -> None:
    config = load_config(pm, data={"plugins": {"search": {"keywords": ["apple", "/pie/i"]}}})
    pm.configure_plugins(config)
    assert analyzer_registry(pm)["search"].columns == (
        Column("keyword:apple", "Search keyword: apple"),
        Column("keyword:/pie/i", "Search keyword: /pie/i"),
        Column("total", "Search total"),
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("  ", "empty keyword"),
        ("/[a-/", "keyword '/[a-/': invalid regular expression: unterminated character set at position 3"),
        ("/x/gz", "keyword '/x/gz': unknown regex flag 'z' (use i, m, s, x)"),
        ("/(a|)/", "keyword '/(a|)/': the regular expression matches the empty string"),
    ],
)
def test_bad_keywords(text: str, error: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_keyword(text)
    assert str(caught.value) == error
    with pytest.raises(UsageError):
        parse_settings({"keywords": [text]})


def test_slashes_without_a_regex_shape_are_literal() -> None:
    assert parse_keyword("/").pattern.pattern == "/"
    assert parse_keyword("a/b/").pattern.flags & 2  # re.IGNORECASE: a plain keyword


def test_blocks_do_not_run_together() -> None:
    import lxml.html

    doc = lxml.html.document_fromstring("<body><p>one</p><p>two <i>three</i></p>four<br>five</body>")
    assert visible_text(doc.find("body")) == "one\ntwo three\nfour\nfive"
