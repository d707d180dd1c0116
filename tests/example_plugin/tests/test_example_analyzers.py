"""The example's analyzers and crawl filter, tested with nitpicker's fixtures (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nitpicker_core import CrawlContext, UsageError, Violation

THIN = "<html><body><h1>Hello</h1><p>Three short words.</p></body></html>"
LONG = "<html><body>" + "<p>word</p>" * 12 + "</body></html>"


def test_a_thin_page_gets_a_warning_and_its_count(nitpicker_analyze):
    result = nitpicker_analyze("word-count", THIN, url="http://site.test/thin")
    assert result.cells == {"words": 4}
    assert result.violations == [
        Violation(
            "thin-content",
            "only 4 words (minimum 10)",
            "warning",
            url="http://site.test/thin",
            analyzer="word-count",
        )
    ]
    assert result.errors == [] and result.summary["pages"] == 1


def test_the_setting_changes_the_minimum(nitpicker_analyze):
    assert nitpicker_analyze("word-count", LONG).rules == []
    assert nitpicker_analyze("word-count", LONG, settings={"min_words": 13}).rules == ["thin-content"]


def test_a_bad_setting_is_the_cli_error(nitpicker_analyze):
    with pytest.raises(UsageError, match="min_words"):
        nitpicker_analyze("word-count", THIN, settings={"min_words": "many"})


def test_the_per_url_check_notes_long_urls(nitpicker_analyze):
    url = "http://site.test/" + "a" * 100
    result = nitpicker_analyze("long-url", THIN, url=url)
    assert result.cells == {"length": len(url)} and result.notes == {"length": "over 80"}
    assert result.rules == ["long-url"]
    assert nitpicker_analyze("long-url", THIN, url="http://site.test/short").rules == []


# parametrizing nitpicker_settings replaces the fixture: the plugin manager is configured with each table
@pytest.mark.parametrize(
    "nitpicker_settings, reason",
    [
        ({}, None),
        ({"word-count": {"skip_below": 5}}, "only 4 words (word-count skip_below 5)"),
        ({"word-count": {"skip_below": 4}}, None),
    ],
)
def test_the_crawl_filter_skips_thin_pages_when_asked(nitpicker_pm, reason):
    from nitpicker_testing.archives import page

    crawl = CrawlContext(output=Path("site.nitpicker"), roots=["http://site.test/"])
    result = page("http://site.test/thin", THIN)
    assert nitpicker_pm.hook.crawl_page_filter(url=result.url, result=result, crawl=crawl) == reason
