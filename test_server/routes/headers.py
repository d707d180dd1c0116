"""/headers/: pages that show which request headers and credentials arrived (for --header and basic auth)."""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, request

from test_server.routes._html import external, links, page

bp = Blueprint("headers", __name__)


def _seen() -> str:
    # a digest, not the value: the page itself must not carry the secret into the archive
    value = request.headers.get("X-Audit")
    return hashlib.sha256(value.encode()).hexdigest()[:12] if value else "none"


@bp.get("/headers/")
def top():  # type: ignore[no-untyped-def]
    return page(
        f"Header {_seen()}", links(("/headers/inner", "Inner"), (external("/headers/outside"), "Outside"))
    )


@bp.get("/headers/inner")
@bp.get("/headers/outside")
def echo():  # type: ignore[no-untyped-def]
    return page(f"Header {_seen()}")


@bp.get("/auth/")
@bp.get("/auth/inner")
def basic_auth():  # type: ignore[no-untyped-def]
    auth = request.authorization
    if auth is None or (auth.username, auth.password) != ("user", "secret"):
        return Response("auth required", 401, {"WWW-Authenticate": 'Basic realm="test"'})
    return page(f"Welcome {auth.username}", links(("/auth/inner", "Inner")))


@bp.get("/broken-external/")
def broken_external():  # type: ignore[no-untyped-def]
    # Port 1 on loopback refuses connections: an external link that fails without leaving the machine
    return page("Broken External", links(("http://127.0.0.1:1/nothing", "Refused"), ("/about", "About")))


@bp.route("/middlebox/", methods=["GET", "HEAD"])
def middlebox():  # type: ignore[no-untyped-def]
    # Like a bot wall in front of a site: only a real browser navigation (Sec-Fetch-Mode) is answered in time
    if request.headers.get("Sec-Fetch-Mode") != "navigate":
        import time

        time.sleep(3)
    return page("Behind A Middlebox")
