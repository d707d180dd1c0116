"""/reached/: one destination reached three ways: a 301 → 302 chain, a script redirect and a plain link."""

from __future__ import annotations

from flask import Blueprint, redirect

from test_server.routes._html import links, page

bp = Blueprint("reached", __name__, url_prefix="/reached")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Reached Top",
        links(
            ("/reached/chain-start", "Chain"), ("/reached/scripted", "Script"), ("/reached/final/", "Final")
        ),
    )


@bp.get("/chain-start")
def chain_start():  # type: ignore[no-untyped-def]
    return redirect("/reached/chain-middle", code=301)


@bp.get("/chain-middle")
def chain_middle():  # type: ignore[no-untyped-def]
    return redirect("/reached/final/", code=302)


@bp.get("/scripted")
def scripted():  # type: ignore[no-untyped-def]
    script = "<script>addEventListener('load', () => { location.href = '/reached/final/'; });</script>"
    return page("Moving On", head=script)


@bp.get("/final/")
def final():  # type: ignore[no-untyped-def]
    return page("Reached Final", links(("/reached/", "Top")))
