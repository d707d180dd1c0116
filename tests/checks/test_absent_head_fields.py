"""title-missing / description-missing tell a missing element from an empty one by reading the page's <head>."""

from __future__ import annotations

import lxml.etree
import lxml.html
import pytest

from nitpicker_core.html_facts import ABSENCE_ELEMENTS, absence


def _whole_page_lowered(html: str | None, field: str) -> str:
    """The rule as it was first written: the whole page lowercased to find its </head>."""
    if not html or not html.strip():
        return ""
    xpath, needle = ABSENCE_ELEMENTS[field]
    lowered = html.lower()
    end = lowered.find("</head>")
    head = html[: end + len("</head>")] if end >= 0 else html
    if needle not in lowered[: len(head)]:
        return "missing"
    try:
        doc = lxml.html.document_fromstring(head)
    except (ValueError, lxml.etree.ParserError):
        return ""
    return "empty" if doc.xpath(xpath) else "missing"


BODY = "<body>" + "<p>Straße ΣΑΣ İstanbul text</p>" * 5000 + "</body></html>"  # ~170 KB, not ASCII
PAGES = [
    None,
    "",
    " \n\t ",
    "<html><head><title></title></head>" + BODY,
    "<HTML><HEAD><TITLE>T</TITLE><META NAME=Description CONTENT=''></HEAD>" + BODY,
    "<html><head><meta name=description content=x>" + BODY,  # no </head>: the whole page is read
    "<html><body><svg><title>icon</title></svg>" + BODY,  # a title in the body only
    # the </head> beyond the first prefixes, and across their ends
    "<html><head>" + "<!-- İİ -->" * 3000 + "<title>x</title></head>" + BODY,
    "<html><head>" + " " * (16384 - 19) + "<title>x</title></head>" + BODY,
    "<html><head>" + " " * (16384 - 21) + "<title>x</title></HEAD>" + BODY,
    "<html><head>" + "İ" * 70000 + "<meta name=description content=''></head>" + BODY,
    "<html><head><title>x</title><meta name=description></head><body>" + "Σ" * 20000 + "</body></html>",
]


@pytest.mark.parametrize("field", ["title", "description"])
@pytest.mark.parametrize("index", range(len(PAGES)))
def test_the_head_prefix_gives_what_the_whole_page_gave(index: int, field: str) -> None:
    html = PAGES[index]
    assert absence(html, field) == _whole_page_lowered(html, field)


def test_missing_and_empty_are_told_apart() -> None:
    assert absence("<html><head><title></title></head>" + BODY, "title") == "empty"
    assert absence("<html><head></head>" + BODY, "title") == "missing"
    assert absence("<html><head><meta name=DESCRIPTION></head>" + BODY, "description") == "empty"
    assert absence("<html><head></head>" + BODY, "description") == "missing"
