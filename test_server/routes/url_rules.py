"""/url-rules/: paths with `//` inside, links to hosts once excluded by default, file-named start pages."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("url_rules", __name__, url_prefix="/url-rules")

WAYBACK = "/url-rules/web/20060524042422/https://www.python.org/windows/pythonwin/"


@bp.get("/wayback/")
def wayback():  # type: ignore[no-untyped-def]
    # as the Python docs link the Wayback Machine: a whole URL inside the path, its "//" included
    return page(
        "Wayback links",
        links(
            (WAYBACK, "PythonWin (archived)"), ("../web/2007/https://www.python.org/", "Relative, archived")
        ),
    )


# merge_slashes=False: Werkzeug would otherwise answer /a//b with a redirect to /a/b, hiding the defect
@bp.get("/web/<path:rest>", merge_slashes=False)
def archived(rest: str):  # type: ignore[no-untyped-def]
    if "://" not in rest:  # the collapsed URL (…/https:/www…) is another resource: on the real site, a 404
        return page("Not archived", status=404)
    return page(f"Archived {rest.split('/', 1)[1]}")


@bp.get("/social/")
def social():  # type: ignore[no-untyped-def]
    return page(
        "Social links",
        links(
            ("https://www.google.com/search?q=nitpicker", "Search"),
            ("https://twitter.com/intent/tweet?text=x", "Tweet"),
            ("/url-rules/docs/a.html", "Docs A"),
        ),
    )


@bp.get("/docs/index.html")
def docs_index():  # type: ignore[no-untyped-def]
    return page("Docs index", links(("a.html", "A"), ("sub/b.html", "B"), ("../elsewhere.html", "Elsewhere")))


@bp.get("/docs/a.html")
def docs_a():  # type: ignore[no-untyped-def]
    return page("Docs A")


@bp.get("/docs/sub/b.html")
def docs_b():  # type: ignore[no-untyped-def]
    return page("Docs B")


@bp.get("/elsewhere.html")
def elsewhere():  # type: ignore[no-untyped-def]
    return page("Elsewhere")


@bp.get("/narrow/start/")
def narrow_start():  # type: ignore[no-untyped-def]
    # one page inside the start directory, six beside it: a scope that leaves most of the site out
    outside = [(f"/url-rules/narrow/p{n}.html", f"P{n}") for n in range(1, 7)]
    return page("Narrow start", links(("in.html", "Inside"), *outside))


@bp.get("/narrow/start/in.html")
def narrow_in():  # type: ignore[no-untyped-def]
    return page("Inside")


@bp.get("/narrow/<any('p1.html', 'p2.html', 'p3.html', 'p4.html', 'p5.html', 'p6.html'):name>")
def narrow_outside(name: str):  # type: ignore[no-untyped-def]
    return page(f"Outside {name}")
