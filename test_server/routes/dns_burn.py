"""/dns-burn/: two sections linking to URLs of one host no resolver knows (the DNS burn list across runs)."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("dns_burn", __name__)

GONE = "http://gone.dns-burn.invalid"


@bp.get("/dns-burn/first/")
def first():  # type: ignore[no-untyped-def]
    return page("First Section", links((f"{GONE}/one", "Gone one")))


@bp.get("/dns-burn/second/")
def second():  # type: ignore[no-untyped-def]
    return page("Second Section", links((f"{GONE}/two", "Gone two")))
