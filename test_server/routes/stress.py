"""Pages that stress a crawler: one that never finishes, 20 MB, Shift_JIS, slow headers."""

from __future__ import annotations

import time

from flask import Blueprint, Response, current_app, request

from test_server.routes._html import page

bp = Blueprint("stress", __name__)

BIG_SIZE = 20 * 1024 * 1024
HANG_SECONDS = 3600.0


def _stop_requested(seconds: float) -> bool:
    """Sleep up to ``seconds``; True as soon as the server is shutting down."""
    return bool(current_app.extensions["stop_event"].wait(seconds))


@bp.get("/hang/")
def hang():  # type: ignore[no-untyped-def]
    return page("Never Loads", '<p>The image below never finishes.</p><img src="/hang/forever.png" alt="x">')


@bp.get("/hang/forever.png")
def hang_forever():  # type: ignore[no-untyped-def]
    stop = current_app.extensions["stop_event"]

    def trickle():  # a byte now and then keeps the connection open without ever ending
        deadline = time.monotonic() + HANG_SECONDS
        yield b"\x89PNG"
        while time.monotonic() < deadline and not stop.wait(0.5):
            yield b"\0"

    return Response(trickle(), content_type="image/png")


@bp.get("/slow/")
def slow():  # type: ignore[no-untyped-def]
    # Headers arrive after ?seconds= (capped), so clients can test their read timeouts
    seconds = min(float(request.args.get("seconds", "2")), 30.0)
    if _stop_requested(seconds):
        return Response("stopping", status=503)
    return page("Slow Page")


@bp.get("/big/")
def big():  # type: ignore[no-untyped-def]
    head = (
        b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="UTF-8"><title>Big Page</title></head><body>\n'
    )
    tail = b"</body></html>\n"
    block = (b"<p>" + b"x" * 1017 + b"</p>\n") * 64  # 64 lines of 1 KiB

    def generate():
        yield head
        remaining = BIG_SIZE - len(head) - len(tail)
        while remaining > 0:
            chunk = block[:remaining]
            remaining -= len(chunk)
            yield chunk
        yield tail

    return Response(
        generate(), content_type="text/html; charset=UTF-8", headers={"Content-Length": str(BIG_SIZE)}
    )


@bp.get("/sjis/")
def shift_jis():  # type: ignore[no-untyped-def]
    # No charset in the header: only the meta tag tells the encoding
    html = (
        '<!DOCTYPE html>\n<html lang="ja"><head><meta charset="Shift_JIS"><title>日本語のページ</title></head>'
        "<body><p>これはシフトJISのページです。</p></body></html>\n"
    )
    return Response(html.encode("shift_jis"), content_type="text/html")
