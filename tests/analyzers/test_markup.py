"""The `markup` analyzer: every rule on literal HTML, then its exact findings on real crawls of /analyze/markup/
and /analyze/source/ (the HTML the server sent against the rendered DOM, pages left unparsed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from nitpicker_markup import RULES, Markup
from nitpicker_markup.parse import NESTING_CODES
from support import crawl_subtree, run_cli

from nitpicker_core import Cell, PageInput, UsageError
from nitpicker_core.archive import open_archive

DOC = '<!DOCTYPE html>\n<html lang="en"><head><title>t</title></head><body>\n{}\n</body></html>'


def analyze(body: str, raw: bool = False, kind: str = "source", **settings):
    analyzer = Markup()
    analyzer.setup({"disable": [], **settings})
    html = body if raw else DOC.format(body)
    return analyzer.each_page(PageInput("http://localhost/", html, {}, settings, kind))


def found(body: str, raw: bool = False, **settings) -> list[tuple[str, str]]:
    return [(v.rule, v.location) for v in analyze(body, raw, **settings).violations]


# --- each rule on literal HTML ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '<div id="a"></div><p id="a"></p><span id="a"></span>',
            [("duplicate-id", "html > body > p"), ("duplicate-id", "html > body > span")],
        ),
        (
            '<img src="a.png"><img src="b.png" alt=" "><img src="c.png" alt="C"><input type="image" src="d.png">',
            [
                ("img-alt-missing", "html > body > img:nth-of-type(1)"),
                ("img-alt-empty", "html > body > img:nth-of-type(2)"),
                ("img-alt-missing", "html > body > input"),
            ],
        ),
        (
            "<h1>a</h1><h2>b</h2><h4>c</h4><h2>d</h2><h3>e</h3><h6>f</h6>",
            [("heading-skip", "html > body > h4"), ("heading-skip", "html > body > h6")],
        ),
        (
            "<h1>a</h1><h1>b</h1><section><h1>c</h1></section>",
            [
                ("multiple-h1", "html > body > h1:nth-of-type(2)"),
                ("multiple-h1", "html > body > section > h1"),
            ],
        ),
        (
            '<a href="/1"> </a><a href="/2" title="T"></a><a href="/3" aria-label="L"></a><a href="/4"><img alt="I"></a>'
            '<a name="anchor"></a><a href="/5"><img src="x.png" alt=""></a><a href="/6"><span>text</span></a>',
            [
                ("empty-link", "html > body > a:nth-of-type(1)"),
                ("empty-link", "html > body > a:nth-of-type(6)"),
                ("img-alt-empty", "html > body > a:nth-of-type(6) > img"),
            ],
        ),
        (
            '<button></button><button aria-labelledby="x"></button><button>OK</button>'
            '<input type="button"><input type="button" value="Go"><input type="submit">',
            [
                ("empty-button", "html > body > button:nth-of-type(1)"),
                ("empty-button", "html > body > input:nth-of-type(1)"),
            ],
        ),
        (
            '<center>c</center><font color="red">f</font><marquee>m</marquee><strike>s</strike><tt>t</tt>',
            [
                ("obsolete-element", "html > body > center"),
                ("obsolete-element", "html > body > font"),
                ("obsolete-element", "html > body > marquee"),
                ("obsolete-element", "html > body > strike"),
                ("obsolete-element", "html > body > tt"),
            ],
        ),
        (
            '<table border="1" width="50%"><tr valign="top"><td nowrap>x</td></tr></table><img src="a" alt="" width="5">'
            '<div align="left" bgcolor="red"></div><br clear="all">',
            [
                ("obsolete-attribute", "html > body > table"),
                ("obsolete-attribute", "html > body > table"),
                ("obsolete-attribute", "html > body > table > tr"),
                ("obsolete-attribute", "html > body > table > tr > td"),
                ("img-alt-empty", "html > body > img"),
                ("obsolete-attribute", "html > body > div"),
                ("obsolete-attribute", "html > body > div"),
                ("obsolete-attribute", "html > body > br"),
            ],
        ),
        (
            '<label for="nope">a</label><label for="d">b</label><div id="d"></div><label>c</label>'
            '<label for="i">ok</label><input id="i"><label>ok <select></select></label>'
            '<label>hidden <input type="hidden"></label>',
            [
                ("label-without-control", "html > body > label:nth-of-type(1)"),
                ("label-without-control", "html > body > label:nth-of-type(2)"),
                ("label-without-control", "html > body > label:nth-of-type(3)"),
                ("label-without-control", "html > body > label:nth-of-type(6)"),
            ],
        ),
    ],
)
def test_structural_rules(body, expected):
    assert found(body) == expected


def test_xhtml_with_an_xml_declaration_is_checked_like_any_page():
    # PostgreSQL's docs: every page starts with one; lxml refused the str and the analyzer failed on all 1,169
    xhtml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html>\n'
        '<html lang="en"><head><title>t</title></head><body>\n<img src="a">\n</body></html>'
    )
    report = analyze(xhtml, raw=True)
    # the declaration is HTML's own parse error (a processing instruction), and the structure is checked too
    assert [(v.rule, v.location) for v in report.violations] == [
        ("parse-error", "1:1"),
        ("img-alt-missing", "html > body > img"),
    ]


def test_missing_and_empty_lang():
    assert found("<html><body><p>x</p></body></html>", raw=True) == [
        ("parse-error", "1:6"),
        ("html-lang", "html"),
    ]
    assert found('<!DOCTYPE html><html lang=" "><body></body></html>', raw=True) == [("html-lang", "html")]


def test_parse_errors_carry_line_column_message_and_snippet():
    report = analyze('<p>one</i></p>\n<table><tr><td>x</td></tr><p>y</p></table>\n<b a="1" a="2">z</b>')
    assert [(v.rule, v.location, v.message, v.snippet, v.severity) for v in report.violations] == [
        (
            "invalid-nesting",
            "3:10",
            "Unexpected end tag (i). Ignored. (unexpected-end-tag)",
            "<p>one</i></p>",
            "error",
        ),
        (
            "invalid-nesting",
            "4:29",
            "Unexpected start tag (p) in table context caused voodoo mode. "
            "(unexpected-start-tag-implies-table-voodoo)",
            "<table><tr><td>x</td></tr><p>y</p></table>",
            "error",
        ),
        (
            "invalid-nesting",
            "4:34",
            "Unexpected end tag (p) in table context caused voodoo mode. "
            "(unexpected-end-tag-implies-table-voodoo)",
            "<table><tr><td>x</td></tr><p>y</p></table>",
            "error",
        ),
        (
            "parse-error",
            "5:11",
            "Dropped duplicate attribute on tag. (duplicate-attribute)",
            '<b a="1" a="2">z</b>',
            "error",
        ),
    ]
    assert report.cells["parse_errors"] == 4
    assert report.cells["violations"].value == 4
    assert report.cells["violations"].note == "invalid-nesting: 3\nparse-error: 1"


def test_nesting_codes_are_tree_construction_errors():
    assert {
        "unexpected-end-tag",
        "adoption-agency-1.3",
        "unexpected-start-tag-implies-end-tag",
        "expected-one-end-tag-but-got-another",
    } <= NESTING_CODES
    assert (
        not {
            "duplicate-attribute",
            "expected-doctype-but-got-start-tag",
            "eof-in-comment",
            "named-entity-without-semicolon",
        }
        & NESTING_CODES
    )


def test_clean_page_has_nothing():
    report = analyze('<h1>Title</h1><p id="x">Text <a href="/">home</a></p><img src="a" alt="A">')
    assert report.violations == []
    assert report.cells["parse_errors"] == 0
    assert (report.cells["violations"].value, report.cells["violations"].note) == (0, "")


def test_locations_are_selectors_that_find_the_element():
    import lxml.html

    body = (
        '<div id="wrap"><ul><li><a href="/a"></a></li><li><a href="/b"></a></li></ul></div>'
        '<div id="w2"><img src="a"></div><div id="w2"><img src="b"></div>'
    )
    report = analyze(body)
    assert [v.location for v in report.violations] == [
        "#wrap > ul > li:nth-of-type(1) > a",
        "#wrap > ul > li:nth-of-type(2) > a",
        "html > body > div:nth-of-type(2) > img",
        "html > body > div:nth-of-type(3)",
        "html > body > div:nth-of-type(3) > img",
    ]
    document = lxml.html.document_fromstring(DOC.format(body))
    for violation in report.violations:
        (element,) = document.cssselect(violation.location)
        assert violation.snippet.startswith(f"<{element.tag}")
        assert (
            violation.snippet
            == "<" + element.tag + "".join(f' {k}="{v}"' for k, v in element.attrib.items()) + ">"
        )


# --- settings --------------------------------------------------------------------------------------------


def test_disabled_rules_are_not_reported_but_parse_errors_still_counted():
    body = '<p>one</i></p><img src="a"><h1>a</h1><h1>b</h1>'
    assert found(body) == [
        ("invalid-nesting", "3:10"),
        ("img-alt-missing", "html > body > img"),
        ("multiple-h1", "html > body > h1:nth-of-type(2)"),
    ]
    report = analyze(body, disable=["invalid-nesting", "multiple-h1"])
    assert [v.rule for v in report.violations] == ["img-alt-missing"]
    assert report.cells["parse_errors"] == 1


def test_a_page_over_max_size_is_reported_skipped_and_the_structure_still_checked():
    body = '<p>one</i></p><img src="a">'
    report = analyze(body, max_size=100)
    assert [(v.rule, v.location) for v in report.violations] == [("img-alt-missing", "html > body > img")]
    size = len(DOC.format(body))
    reason = f"{size:,} characters exceed max_size 100 (raise --markup-max-size; 0: no limit)"
    assert report.skipped == {"parse-error, invalid-nesting": reason}
    assert report.cells["parse_errors"] == Cell(None, f"not checked: {reason}")
    assert analyze(body, max_size=0).skipped == {}  # 0: no limit
    assert analyze(body, max_size=0).cells["parse_errors"] == 1


def test_the_default_size_limit_parses_a_typical_large_page():
    # 300,000 characters was the old limit: 32 pages of Python's documentation were left unparsed
    body = "\n".join(
        f'<p id="p{n}">Paragraph {n} of <a href="/{n}">a long page</a>.</p>' for n in range(6000)
    )
    report = analyze(body + "<p>stray</i></p>")
    assert len(DOC.format(body)) > 300_000 and report.skipped == {}
    assert [v.rule for v in report.violations] == ["invalid-nesting"]


def test_a_parse_too_slow_is_stopped_and_reported_skipped():
    # html5lib's quadratic case: every unclosed <b> with its own attributes stays an active formatting element
    body = "".join(f'<b class="c{n}">x<p>y' for n in range(3000)) + '<img src="a">'
    report = analyze(body, parse_timeout=0.5)
    ((what, why),) = report.skipped.items()
    assert what == "parse-error, invalid-nesting"
    assert why.startswith("html5lib did not finish within 0.5 s, stopped after ")
    assert why.endswith(" tokens (raise --markup-parse-timeout to wait longer)")
    assert [v.rule for v in report.violations if v.rule.startswith(("parse", "invalid"))] == []
    assert "img-alt-missing" in {v.rule for v in report.violations}  # the structural rules still ran


def test_both_parse_rules_disabled_means_not_parsed_and_not_skipped():
    report = analyze("<p>one</i></p>", disable=["parse-error", "invalid-nesting"], max_size=10)
    assert report.skipped == {} and report.violations == []
    assert report.cells["parse_errors"] == Cell(
        None, "not checked: parse-error and invalid-nesting are disabled"
    )


def test_the_parse_error_count_says_when_it_was_made_on_the_rendered_dom():
    assert analyze("<p>one</i></p>").cells["parse_errors"] == 1
    assert analyze("<p>one</i></p>", kind="rendered").cells["parse_errors"] == Cell(
        1, "in the rendered DOM: the archive did not keep the HTML the server sent"
    )
    assert analyze("<p>one</i></p>", kind="rendered", reads="rendered").cells["parse_errors"] == Cell(
        1, "in the rendered DOM (reads = rendered)"
    )


def test_markup_reads_the_source_unless_told_otherwise():
    assert Markup().reads == "source"
    assert Markup().reading({"reads": "rendered"}) == "rendered"
    with pytest.raises(UsageError, match="^markup: reads must be one of source, rendered, not 'dom'$"):
        Markup().reading({"reads": "dom"})


def test_unknown_rule_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown rule nope"):
        analyze("", disable=["nope"])
    with pytest.raises(UsageError, match="parse-skipped can no longer be switched off"):
        Markup().check({"disable": ["parse-skipped"]})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_size": -1}, "markup max_size (--markup-max-size) must be 0 (no limit) or more, got -1"),
        ({"parse_timeout": 0}, "markup parse_timeout (--markup-parse-timeout) must be more than 0 s, got 0"),
    ],
)
def test_bad_limits_are_usage_errors(settings, message):
    with pytest.raises(UsageError) as caught:
        Markup().check(settings)
    assert str(caught.value) == message


def test_every_rule_has_a_known_severity():
    assert {severity for severity, _ in RULES.values()} == {"error", "warning"}


# --- a real crawl of /analyze/markup/ --------------------------------------------------------------------

STRUCTURE = [
    (
        "error",
        "duplicate-id",
        "html > body > div:nth-of-type(2)",
        'id "dup" is already used by an earlier element',
        '<div id="dup">',
    ),
    (
        "error",
        "img-alt-missing",
        "html > body > img:nth-of-type(1)",
        "<img> has no alt attribute",
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">',
    ),
    (
        "warning",
        "img-alt-empty",
        "html > body > img:nth-of-type(2)",
        "empty alt: the image is treated as decorative",
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">',
    ),
    ("warning", "heading-skip", "html > body > h3", "h3 follows h1, skipping h2", "<h3>"),
    (
        "warning",
        "multiple-h1",
        "html > body > h1:nth-of-type(2)",
        "h1 number 2 of 2; a page should have one",
        "<h1>",
    ),
    (
        "error",
        "empty-link",
        "html > body > a:nth-of-type(1)",
        "the link has no text, aria-label, title or image alt",
        '<a href="/analyze/markup/">',
    ),
    (
        "error",
        "empty-button",
        "html > body > button:nth-of-type(1)",
        "the button has no text, aria-label, title or image alt",
        '<button type="button">',
    ),
    ("warning", "obsolete-element", "html > body > center", "<center> is obsolete", "<center>"),
    (
        "warning",
        "obsolete-attribute",
        "html > body > p",
        "the align attribute on <p> is obsolete",
        '<p align="center">',
    ),
    (
        "warning",
        "label-without-control",
        "html > body > label:nth-of-type(1)",
        'the label points to id "missing", which does not exist',
        '<label for="missing">',
    ),
]
# Read as rendered (--markup-reads rendered): the page's script nests elements the HTML parser never would,
# so the serialized DOM re-parses with three nesting errors the server's HTML does not have.
PARSE = [
    (
        "error",
        "parse-error",
        "1:14",
        "Unexpected start tag (html). Expected DOCTYPE. (expected-doctype-but-got-start-tag)",
        '<html lang=""><head><meta charset=',
    ),
    (
        "error",
        "invalid-nesting",
        "4:32",
        "Unexpected end tag (p). Ignored. (unexpected-end-tag)",
        '<p id="host">Text<div></div></p>',
    ),
    (
        "error",
        "invalid-nesting",
        "5:46",
        "Unexpected start tag (a) implies end tag (a). (unexpected-start-tag-implies-end-tag)",
        '<a id="outer" href="/analyze/markup/">Outer<a></a></a>',
    ),
    (
        "error",
        "invalid-nesting",
        "5:54",
        "Unexpected end tag (a). Ignored. (unexpected-end-tag)",
        '<a id="outer" href="/analyze/markup/">Outer<a></a></a>',
    ),
    ("error", "html-lang", "html", "the <html> element has no lang attribute", '<html lang="">'),
]
PARSE_SOURCE = [PARSE[0], PARSE[4]]  # the HTML the server sent (the default)


@pytest.fixture(scope="module")
def crawled(site, tmp_path_factory) -> Path:
    """/analyze/markup/ crawled in Chromium (3 pages), not analyzed yet."""
    return crawl_subtree(f"{site}/analyze/markup/", tmp_path_factory.mktemp("markup"))


def analyzed(crawled: Path, name: str, *flags: str) -> Path:
    """A copy of the crawl analyzed by `nitpicker analyze --plugin markup FLAGS`."""
    return analyze_cli(crawled, name, *flags)[0]


def analyze_cli(crawled: Path, name: str, *flags: str) -> tuple[Path, Any]:
    """(the analyzed copy, the finished `nitpicker analyze --plugin markup FLAGS` process)."""
    archive = crawled.with_name(f"{name}.nitpicker")
    shutil.copyfile(crawled, archive)
    result = run_cli("analyze", str(archive), "--plugin", "markup", *flags, cwd=archive.parent, timeout=300)
    assert result.returncode == 0, result.stderr
    return archive, result


@pytest.fixture(scope="module")
def archive(crawled) -> Path:
    return analyzed(crawled, "default")


def violations(archive: Path, site: str) -> dict[str, list[tuple[str, ...]]]:
    with open_archive(archive) as reader:
        rows = reader.violations(analyzer="markup")
    by_page: dict[str, list[tuple[str, ...]]] = {}
    for row in rows:
        by_page.setdefault(row["url"].removeprefix(site), []).append(
            (row["severity"], row["rule"], row["location"], row["message"], row["snippet"])
        )
    return by_page


@pytest.mark.browser
def test_crawl_findings_are_exact(archive, site):
    assert violations(archive, site) == {
        "/analyze/markup/structure": STRUCTURE,
        "/analyze/markup/parse": PARSE_SOURCE,
    }


@pytest.mark.browser
def test_crawl_findings_on_the_rendered_dom(crawled, site):
    archive = analyzed(crawled, "rendered", "--markup-reads", "rendered")
    assert violations(archive, site) == {
        "/analyze/markup/structure": STRUCTURE,
        "/analyze/markup/parse": PARSE,
    }
    with open_archive(archive) as reader:
        notes = {
            row["url"].removeprefix(site): (row["value"], row["note"])
            for row in reader.analysis(analyzer="markup")
            if row["column"] == "parse_errors"
        }
    assert notes["/analyze/markup/parse"] == (4, "in the rendered DOM (reads = rendered)")


@pytest.mark.browser
def test_crawl_cells(archive, site):
    with open_archive(archive) as reader:
        cells = {
            (row["url"].removeprefix(site), row["column"]): (row["value"], row["note"])
            for row in reader.analysis(analyzer="markup")
        }
    assert cells == {
        ("/analyze/markup/", "parse_errors"): (0, ""),
        ("/analyze/markup/", "violations"): (0, ""),
        ("/analyze/markup/structure", "parse_errors"): (0, ""),
        ("/analyze/markup/structure", "violations"): (
            10,
            "\n".join(f"{rule}: 1" for rule in sorted(row[1] for row in STRUCTURE)),
        ),
        ("/analyze/markup/parse", "parse_errors"): (1, ""),
        ("/analyze/markup/parse", "violations"): (2, "html-lang: 1\nparse-error: 1"),
    }


@pytest.mark.browser
def test_crawl_violations_query_groups_by_rule(archive):
    result = run_cli("query", str(archive), "violations", "--analyzer", "markup", "--group-by-rule", "true")
    assert result.returncode == 0, result.stderr
    counts = {
        (row["rule"], row["severity"]): (row["count"], row["pages"])
        for row in json.loads(result.stdout)["items"]
    }
    assert counts == {(rule, severity): (1, 1) for severity, rule, *_ in STRUCTURE + PARSE_SOURCE}


@pytest.mark.browser
def test_crawl_with_rules_disabled(crawled, site):
    archive = analyzed(crawled, "disabled", "--markup-disable", "html-lang,invalid-nesting")
    assert violations(archive, site) == {
        "/analyze/markup/structure": STRUCTURE,
        "/analyze/markup/parse": [PARSE[0]],
    }
    with open_archive(archive) as reader:
        (run,) = [r for r in reader.analyzer_runs() if r["analyzer"] == "markup"]
    assert run["settings"]["disable"] == ["html-lang", "invalid-nesting"]


def test_unknown_rule_on_the_cli_is_one_line(tmp_path):
    result = run_cli(
        "analyze", str(tmp_path / "none.nitpicker"), "--plugin", "markup", "--markup-disable", "nope"
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "nitpicker: error: markup disable (--markup-disable): unknown rule nope (known: "
    )
    assert len(result.stderr.strip().splitlines()) == 1


# --- /analyze/source/: the HTML the server sent against the rendered DOM, a page too large to parse -------

SIDEBAR = "/analyze/source/sidebar"
STRAY_END_TAG = (
    "error",
    "invalid-nesting",
    "11:24",
    "Unexpected end tag (i). Ignored. (unexpected-end-tag)",
    "<p>Text with a stray</i> end tag.</p>",
)
SCRIPT_DUPLICATE = (
    "error",
    "duplicate-id",
    "#sidebar > div",
    'id "searchbox" is already used by an earlier element',
    '<div id="searchbox">',
)


@pytest.fixture(scope="module")
def source_crawl(site, tmp_path_factory) -> Path:
    """/analyze/source/ crawled in Chromium (3 pages: the sidebar page's script duplicates an id)."""
    return crawl_subtree(f"{site}/analyze/source/", tmp_path_factory.mktemp("source"))


@pytest.mark.browser
def test_markup_judges_the_html_the_server_sent_not_what_scripts_added(source_crawl, site):
    # measured on Python's docs: sidebar.js repeats an id on every page, and markup reported it everywhere
    archive, result = analyze_cli(source_crawl, "sent")
    assert violations(archive, site) == {SIDEBAR: [STRAY_END_TAG]}
    assert json.loads(result.stdout)["analyzers"]["markup"]["reads"] == "source"


@pytest.mark.browser
def test_markup_reads_the_rendered_dom_when_told(source_crawl, site):
    archive, result = analyze_cli(source_crawl, "dom", "--markup-reads", "rendered")
    assert violations(archive, site) == {SIDEBAR: [SCRIPT_DUPLICATE]}  # the browser dropped the stray </i>
    assert json.loads(result.stdout)["analyzers"]["markup"]["reads"] == "rendered"


@pytest.mark.browser
def test_a_page_too_large_to_parse_is_counted_and_stored_as_skipped(source_crawl, site):
    archive, result = analyze_cli(source_crawl, "small-limit", "--markup-max-size", "2000")
    with open_archive(archive) as reader:
        size = len(reader.source(f"{site}/analyze/source/long"))
    assert size > 2000
    assert violations(archive, site) == {
        SIDEBAR: [STRAY_END_TAG],
        "/analyze/source/long": [
            (
                "info",
                "skipped",
                "",
                f"parse-error, invalid-nesting not checked: {size:,} "
                "characters exceed max_size 2,000 (raise --markup-max-size; 0: no limit)",
                "",
            )
        ],
    }
    assert json.loads(result.stdout)["analyzers"]["markup"]["skipped"] == 1
    assert (
        "markup: 3 pages, 0 cached, 2 violations, 0 errors (0 timeouts), 1 skipped (see its 'skipped' findings)"
        in result.stderr.splitlines()
    )
