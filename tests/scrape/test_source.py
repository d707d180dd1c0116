"""Placing rendered anchors in the HTML the server sent, and decoding that HTML (no browser)."""

from __future__ import annotations

from nitpicker_scrape.source import decode, place_anchors

from nitpicker_core import Anchor


def _place(source: str, *raw: str) -> list[tuple[int | None, int | None]]:
    anchors = [Anchor(href="http://x/", raw_href=r) for r in raw]
    place_anchors(source, anchors)
    return [(a.line, a.col) for a in anchors]


def test_nth_rendered_anchor_is_nth_written_one():
    src = '<p><a href="a">1</a>\n<A HREF="b">2</A> <a href="a">3</a></p>'
    assert _place(src, "a", "b", "a", "a") == [(1, 4), (2, 1), (2, 19), (None, None)]


def test_entities_and_newlines_are_read_as_the_browser_reads_them():
    src = '\r\n<a href="?a=1&amp;b=2">x</a>\r<area href="m" alt="">'
    assert _place(src, "?a=1&b=2", "m") == [(2, 1), (3, 1)]


def test_anchors_the_browser_never_sees_take_no_place():
    src = (
        '<noscript><a href="a">n</a></noscript><template><a href="a">t</a></template>'
        '<svg><a href="a"></a></svg><textarea><a href="a"></textarea><svg/><a href="a">real</a>'
    )
    assert _place(src, "a") == [(1, 143)]


def test_empty_href_and_unknown_raw():
    assert _place('<a href>x</a><a href="">y</a>', "", "") == [(1, 1), (1, 14)]
    anchors = [Anchor(href="http://x/")]  # raw href unknown (older extract): nothing to match on
    place_anchors('<a href="http://x/">x</a>', anchors)
    assert anchors[0].line is None


def test_decode_follows_the_browser_encoding():
    assert decode("caf\xe9".encode("cp1252"), "windows-1252") == "caf\xe9"
    assert decode("\ufeffh\xe9".encode(), "UTF-8") == "h\xe9"
    assert decode(b"\xff ok", "no-such-encoding") == "\ufffd ok"
    assert decode("h\xe9".encode(), "windows-1252") == "h\xe9"  # already re-encoded by the browser
