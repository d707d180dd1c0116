"""/options/: a query-string link, an external page and JSON on both hosts."""

from __future__ import annotations

from flask import Blueprint, jsonify

from test_server.routes._html import external, links, page

bp = Blueprint("options", __name__, url_prefix="/options")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Options Top",
        links(
            ("/options/page-a?tab=1", "Page A tab 1"),
            (external("/options/external"), "External"),
            ("/options/data.json", "Data"),
            (external("/options/data.json"), "External data"),
        ),
    )


@bp.get("/page-a")
def page_a():  # type: ignore[no-untyped-def]
    return page("Options Page A")


@bp.get("/external")
def external_page():  # type: ignore[no-untyped-def]
    return page("Options External")


@bp.get("/data.json")
def data():  # type: ignore[no-untyped-def]
    return jsonify({"test": True})
