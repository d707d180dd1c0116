"""The example's query, sheet and viewer page over an archive built from plain data (no browser)."""

from __future__ import annotations

import pytest

from nitpicker_core import Cell, UsageError

SITE = "http://site.test"


@pytest.fixture
def analyzed(nitpicker_archive, nitpicker_analyze_archive):
    archive = nitpicker_archive(
        [
            {
                "url": SITE + "/",
                "title": "Home",
                "links": ["/a", "/b"],
                "html": "<html><body><p>one two three four five six seven eight nine ten eleven</p></body></html>",
            },
            {"url": SITE + "/a", "html": "<html><body><p>alpha beta</p></body></html>"},
            {"url": SITE + "/b", "html": "<html><body></body></html>"},
        ]
    )
    summary = nitpicker_analyze_archive(archive, "word-count", "long-url")
    assert summary["errors"] == {"word-count": 0, "long-url": 0}
    return archive


def test_the_query_filters_by_words(nitpicker_query, analyzed):
    assert nitpicker_query(analyzed, "word-counts") == {
        "total": 3,
        "items": [
            {"url": SITE + "/", "words": 11},
            {"url": SITE + "/a", "words": 2},
            {"url": SITE + "/b", "words": 0},
        ],
    }
    assert nitpicker_query(analyzed, "word-counts", min_words="2")["total"] == 2
    with pytest.raises(UsageError, match="parameter 'min_words' must be at least 0"):
        nitpicker_query(analyzed, "word-counts", min_words=-1)


def test_the_sheet_lists_every_page(nitpicker_sheet, analyzed):
    columns, rows = nitpicker_sheet(analyzed, "Word Counts")
    assert columns == ("URL", "Words")
    assert rows == [[SITE + "/", 11], [SITE + "/a", 2], [SITE + "/b", 0]]
    assert not any(isinstance(value, Cell) for row in rows for value in row)


def test_the_report_section_lists_the_wordiest_pages(nitpicker_pm, analyzed):
    from nitpicker_core import ReportContext
    from nitpicker_core.archive import open_archive

    with open_archive(analyzed) as reader:
        report = ReportContext(nitpicker_pm, reader, reader.resolve(None))
        section = next(s for s in report.sections() if s.name == "word-counts")
        html = section.render(report, "ja")
    assert section.title_in("ja") == "単語数" and section.title_in("en") == "Word counts"
    assert f"<tr><td>{SITE}/</td><td>11</td></tr><tr><td>{SITE}/a</td><td>2</td></tr>" in html


def test_the_viewer_page_and_its_menu_link(nitpicker_viewer, analyzed):
    client = nitpicker_viewer(analyzed)
    page = client.get("/word-counts")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "<caption>3 pages</caption>" in text and f'<td class="url">{SITE}/a</td><td>2</td>' in text
    home = client.get("/").get_data(as_text=True)
    assert '<a href="/word-counts">Word counts</a>' in home
