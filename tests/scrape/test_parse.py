"""The lxml reader of `--render never`: anchor positions as html.parser finds them, bad and odd input."""

from __future__ import annotations

import copy

from nitpicker_scrape import parse, source

from nitpicker_core import ScrapeResult

URL = "http://site.test/dir/page"
ODD = b"""<!doctype html>\r\n<html><head><title>Odd</title>
<noscript><a href="/in-noscript">n</a></noscript></head><body>
<p><a href="mailto:x@y.test">mail</a> <a href="one">1</a><A HREF="two">2</A></p>
<a
   class="multi"
   href="three">3</a>
<svg><a href="/svg">s</a></svg><area href="four" alt="Four"><a href="#top">top</a>
<!-- <a href="commented"> --><a href="five">5</a>
</body></html>"""


def _read(body: bytes, **headers: str) -> ScrapeResult:
    return parse.parse(ScrapeResult(url=URL, headers=headers), body, {"image": False})


def test_anchor_positions_are_those_html_parser_finds():
    read = _read(ODD)
    assert [a.raw_href for a in read.anchors] == ["one", "two", "three", "four", "#top", "five"]
    expected = copy.deepcopy(read.anchors)
    for anchor in expected:
        anchor.line = anchor.col = None
    source.place_anchors(read.source, expected)
    assert [(a.line, a.col) for a in read.anchors] == [(a.line, a.col) for a in expected]
    assert [(a.line, a.col) for a in read.anchors][:3] == [(4, 39), (4, 58), (5, 1)]


def test_charset_from_the_header_and_from_meta():
    latin = "<html><head><title>caf\u00e9</title></head><body>caf\u00e9 cr\u00e8me</body></html>".encode(
        "latin-1"
    )
    assert _read(latin, **{"content-type": "text/html; charset=ISO-8859-1"}).metadata["title"] == "caf\u00e9"
    declared = b'<html><head><meta charset="windows-1252"><title>caf\xe9</title></head></html>'
    read = _read(declared)
    assert read.metadata["title"] == "caf\u00e9" and read.metadata["charset"] == "windows-1252"


def test_a_declared_charset_wins_over_bytes_that_would_read_as_utf8():
    """The bytes as sent are decoded as a browser decodes them: UTF-8 bytes the header labels windows-1252
    show as mojibake ("CafÃ©") in Chromium, the header winning over the meta, and so here (issue 32)."""
    utf8 = '<html><head><meta charset="UTF-8"><title>Caf\u00e9</title></head><body>x</body></html>'.encode()
    assert (
        _read(utf8, **{"content-type": "text/html; charset=windows-1252"}).metadata["title"]
        == "Caf\u00c3\u00a9"
    )
    # ISO-8859-1 is windows-1252 to a browser (the WHATWG Encoding Standard): 0x80 is the euro sign
    assert (
        _read(b"<title>\x80</title>", **{"content-type": "text/html; charset=ISO-8859-1"}).metadata["title"]
        == "\u20ac"
    )
    # the meta decides where the header says nothing; nothing declared, UTF-8 is read as UTF-8
    assert _read(utf8).metadata["title"] == "Caf\u00e9"
    assert _read(b"<title>Caf\xc3\xa9</title>").metadata["title"] == "Caf\u00e9"
    # a byte order mark wins over both, and is not part of the text
    bom = b"\xef\xbb\xbf<title>Caf\xc3\xa9</title>"
    read = _read(bom, **{"content-type": "text/html; charset=windows-1252"})
    assert read.metadata["title"] == "Caf\u00e9" and not read.source.startswith("\ufeff")


def test_what_is_not_html_is_recorded_not_raised():
    read = _read(b"")
    assert read.anchors == [] and read.metadata["title"] == "" and read.errors[0].step == "parse"
    binary = _read(bytes(range(256)) * 4)
    assert binary.anchors == [] and binary.headings == []


def test_headings_leave_their_permalink_anchor_out_as_in_the_rendered_page():
    from nitpicker_core import js_dependence, version_record
    from test_server.routes.keeps_more import SPHINX, SPHINX_HEADINGS

    read = _read(SPHINX.encode())
    assert [(h.level, h.text) for h in read.headings] == SPHINX_HEADINGS  # test_scrape.py: the same rendered
    # the H1 of the raw-vs-rendered record and of the JavaScript comparison: the same rule
    assert version_record(URL, SPHINX)["h1s"] == ["Installation"]
    permalink = '<a class="headerlink" href="#installation" title="Link to this heading">\u00b6</a>'
    assert "h1" not in js_dependence(URL, SPHINX.replace(permalink, ""), SPHINX)["changed"]


def test_anchor_text_is_every_descendant_text_and_svg_links_are_none():
    read = _read(
        b'<html><body><a href="one">one <!-- a comment --><b>bold<!--x--></b> <i><s>deep</s></i>\n tail</a>'
        b'<svg><g><a href="drawn">in svg</a></g></svg><!-- <a href="hidden"> -->'
        b'<a href="alt"><img src="i.png" alt=" Alt "></a><a href="title" title="Title"></a>'
        b'<a href="label" aria-label=" Aria  label ">text</a><a href="empty-label" aria-label="">kept</a>'
        b"</body></html>"
    )
    assert [(a.raw_href, a.text) for a in read.anchors] == [
        ("one", "one bold deep tail"),
        ("alt", "Alt"),
        ("title", "Title"),
        ("label", "Aria label"),
        ("empty-label", "kept"),
    ]
    expected = copy.deepcopy(read.anchors)
    for anchor in expected:
        anchor.line = anchor.col = None
    source.place_anchors(read.source, expected)  # html.parser's places: past the SVG and the comment
    assert [(a.line, a.col) for a in read.anchors] == [(a.line, a.col) for a in expected]
    assert [(a.line, a.col) for a in read.anchors][:2] == [(1, 13), (2, 80)]


def test_words_of_text_a_script_or_noscript_split_are_one():
    # the text on both sides of a script (or of an inert noscript) is one piece of text, as itertext reads
    # it once they are stripped: "fore" and "aft" make one word, "sep arate" two
    read = _read(
        b"<html><body><p>fore<script>var x = 1</script>aft <b>sep</b> arate<style>p {}</style>"
        b"<noscript>no</noscript>more</p></body></html>"
    )
    assert read.word_count == 3


def test_resources_are_listed_kind_by_kind_each_in_document_order():
    read = _read(
        b'<html><head><link rel="icon" href="/fav.ico"><script src="/late.js"></script></head><body>'
        b'<img src="/a.png"><video src="/v.mp4" poster="/p.jpg"><source src="/s.webm"></video>'
        b'<link rel="Stylesheet" href="/s.css#x"><link rel="next" href="/next">'
        b'<input type="ImAgE" src="/in.png"><input type="text" src="/no.png"><object data="/o.pdf"></object>'
        b'<img src="/a.png"></body></html>'
    )
    assert [r.removeprefix("http://site.test") for r in read.resources] == [
        "/fav.ico", "/s.css", "/late.js", "/a.png", "/o.pdf", "/v.mp4", "/s.webm", "/p.jpg", "/in.png"
    ]  # fmt: skip


def test_tag_ids_only_where_they_count():
    from nitpicker_scrape import tags

    def ids(html: str, scripts: str) -> list[str]:
        return [t.external_id for t in tags.detect(html, {"scripts": scripts}, {})]

    assert ids("<p>GTM-ABCD1 G-ABCDEF12 UA-1234-5</p>", "") == ["GTM-ABCD1", "UA-1234-5"]
    assert ids("<p></p>", "gtag('G-ABCDEF12'); ga('UA-1234-5')") == ["G-ABCDEF12", "UA-1234-5"]
    assert ids("A-1234-5 in the page", "... U") == ["UA-1234-5"]  # an id where scripts and page meet
    assert ids("nothing here", "nor here") == []


def test_what_a_template_or_noscript_holds_is_read_as_nothing():
    """Every kind of element the reader looks at (found in one walk over the page) is left out where a browser
    keeps it out of the document: in a template, or a noscript (scripting on)."""
    inert = (
        b'<base href="/elsewhere/"><meta name="description" content="no"><link rel="canonical" href="/no">'
        b'<title>No</title><script type="application/ld+json">{"@type": "No"}</script><h1>No</h1>'
        b'<a href="no">no</a><img src="no.png"><iframe src="no.html"></iframe><video src="no.mp4"></video>'
    )
    read = _read(
        b"<html><head><title>Yes</title></head><body><template>"
        + inert
        + b"</template><noscript>"
        + inert
        + b'</noscript><h2>Yes</h2><a href="yes">yes</a><iframe src="yes.html"></iframe></body></html>'
    )
    assert read.metadata["title"] == "Yes" and read.metadata["description"] == ""
    assert read.metadata["canonical"] is None and read.metadata["base_href"] == ""
    assert [(h.level, h.text) for h in read.headings] == [(2, "Yes")]
    assert [a.href for a in read.anchors] == ["http://site.test/dir/yes"]
    assert read.jsonld == [] and read.resources == ["http://site.test/dir/yes.html"]
    assert read.word_count == 2


def test_words_are_counted_as_the_word_pattern_finds_them():
    text = "don't e.g. snake_case 3.14 ’quoted’ end. (paren) a.b.c x..y _ -- caf\u00e9 \u4e2d\u6587 "
    read = _read(f"<html><body><p>{text}</p><p>{text}</p></body></html>".encode())
    assert read.word_count == 2 * len(parse._WORD.findall(text)) == 2 * 13
