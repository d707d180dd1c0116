"""Pages for what the archive keeps: hrefs as written with their source position, headings, the sent HTML."""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import page

bp = Blueprint("keeps_more", __name__)

# Served byte for byte: tests assert the line and column of each <a> in it (see DOC_POSITIONS).
DOC = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="UTF-8"><title>Keeps more</title></head>
<body>
<h1>Docs   home</h1>
<p>Read <a href="whatsnew/changelog.html#id1">the changelog</a>.</p>
  <a href="whatsnew/changelog.html#id1">again</a> <a href='guide.html'>guide</a>
<noscript><a href="guide.html">no script</a></noscript>
<h2>Second</h2><h3>Third <em>level</em></h3>
<svg width="10" height="10"><a href="guide.html"><text>svg</text></a></svg>
<p><a href="/keeps/noh1">no h1</a> <a href="/keeps/twoh1">two h1</a> <a href="/keeps/latin1">latin-1</a></p>
<script>
for (const [href, text] of [["made-by-script.html", "scripted"], ["guide.html", "scripted guide"]]) {
  const a = document.createElement("a"); a.href = href; a.textContent = text; document.body.appendChild(a);
}
document.querySelector("h3").insertAdjacentHTML("afterend", "<h4>Added by script</h4>");
</script>
</body>
</html>
"""
# (href as written, line, col) of the rendered anchors in DOM order; None where script made the anchor
DOC_POSITIONS = [
    ("whatsnew/changelog.html#id1", 6, 9),
    ("whatsnew/changelog.html#id1", 7, 3),
    ("guide.html", 7, 51),
    ("/keeps/noh1", 11, 4),
    ("/keeps/twoh1", 11, 36),
    ("/keeps/latin1", 11, 70),
    ("made-by-script.html", None, None),
    ("guide.html", None, None),
]
DOC_HEADINGS = [(1, "Docs home"), (2, "Second"), (3, "Third level"), (4, "Added by script")]

# Headings as documentation generators write them: a permalink anchor inside (Sphinx's "¶" after the text,
# a "#" before it as Hugo and GitHub write it, Docusaurus's zero-width space), and a fragment link of words.
SPHINX = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="UTF-8"><title>Installation &#8212; Docs</title></head>
<body>
<section id="installation">
<h1>Installation<a class="headerlink" href="#installation" title="Link to this heading">¶</a></h1>
<h2 id="pip"><a class="anchor" href="#pip" aria-hidden="true">#</a> With   pip</h2>
<h2>Upgrading<a href="#upgrading" class="hash-link" aria-label="Direct link to Upgrading">​</a></h2>
<h2>See <a href="#reference">the reference</a></h2>
</section>
</body>
</html>
"""
SPHINX_HEADINGS = [(1, "Installation"), (2, "With pip"), (2, "Upgrading"), (2, "See the reference")]

LATIN1 = (
    "<!DOCTYPE html>\n<html><head><title>Caf\xe9</title></head>\n<body><h1>Caf\xe9 cr\xe8me</h1>\n"
    '<a href="guide.html">guide</a></body></html>\n'
)


@bp.get("/keeps/")
def doc():  # type: ignore[no-untyped-def]
    return Response(DOC, content_type="text/html; charset=UTF-8")


@bp.get("/keeps/whatsnew/changelog.html")
def changelog():  # type: ignore[no-untyped-def]
    return page("Changelog", '<h1>Changelog</h1><h2 id="id1">1.0</h2>')


@bp.get("/keeps/guide.html")
def guide():  # type: ignore[no-untyped-def]
    return page("Guide", "<h1>Guide</h1>")


@bp.get("/keeps/made-by-script.html")
def scripted():  # type: ignore[no-untyped-def]
    return page("Scripted", "<h1>Made by script</h1>")


@bp.get("/keeps/noh1")
def no_h1():  # type: ignore[no-untyped-def]
    return page("No h1", "<h2>Only a second level</h2><p>text</p>")


@bp.get("/keeps/twoh1")
def two_h1():  # type: ignore[no-untyped-def]
    return page("Two h1", "<h1>First</h1><h1>Second</h1>")


@bp.get("/keeps/latin1")
def latin1():  # type: ignore[no-untyped-def]
    return Response(LATIN1.encode("latin-1"), content_type="text/html; charset=ISO-8859-1")


@bp.get("/keeps/big")
def big():  # type: ignore[no-untyped-def]
    return page("Big", "<h1>Big</h1>" + "<p>" + "x" * 5000 + "</p>" + '<a href="guide.html">guide</a>')


@bp.get("/keeps/sphinx.html")
def sphinx():  # type: ignore[no-untyped-def]
    return Response(SPHINX, content_type="text/html; charset=UTF-8")
