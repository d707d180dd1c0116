"""The `main-contents` analyzer: each finding method on literal HTML, then exact cells on a crawl of /analyze/main/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nitpicker_main_contents import MainContents
from support import crawl_subtree, run_cli

from nitpicker_core import Cell, PageInput
from nitpicker_core.archive import open_archive

DOC = '<!DOCTYPE html>\n<html lang="en"><head><title>t</title><style>p{{}}</style></head><body>\n{}\n</body></html>'


def analyze(body: str, selector: str | None = None):
    analyzer = MainContents()
    settings = {"selector": selector}
    analyzer.setup(settings)
    return analyzer.each_page(PageInput("http://localhost/", DOC.format(body), {}, settings))


def method(body: str, selector: str | None = None) -> tuple[str, str]:
    cell = analyze(body, selector).cells["method"]
    return cell.value, cell.note


# --- how the main content is found -----------------------------------------------------------------------


def test_main_wins_over_role_and_article():
    body = '<div role="main" id="r"><article><p>long long long text</p></article></div><main id="m"><p>x</p></main>'
    assert method(body) == ("main", "main#m")


def test_role_main_before_article():
    assert method('<article><p>text</p></article><div role="main" class="a b"><p>x</p></div>') == (
        "role=main",
        "div.a.b",
    )


def test_article_with_the_most_text():
    body = '<article id="one"><p>short</p></article><article id="two"><p>much longer</p></article>'
    assert method(body) == ("article", "article#two")
    body = '<article id="one"><p>same</p></article><article id="two"><p>same</p></article>'
    assert method(body) == ("article", "article#one")  # a tie: the first


def test_densest_block_ignores_chrome_and_link_text():
    body = """<div id="wrap"><header><p>A very long header text that must not count at all here</p></header>
<div id="nav"><a href="/">lots and lots and lots of link text that does not count</a> x</div>
<div id="content"><div class="inner"><p>Most of the real text sits here.</p></div><p>And some more of it here, in the other paragraph.</p></div>
<footer>Footer text that is long but does not count either</footer></div>"""
    assert method(body) == ("densest-block", "div#content")


def test_densest_block_is_the_deepest_holding_most_of_the_text():
    body = (
        '<div id="a"><div id="b"><section id="c"><p>all of the text is here</p></section></div></div><p>x</p>'
    )
    assert method(body) == ("densest-block", "section#c")


def test_a_page_without_text_is_its_body():
    assert method('<div><img src="a.png"></div>') == ("densest-block", "body")


def test_custom_selector_first_and_a_warning_when_it_misses():
    body = '<main><p>x</p><div class="entry"><p>y</p></div></main>'
    report = analyze(body, ".entry")
    assert (report.cells["method"].value, report.violations) == ("selector", [])
    report = analyze(body, "#absent")
    assert report.cells["method"].value == "main"
    assert [(v.rule, v.severity, v.location, v.message) for v in report.violations] == [
        (
            "selector-not-found",
            "warning",
            "#absent",
            "no element matches '#absent'; the main content was found by main",
        )
    ]


def test_invalid_selector_is_a_usage_error_when_the_analyzer_is_used():
    from nitpicker_main_contents import MainContents

    from nitpicker_core import UsageError
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    pm = make_plugin_manager()
    config = load_config(pm, data={"plugins": {"main-content": {"selector": "div[["}}})
    pm.configure_plugins(config)  # a bad setting does not stop commands that do not analyze
    with pytest.raises(UsageError, match=r"^--main-content-selector: invalid CSS selector 'div\[\['"):
        MainContents().check({"selector": "div[["})


# --- what is counted ---------------------------------------------------------------------------------------


def test_counts_in_the_main_content():
    body = """<nav><a href="/">Home</a><img src="logo.png"></nav>
<main>
<h1>Title here</h1><h2>Sub</h2>
<p>Hello, world! <a href="/a">A link</a> <a name="x">anchor</a></p>
<script>var notText = 1;</script>
<img src="a.png" alt="A"><img src="b.png"><img src="c.png" alt=""><input type="image" src="d.png">
<input type="text">
<table><tr><th>h</th><th>h</th><th>h</th></tr><tr><td>1</td><td>2</td><td>3</td></tr></table>
<table><thead><tr><td rowspan="2">x</td></tr></thead><tfoot><tr><td>f</td></tr></tfoot></table>
</main>"""
    cells = analyze(body).cells
    assert cells == {
        "method": Cell("main", "main"),
        "characters": len("TitlehereSubHello,world!Alinkanchorhhh123xf"),
        "words": 16,
        "headings": Cell(2, "h1 Title here\nh2 Sub"),
        "images": 4,
        "images_without_alt": Cell(2, "b.png\nd.png"),
        "links": 1,
        "tables": Cell(2, "| r | c | h | f | m |\n| 2 | 3 | x | x | x |\n| 2 | 1 | o | o | o |"),
    }


# --- a real crawl of /analyze/main/ ------------------------------------------------------------------------


def cells(
    method,
    note,
    characters,
    words,
    headings,
    heading_note,
    images,
    without_alt,
    alt_note,
    links,
    tables,
    table_note="",
):
    return {
        "method": (method, note),
        "characters": (characters, ""),
        "words": (words, ""),
        "headings": (headings, heading_note),
        "images": (images, ""),
        "images_without_alt": (without_alt, alt_note),
        "links": (links, ""),
        "tables": (tables, table_note),
    }


EXPECTED = {
    "/analyze/main/": cells("main", "main", 41, 8, 1, "h1 Main pages", 0, 0, "", 4, 0),
    "/analyze/main/role": cells(
        "role=main", "div#content", 18, 4, 1, "h2 Role main", 2, 1, "/analyze/main/pixel.gif", 0, 0
    ),
    "/analyze/main/article": cells(
        "article",
        "article#long",
        38,
        10,
        1,
        "h2 Second",
        0,
        0,
        "",
        0,
        1,
        "| r | c | h | f | m |\n| 2 | 2 | o | x | o |",
    ),
    "/analyze/main/dense": cells("densest-block", "div#content", 102, 27, 1, "h1 Dense", 0, 0, "", 0, 0),
    "/analyze/main/custom": cells("main", "main", 28, 6, 1, "h2 Entry", 0, 0, "", 1, 0),
}


@pytest.fixture(scope="module")
def crawled(site, tmp_path_factory) -> Path:
    """/analyze/main/ crawled in Chromium (5 pages), not analyzed yet."""
    return crawl_subtree(f"{site}/analyze/main/", tmp_path_factory.mktemp("main"))


def analyzed(crawled: Path, name: str, *flags: str) -> Path:
    archive = crawled.with_name(f"{name}.nitpicker")
    shutil.copyfile(crawled, archive)
    result = run_cli(
        "analyze", str(archive), "--plugin", "main-contents", *flags, cwd=archive.parent, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return archive


def read(archive: Path, site: str) -> tuple[dict[str, dict], list[tuple[str, ...]]]:
    with open_archive(archive) as reader:
        table: dict[str, dict] = {}
        for row in reader.analysis(analyzer="main-contents"):
            table.setdefault(row["url"].removeprefix(site), {})[row["column"]] = (row["value"], row["note"])
        found = [
            (row["url"].removeprefix(site), row["rule"], row["severity"], row["location"], row["message"])
            for row in reader.violations(analyzer="main-contents")
        ]
    return table, found


@pytest.mark.browser
def test_crawl_cells_are_exact(crawled, site):
    table, found = read(analyzed(crawled, "default"), site)
    assert table == EXPECTED
    assert found == []


@pytest.mark.browser
def test_crawl_with_a_custom_selector(crawled, site):
    table, found = read(analyzed(crawled, "custom", "--main-content-selector", ".entry"), site)
    assert table["/analyze/main/custom"] == cells(
        "selector", "div.entry", 19, 4, 1, "h2 Entry", 0, 0, "", 1, 0
    )
    assert {url: row for url, row in table.items() if url != "/analyze/main/custom"} == {
        url: row for url, row in EXPECTED.items() if url != "/analyze/main/custom"
    }
    assert found == [
        (
            url,
            "selector-not-found",
            "warning",
            ".entry",
            f"no element matches '.entry'; the main content was found by {EXPECTED[url]['method'][0]}",
        )
        for url in sorted(EXPECTED)
        if url != "/analyze/main/custom"
    ]


def test_invalid_selector_on_the_cli_is_one_line(tmp_path):
    result = run_cli(
        "analyze",
        str(tmp_path / "none.nitpicker"),
        "--plugin",
        "main-contents",
        "--main-content-selector",
        "div[[",
    )
    assert result.returncode == 1
    assert result.stderr.startswith("nitpicker: error: --main-content-selector: invalid CSS selector 'div[['")
    assert len(result.stderr.strip().splitlines()) == 1
