"""The top page and /about, plus /external-like (the page the external host points at)."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("basic", __name__)

GIF_1X1 = "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
SVG_LAZY = (
    "data:image/svg+xml;charset=utf-8,"
    "%3Csvg xmlns='http://www.w3.org/2000/svg' width='200' height='150'%3E"
    "%3Crect width='200' height='150' fill='%23ccc'/%3E%3C/svg%3E"
)


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    body = (
        "<h1>Test Top</h1>"
        + links(("/about", "About"))
        + f'<img src="{GIF_1X1}" alt="test image" width="100" height="100">'
        + '<div style="height: 800px">spacer</div>'
        + f'<img src="{SVG_LAZY}" alt="lazy image" width="200" height="150" loading="lazy">'
    )
    return page("Test Top", body)


@bp.get("/about")
def about():  # type: ignore[no-untyped-def]
    return page("About", "<h1>About</h1>" + links(("/", "Home")))


@bp.get("/external-like")
def external_like():  # type: ignore[no-untyped-def]
    return page("External Page", "<h1>External Page</h1>")
