"""/stopping/: a small site whose pages stay busy (an image that never ends), for stop and kill tests."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from test_server.routes._html import links, page

bp = Blueprint("stopping", __name__, url_prefix="/stopping")
PAGES = 6


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Stopping Top", links(*((f"/stopping/p/{n}", f"Page {n}") for n in range(1, PAGES + 1))))


@bp.get("/p/<int:n>")
def child(n: int):  # type: ignore[no-untyped-def]
    # The image keeps the page's network busy, so the page is in flight for seconds (the scrape's
    # network-quiet wait is bounded); its request tells a test that the page is being rendered now.
    return page(f"Stopping {n}", f'<p>Busy page {n}.</p><img src="/stopping/img/{n}.png" alt="busy">'
                + links(("/stopping/", "Top")))


@bp.get("/img/<int:n>.png")
def busy_image(n: int):  # type: ignore[no-untyped-def]
    stop = current_app.extensions["stop_event"]

    def trickle():  # a byte now and then until the server stops: the request never completes on its own
        yield b"\x89PNG"
        for _ in range(600):
            if stop.wait(0.5):
                return
            yield b"\0"

    return Response(trickle(), content_type="image/png")
