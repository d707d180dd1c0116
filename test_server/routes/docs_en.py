"""/docs-en/: a small English documentation site, audited from its subfolder /docs-en/tutorial/.

What an auditor meets on real docs sites (Python's, PostgreSQL's): prose with `code` and `pre` in it, a
canonical written by the docs generator as a local ``file:///`` path, pages outside the audited subfolder
on the same host (one of them missing, answered as text/plain like ``http.server`` does), external links
to hosts that do not resolve and to ones that answer 404, a page with two H1s and one with none.
"""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import external, page

bp = Blueprint("docs_en", __name__, url_prefix="/docs-en")

CANONICAL = '<link rel="canonical" href="file:///usr/share/doc/python3/html/{path}">\n'
NAV = (
    '<nav><a href="/docs-en/tutorial/index.html">Tutorial</a> '
    '<a href="/docs-en/tutorial/intro.html">Introduction</a> '
    '<a href="/docs-en/tutorial/controlflow.html">Control flow</a> '
    '<a href="/docs-en/library/index.html">Library reference</a> '
    '<a href="/docs-en/glossary.html">Glossary</a></nav>\n'
)


def _doc(path: str, title: str, body: str, *, h1: str | None = None) -> Response:
    heading = f"<h1>{h1 or title}</h1>\n" if h1 != "" else ""
    return page(title, f"{NAV}<main>\n{heading}{body}\n</main>", head=CANONICAL.format(path=path))


@bp.get("/tutorial/index.html")
def tutorial() -> Response:
    return _doc(
        "tutorial/index.html",
        "The Python Tutorial",
        (
            "<p>Python is an easy to learn, powerful programming language. It has efficient high-level data "
            "structures and a simple but effective approach to object-oriented programming.</p>\n"
            "<p>Boolean expressions combine values with the <code>and</code> and <code>or</code> operators; "
            "<code>not</code> <code>not</code> negates twice.</p>\n"
            "<pre>if x and and_also:\n    pass\npass\n</pre>\n"
            '<p>See the <a href="/docs-en/whatsnew/changelog.html">changelog</a>, the '
            '<a href="/docs-en/tutorial/missing.html">appendix</a>, the '
            f'<a href="{external("/docs-en/ext-missing")}">old mirror</a> and the '
            '<a href="http://docs.unresolvable.invalid/">community wiki</a>.</p>'
        ),
    )


@bp.get("/tutorial/intro.html")
def intro() -> Response:
    return _doc(
        "tutorial/intro.html",
        "An Informal Introduction to Python",
        (
            "<p>In the following examples, input and output are distinguished by the presence or absence of "
            "prompts, and you must type everything after the prompt when the prompt appears, because lines "
            "that do not begin with a prompt are output from the interpreter, which means that you can copy "
            "them into your own session without changing anything and without worrying about what the "
            "interpreter will print back to you in the meantime, even when the example is very long indeed.</p>\n"
            "<p>This sentence repeats the the article by mistake.</p>\n"
            "<p>Type <kbd>Ctrl</kbd> <kbd>Ctrl</kbd> to interrupt; the variable <var>n</var> <var>n</var> is "
            "shown twice; <samp>ok ok</samp> is the output.</p>"
        ),
        h1="",
    )


@bp.get("/tutorial/controlflow.html")
def controlflow() -> Response:
    return _doc(
        "tutorial/controlflow.html",
        "More Control Flow Tools",
        (
            "<h1>Second top-level heading</h1>\n"
            "<p>Besides the <code>while</code> statement just introduced, Python uses a few more.</p>\n"
            "<script>var data = 'data data';</script>"
        ),
    )


@bp.get("/tutorial/missing.html")
def missing_in_scope() -> Response:
    return Response("File not found\n", status=404, content_type="text/plain")


@bp.get("/library/index.html")
def library() -> Response:
    return _doc("library/index.html", "The Python Standard Library", "<p>The library reference.</p>")


@bp.get("/glossary.html")
def glossary() -> Response:
    return _doc("glossary.html", "Glossary", "<p>Terms used in this documentation.</p>")


@bp.get("/whatsnew/changelog.html")
def changelog() -> Response:
    # like `python -m http.server`: a missing file answers a plain-text 404
    return Response("File not found\n", status=404, content_type="text/plain")


@bp.get("/ext-missing")
def ext_missing() -> Response:
    return Response("Gone\n", status=404, content_type="text/plain")
