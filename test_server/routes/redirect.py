"""/redirect/: a 301 → 302 → 200 chain, and a redirect loop."""

from __future__ import annotations

from flask import Blueprint, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("redirect", __name__, url_prefix="/redirect")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Redirect Top", links(("/redirect/start", "Start"), ("/redirect/loop-a", "Loop")))


@bp.get("/start")
def start():  # type: ignore[no-untyped-def]
    return redirect("/redirect/middle", code=301)


@bp.get("/middle")
def middle():  # type: ignore[no-untyped-def]
    return redirect("/redirect/dest", code=302)


@bp.get("/dest")
def dest():  # type: ignore[no-untyped-def]
    return page("Redirect Destination", links(("/redirect/start", "Start again")))


@bp.get("/loop-a")
def loop_a():  # type: ignore[no-untyped-def]
    return redirect("/redirect/loop-b", code=302)


@bp.get("/loop-b")
def loop_b():  # type: ignore[no-untyped-def]
    return redirect("/redirect/loop-a", code=302)


@bp.get("/self")
def self_redirect():  # type: ignore[no-untyped-def]
    # Sites often bounce once to themselves to set a cookie; the second visit answers 200
    if request.cookies.get("seen") == "1":
        return page("Self Redirect Done")
    response = redirect("/redirect/self", code=302)
    response.set_cookie("seen", "1")
    return response
