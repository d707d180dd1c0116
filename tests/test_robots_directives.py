"""Robots directives parsed per user agent, and a title's width as a search result sets it."""

from __future__ import annotations

import pytest

from nitpicker_core.robots_directives import parse_directives, says_noindex
from nitpicker_core.serp import DESCRIPTION_PX, TITLE_PX, pixel_width


def test_meta_and_header_merge_per_bot_and_the_stricter_wins() -> None:
    found = parse_directives(
        "max-snippet:50, max-image-preview:large",
        "noindex, unavailable_after: 25 Jun 2026 15:00:00 PST, bingbot: nosnippet, max-snippet: 10",
        {"googlebot": "noarchive"},
    )
    assert found["*"] == {
        "index": False,
        "follow": True,
        "max-snippet": 50,
        "max-image-preview": "large",
        "unavailable_after": "25 Jun 2026 15:00:00 PST",
        "sources": ["meta", "header"],
    }
    # a named bot is told what every bot is told, and its own stricter snippet limit wins
    assert found["bingbot"]["nosnippet"] is True and found["bingbot"]["max-snippet"] == 10
    assert found["bingbot"]["index"] is False
    assert found["googlebot"]["noarchive"] is True and found["googlebot"]["max-snippet"] == 50


@pytest.mark.parametrize(
    ("header", "noindex"),
    [
        ("noindex", True),
        ("NONE", True),
        ("googlebot: noindex", False),  # Googlebot alone
        ("googlebot: nofollow, noindex", False),  # still Googlebot's: a bot speaks until the next is named
        ("noindex, googlebot: nofollow", True),
        ("all", False),
        ("", False),
        (None, False),
    ],
)
def test_noindex_for_every_bot(header: str | None, noindex: bool) -> None:
    assert says_noindex(header) is noindex


def test_unknown_words_stay_visible() -> None:
    assert parse_directives("noindx, max-snippet:lots")["*"]["unknown"] == ["noindx", "max-snippet:lots"]
    assert parse_directives("  ") == {}


def test_pixel_widths_follow_arial() -> None:
    # Arial: W is 1933/2048 em, i 455/2048: the same count of characters, four times the room
    assert (pixel_width("WWW", TITLE_PX), pixel_width("iii", TITLE_PX)) == (57, 13)
    assert pixel_width("  a\n b ", DESCRIPTION_PX) == pixel_width(
        "a b", DESCRIPTION_PX
    )  # white space as shown
    assert pixel_width("日本", TITLE_PX) == 40  # a full em each
    assert pixel_width(None, TITLE_PX) is None and pixel_width("", TITLE_PX) == 0
