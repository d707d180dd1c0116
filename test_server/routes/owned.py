"""/owned/: a subfolder audit (/owned/sub/) whose start page links to its own host outside the scope.

The rules of the crawl still apply there: an excluded page, a robots.txt Disallow (/private/), a page that
shows whether ``--header`` values reached it, a 404 and a page linking further (never followed).
"""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, request

from test_server.routes._html import external, links, page

bp = Blueprint("owned", __name__, url_prefix="/owned")


@bp.get("/sub/")
def start():  # type: ignore[no-untyped-def]
    return page(
        "Owned Start",
        links(
            ("/owned/sub/inner.html", "Inner"),
            ("/owned/other.html", "Other"),
            ("/owned/secret.html", "Secret"),
            ("/private/page", "Private"),
            ("/owned/echo.html", "Echo"),
            ("/owned/gone.html", "Gone"),
            (external("/owned/other.html"), "Elsewhere"),
        ),
    )


@bp.get("/sub/inner.html")
def inner():  # type: ignore[no-untyped-def]
    return page("Owned Inner", links(("/owned/sub/", "Start")))


@bp.get("/other.html")
def other():  # type: ignore[no-untyped-def]
    return page("Owned Other", links(("/owned/further.html", "Further")))


@bp.get("/secret.html")
@bp.get("/further.html")
def unlinked():  # type: ignore[no-untyped-def]
    return page("Never Requested")


@bp.get("/echo.html")
def echo():  # type: ignore[no-untyped-def]
    # a digest, not the value: the title must not carry the secret into the archive
    value = request.headers.get("X-Audit")
    return page("Header " + (hashlib.sha256(value.encode()).hexdigest()[:12] if value else "none"))


@bp.get("/gone.html")
def gone():  # type: ignore[no-untyped-def]
    return Response("File not found\n", status=404, content_type="text/plain")
