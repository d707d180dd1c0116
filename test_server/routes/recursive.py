"""/recursive/: three linked pages, page-b pointing at the external host."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import external, links, page

bp = Blueprint("recursive", __name__, url_prefix="/recursive")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Recursive Top", links(("page-a", "Page A"), ("page-b", "Page B"), ("page-c", "Page C")))


@bp.get("/page-a")
def page_a():  # type: ignore[no-untyped-def]
    return page("Page A", links(("page-b", "Page B"), ("page-c", "Page C")))


@bp.get("/page-b")
def page_b():  # type: ignore[no-untyped-def]
    return page("Page B", links(("page-c", "Page C"), (external("/external-like"), "External")))


@bp.get("/page-c")
def page_c():  # type: ignore[no-untyped-def]
    return page("Page C", "<p>No links here.</p>")
