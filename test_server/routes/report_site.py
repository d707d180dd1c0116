"""/report-site/: a small site that fills every report sheet (titles under an index, a 404, a redirect,
versioned resources, images with and without alt, an og:title mismatch, a link text that differs)."""

from __future__ import annotations

import base64

from flask import Blueprint, Response, redirect

from test_server.routes._html import external, links, page

bp = Blueprint("report_site", __name__, url_prefix="/report-site")

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _assets(version: int) -> str:
    return (
        f'<link rel="stylesheet" href="/report-site/static/site.css?v={version}">'
        '<script src="/report-site/static/app.js?v=7"></script>'
    )


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    body = (
        '<img src="/report-site/static/logo2.png" alt="Logo" width="1" height="1">'
        '<img src="/report-site/static/logo10.png">'
        + links(
            ("/report-site/alpha", "Alpha"),
            ("/report-site/beta", "Completely different"),
            ("/report-site/missing", "Gone"),
            ("/report-site/old", "Old alpha"),
            (external("/report-site/outside"), "Outside"),
        )
    )
    return page("Report Home", body, head=_assets(1))


@bp.get("/alpha")
def alpha():  # type: ignore[no-untyped-def]
    head = _assets(2) + '<meta property="og:title" content="Alpha on social">'
    return page(
        "Alpha | Report Home",
        links(("/report-site/", "Report Home"), ("/report-site/beta", "Beta")),
        head=head,
    )


@bp.get("/beta")
def beta():  # type: ignore[no-untyped-def]
    head = _assets(1) + '<meta name="description" content="The beta page">'
    return page("Beta | Report Home", links(("/report-site/", "Home")), lang="", head=head)


@bp.get("/old")
def old():  # type: ignore[no-untyped-def]
    return redirect("/report-site/alpha", code=301)


@bp.get("/missing")
def missing():  # type: ignore[no-untyped-def]
    return page("Not Found", "<p>Nothing here.</p>", status=404)


@bp.get("/outside")
def outside():  # type: ignore[no-untyped-def]
    return page("Outside", "<p>An external page.</p>")


@bp.get("/static/site.css")
def css():  # type: ignore[no-untyped-def]
    return Response("body { margin: 0; }", content_type="text/css")


@bp.get("/static/app.js")
def js():  # type: ignore[no-untyped-def]
    return Response("window.loaded = true;", content_type="application/javascript")


@bp.get("/static/<name>.png")
def png(name: str):  # type: ignore[no-untyped-def]
    return Response(PNG_1X1, content_type="image/png")
