"""Findings traced to a line: the element scan, the locators of the crawl checks, and issue-urls' rows on a built
archive (which HTML a line is in, a missing element's container, a header's canonical without one, the base
for a fixed finding, only the rows' pages read). Real crawls of the test site: tests/checks_crawl/."""

from __future__ import annotations

from pathlib import Path

import pytest
from nitpicker_core_queries import element_rows

from nitpicker_core import heading_text, query_registry, run_query, scan_elements
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry
from nitpicker_testing.archives import archive_builder, page

SITE = "https://lines.test"
LONG = "A title far longer than any search result shows, so that it is cut off"
# The HTML as sent, and as a browser serialises it again: the white space before <head> gone, the same tags.
SENT = (
    "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n<title>{title}</title>\n"
    "<link rel='canonical' href='{canonical}'>\n</head>\n<body>\n<h1>One</h1>\n{body}\n</body>\n</html>\n"
)


def _rendered(sent: str) -> str:
    return sent.replace("<!DOCTYPE html>\n<html lang='en'>\n<head>", "<!DOCTYPE html><html lang='en'><head>")


def test_the_scan_finds_start_tags_where_the_tokenizer_does() -> None:
    doc = (
        '<!DOCTYPE html>\r\n<html lang="en">\r<head>\n<!-- <title>commented</title> -->\n'
        '<script>var t = "<title>in a script</title>";</script><title>A &amp; B</title>'
        '<meta NAME="Description" content="x">\n<svg><title>icon</title></svg>\n'
        '<noscript><img src="pixel.gif"></noscript><link rel="Canonical  alternate" href=/a>\n'
        "</head><body>\n  <h1 class=x>One</h1><h1>Two</h1><template><h1>inert</h1></template>\n</body></html>"
    )
    page = scan_elements(doc)
    where = [(t.name, t.line, t.col) for t in page.tags]
    assert where == [
        ("html", 2, 1),
        ("head", 3, 1),  # a lone CR ends a line too
        ("script", 5, 1),
        ("title", 5, 55),
        ("meta", 5, 79),
        ("link", 7, 43),
        ("body", 8, 8),
        ("h1", 9, 3),
        ("h1", 9, 23),
    ]
    assert page.first("title")[0].text == "A &amp; B"  # raw, as written
    assert page.meta("description")[0].get("content") == "x"
    # an <svg> in <head> ends it, as the HTML parser has it: the canonical after it is in the body
    assert [t.in_head for t in page.links("canonical")] == [False]
    assert page.links("alternate") == page.links("canonical")
    assert page.pointing_to(page.links("canonical"), "https://s.test/dir/p", "https://s.test/a")


def test_a_head_scan_stops_at_the_first_element_of_the_body() -> None:
    doc = SENT.format(title="T", canonical="/t", body="<img src=a.png><link rel=canonical href=/b>")
    head = scan_elements(doc, head_only=True)
    assert [t.name for t in head.tags] == ["html", "head", "meta", "title", "link", "body"]
    assert not head.complete and head.first("body")[0].line == 8
    whole = scan_elements(doc)
    assert whole.complete and [t.name for t in whole.tags][-2:] == ["img", "link"]
    # no <body> written: the first body element ends the head
    assert [t.name for t in scan_elements("<title>x</title><h1>y</h1><img>", head_only=True).tags] == [
        "title",
        "h1",
    ]


def test_the_scan_stays_linear_on_a_large_page() -> None:
    import time

    # ~2.5 MB, 30,000 anchors and paragraphs the scan steps over at the regular expression's pace
    body = "".join(f'<div class="c{i}"><p>text <a href="/p{i}">link</a></p></div>\n' for i in range(30_000))
    doc = SENT.format(title="Big", canonical="/big", body=body)
    started = time.perf_counter()
    page = scan_elements(doc)
    spent = time.perf_counter() - started
    assert [t.name for t in page.tags] == ["html", "head", "meta", "title", "link", "body", "h1"]
    assert page.first("h1")[0].line == 9
    assert spent < 1.0, spent  # tens of ms; a scan going back over the text for each tag takes minutes


@pytest.mark.parametrize(
    ("text", "links", "expected"),
    [
        ("Installation¶", ["¶"], "Installation"),  # Sphinx, MkDocs
        ("# Getting started", ["#"], "Getting started"),  # Hugo, GitHub's markdown: before the text
        ("Overview\u200b", ["\u200b"], "Overview"),  # Docusaurus: a zero-width space
        ("Icons only", [""], "Icons only"),  # an icon link: no text to leave out
        ("See the API", ["the API"], "See the API"),  # a link of words is part of the heading
        ("C#", ["C#"], "C#"),  # words, even with a symbol
        ("¶", ["¶"], "¶"),  # a heading of nothing else keeps it
    ],
)
def test_a_heading_leaves_out_its_permalink(text: str, links: list[str], expected: str) -> None:
    assert heading_text(text, links) == expected


def _crawl_checks_with_lines() -> dict[str, bool]:
    registry = check_registry(make_plugin_manager())
    checks = [registry[n] for n in registry.names() if registry.plugin_of(n) == "checks"]
    return {c.id: c.element is not None for c in checks}


def test_the_seo_families_all_locate_their_element() -> None:
    located = _crawl_checks_with_lines()
    families = ("title-", "description-", "h1-", "canonical-", "hreflang-", "pagination-")
    seo = {c for c in located if c.startswith(families)}
    # the canonical nobody links to is a finding on the canonical's URL, not on a page that writes it
    assert {c for c in seo if not located[c]} == {"canonical-not-linked"}
    for check in ("nofollow-page", "robots-directives-conflict", "noindex-linked", "js-noindex-mismatch"):
        assert located[check]
    for check in ("broken-link", "missing-content-security-policy", "redirect-chain", "sitemap-orphan"):
        assert not located[check]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lines") / "lines.nitpicker"
    many = [f"{SITE}/many/{i}" for i in range(40)]
    for title in (LONG, "Short enough"):  # commit 2 shortens /long's title: a fixed finding there
        with archive_builder(path, roots=[SITE + "/"]) as build:
            links = ["/long", "/untitled", "/outside", "/header", "/same", *many]
            build.page(page(SITE + "/", title="Home", links=links))
            sent = SENT.format(title=title, canonical="/long", body="<p>long</p>")
            build.page(page(SITE + "/long", _rendered(sent), title=title, source=sent))
            sent = SENT.format(title="", canonical="/untitled", body="").replace("<title></title>\n", "")
            build.page(page(SITE + "/untitled", _rendered(sent), source=sent))
            # a canonical written in the body of the HTML as sent; the browser's serialisation moves nothing
            sent = SENT.format(
                title="Outside", canonical="/outside", body="<link rel='canonical' href='/elsewhere'>"
            )
            build.page(page(SITE + "/outside", _rendered(sent), title="Outside", source=sent))
            # the canonical only in a Link header: a self canonical without a line
            sent = SENT.format(title="Header", canonical="", body="").replace(
                "<link rel='canonical' href=''>\n", ""
            )
            link = f'<{SITE}/header>; rel="canonical"'
            build.page(
                page(SITE + "/header", _rendered(sent), title="Header", source=sent, headers={"Link": link})
            )
            # a page read without a browser: one HTML, the same bytes stored as both
            sent = SENT.format(title=LONG, canonical="/same", body="")
            build.page(page(SITE + "/same", sent, title=LONG, source=sent))
            for url in many:
                sent = SENT.format(title=LONG + url[-2:], canonical=url, body="")
                build.page(page(url, sent, title=LONG + url[-2:], source=sent))
    return path


def _rows(archive: Path, check: str, **params: object) -> dict[str, dict]:
    with open_archive(archive) as reader:
        found = run_query(
            query_registry(make_plugin_manager()), reader, "issue-urls", {"check": check, **params}
        )
    return {item["url"].removeprefix(SITE): item for item in found["items"]}


def _where(item: dict) -> tuple:
    return item["line"], item["col"], item["position"], item["html"], item["element"]


def test_a_rendered_finding_is_located_in_the_rendered_html(archive: Path) -> None:
    rows = _rows(archive, "title-too-long", state="all", limit=200)
    # the rendered HTML lost two lines before <head>; /same was never rendered: one HTML, as sent
    assert _where(rows["/long"]) == (3, 1, "3:1", "rendered", "title")
    assert rows["/long"]["state"] == "fixed"  # read on the base, where the long title was
    assert _where(rows["/same"]) == (5, 1, "5:1", "sent", "title")


def test_a_missing_element_is_located_where_it_belongs(archive: Path) -> None:
    rows = _rows(archive, "title-missing")
    assert rows["/untitled"]["detail"] == "missing"
    assert _where(rows["/untitled"]) == (1, 32, "1:32", "rendered", "head")


def test_a_finding_made_from_the_html_as_sent_is_located_there(archive: Path) -> None:
    rows = _rows(archive, "canonical-outside-head")
    assert rows["/outside"]["detail"] == "/elsewhere"
    assert _where(rows["/outside"]) == (10, 1, "10:1", "sent", "link")
    conflict = _rows(archive, "canonical-conflict")["/outside"]
    assert conflict["html"] == "rendered" and conflict["position"] == "4:1, 8:1"


def test_an_element_declared_in_a_header_has_no_line(archive: Path) -> None:
    rows = _rows(archive, "canonical-self")
    assert _where(rows["/header"]) == (None,) * 5
    assert _where(rows["/long"])[:2] == (4, 1)  # the page's own canonical, in its rendered HTML


def test_the_issues_row_says_which_lists_have_lines(archive: Path) -> None:
    with open_archive(archive) as reader:
        answer = run_query(query_registry(make_plugin_manager()), reader, "issues", {})
    rows = {row["id"]: row for row in answer["items"]}
    assert rows["title-too-long"]["located"] and not rows["title-too-long"]["link"]
    assert not rows["no-internal-outlinks"]["located"]


def test_only_the_pages_of_the_rows_asked_for_are_read(archive: Path) -> None:
    element_rows._SCANS.clear()
    rows = _rows(archive, "title-too-long", limit=5)
    assert len(rows) == 5 and all(item["line"] == 5 for item in rows.values())
    assert len(element_rows._SCANS) == 5  # of the 41 pages with a long title
    again = _rows(archive, "title-too-long", limit=5)
    assert again == rows and len(element_rows._SCANS) == 5  # scanned once


def test_an_image_is_found_by_its_resolved_source_or_by_the_markup_an_analyzer_quoted() -> None:
    from nitpicker_checks.where import LOCATORS

    from nitpicker_core import Finding

    page = scan_elements(
        SENT.format(title="T", canonical="/t", body='<img src="a.png">\n<img src="/img/b.png">')
    )
    crawl = LOCATORS["image-alt-missing"](Finding(SITE + "/dir/p", SITE + "/img/b.png"))
    assert crawl is not None and [(t.line, t.col) for t in crawl.find(page)] == [(11, 1)]
    # markup's row of the merged image-alt defect: its detail is the element as written
    quoted = LOCATORS["image-alt-missing"](Finding(SITE + "/dir/p", '<img src="a.png" >'))
    assert quoted is not None and [(t.line, t.col) for t in quoted.find(page)] == [(10, 1)]
    assert LOCATORS["image-alt-missing"](Finding(SITE + "/dir/p", "<p>no image</p>")) is None
