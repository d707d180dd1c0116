"""/pagination/: ten numbered pages, each linking to the next; others are 404."""

from __future__ import annotations

from flask import Blueprint, abort

from test_server.routes._html import links, page

bp = Blueprint("pagination", __name__, url_prefix="/pagination")

LAST_PAGE = 10


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    return page("Pagination Index", links(("/pagination/page/1", "Page 1")))


@bp.get("/page/<number>")
def numbered(number: str):  # type: ignore[no-untyped-def]
    if not number.isdigit() or not 1 <= int(number) <= LAST_PAGE:
        abort(404)
    n = int(number)
    nav = links((f"/pagination/page/{n + 1}", "Next")) if n < LAST_PAGE else ""
    return page(f"Page {n}", f"<p>Page {n}</p>{nav}")


@bp.get("/linked/")
def linked_index():  # type: ignore[no-untyped-def]
    # /linked/item/1 and /2 make the crawler predict /3, which is missing; /2 then really links to /3
    return page(
        "Linked Index", links(("/pagination/linked/item/1", "One"), ("/pagination/linked/item/2", "Two"))
    )


@bp.get("/linked/item/<int:n>")
def linked_item(n: int):  # type: ignore[no-untyped-def]
    if n > 2:
        abort(404)
    extra = links(("/pagination/linked/item/3", "Three (broken)")) if n == 2 else ""
    return page(f"Item {n}", extra)
