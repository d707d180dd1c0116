"""Pages for the axe and lighthouse analyzers, each with exactly known accessibility findings.

Expected axe-core findings (axe 4.x, default rule set):
- ``/analyze/a11y/``, ``/clean``: none.
- ``/bad``: html-has-lang (serious), image-alt (critical), label (critical), link-name (serious) and
  color-contrast (serious, from the external stylesheet), one node each.
- ``/scripted``: image-alt (critical) on the one image the page's script adds on load; if scripts ran
  again on the archived DOM there would be two.
"""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("analyze_a11y", __name__, url_prefix="/analyze/a11y")

STYLE = '<link rel="stylesheet" href="/analyze/a11y/style.css">\n'
CSS = "body { color: #222; background: #fff; }\n.faint { color: #c8c8c8; background: #fff; }\n"
PIXEL = "<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40'><rect width='40' height='40'/></svg>"


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    nav = links(
        ("/analyze/a11y/bad", "A page with five problems"),
        ("/analyze/a11y/clean", "A clean page"),
        ("/analyze/a11y/scripted", "A page changed by its script"),
    )
    return page("Accessibility fixtures", f"<main><h1>Accessibility fixtures</h1>{nav}</main>", head=STYLE)


@bp.get("/bad")
def bad():  # type: ignore[no-untyped-def]
    # No lang on <html>, so the helper (which always sets one) is not used here.
    html = (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="UTF-8">\n<title>Five problems</title>\n'
        f"{STYLE}</head>\n<body>\n<main>\n<h1>Five problems</h1>\n"
        '<img src="/analyze/a11y/pixel.svg" width="40" height="40">\n'
        '<form action="/analyze/a11y/clean"><input type="text" name="q"></form>\n'
        '<p><a href="/analyze/a11y/clean"></a></p>\n'
        '<p class="faint">Hard to read</p>\n'
        "</main>\n</body>\n</html>\n"
    )
    return Response(html, content_type="text/html; charset=UTF-8")


@bp.get("/clean")
def clean():  # type: ignore[no-untyped-def]
    body = (
        "<main><h1>A clean page</h1>"
        '<img src="/analyze/a11y/pixel.svg" width="40" height="40" alt="A black square">'
        '<form action="/analyze/a11y/"><label for="q">Search</label><input id="q" type="text" name="q">'
        '<button type="submit">Go</button></form>'
        '<p><a href="/analyze/a11y/">Back to the fixtures</a></p></main>'
    )
    return page("A clean page", body, head=STYLE)


@bp.get("/scripted")
def scripted():  # type: ignore[no-untyped-def]
    script = (
        "<script>document.querySelector('main').insertAdjacentHTML('beforeend', "
        '\'<img src="/analyze/a11y/pixel.svg" width="40" height="40">\');</script>'
    )
    return page(
        "Changed by script",
        f"<main><h1>Changed by script</h1><p>One image follows.</p></main>{script}",
        head=STYLE,
    )


@bp.get("/style.css")
def style():  # type: ignore[no-untyped-def]
    return Response(CSS, content_type="text/css; charset=UTF-8")


@bp.get("/pixel.svg")
def pixel():  # type: ignore[no-untyped-def]
    return Response(PIXEL, content_type="image/svg+xml")
