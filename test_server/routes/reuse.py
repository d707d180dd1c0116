"""/reuse/: an image both embedded and linked, so a crawler can fetch it once (see /__counts)."""

from __future__ import annotations

import base64

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("reuse", __name__, url_prefix="/reuse")

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    body = '<img src="/reuse/pic.png" alt="reused picture">' + links(("/reuse/pic.png", "The picture"))
    return page("Reuse Top", body)


@bp.get("/pic.png")
def pic():  # type: ignore[no-untyped-def]
    return Response(PNG_1X1, content_type="image/png")
