"""/error-status/: HTML pages answered with 404, 500 and 403."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("error_status", __name__, url_prefix="/error-status")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Error Status Top",
        links(
            ("not-found", "Not found"),
            ("server-error", "Server error"),
            ("forbidden", "Forbidden"),
            ("normal", "Normal"),
        ),
    )


@bp.get("/not-found")
def not_found():  # type: ignore[no-untyped-def]
    return page("Not Found", "<p>Gone.</p>", status=404)


@bp.get("/server-error")
def server_error():  # type: ignore[no-untyped-def]
    return page("Server Error", "<p>Broken.</p>", status=500)


@bp.get("/forbidden")
def forbidden():  # type: ignore[no-untyped-def]
    return page("Forbidden", "<p>Keep out.</p>", status=403)


@bp.get("/normal")
def normal():  # type: ignore[no-untyped-def]
    return page("Normal Page")
