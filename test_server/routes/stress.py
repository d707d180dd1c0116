"""Pages that stress a crawler: one that never finishes, 20 MB, Shift_JIS, slow headers."""

from __future__ import annotations

import time

from flask import Blueprint, Response, current_app, request

from test_server.routes._html import links, page

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


@bp.get("/malformed-links/")
def malformed_links():  # type: ignore[no-untyped-def]
    # Links no URL parser accepts come first in the navigation; the pages after them must still be reached
    links = "".join(
        f'<li><a href="{href}">{text}</a></li>'
        for href, text in [
            ("http://[::1", "broken IPv6 literal"),
            ("http://[::1/x", "broken IPv6 literal with a path"),
            ("http://127.0.0.1:99999/", "port out of range"),
            ("https://[fe80::1%zz]/", "zone id"),
            ("/malformed-links/next", "next"),
        ]
    )
    return _page("Malformed links", f"<ul>{links}</ul>")


@bp.get("/malformed-links/next")
def malformed_links_next():  # type: ignore[no-untyped-def]
    return _page("After the malformed links", '<p><a href="/malformed-links/">back</a></p>')


def _page(title: str, body: str) -> str:
    return f'<!DOCTYPE html>\n<html lang="en"><head><title>{title}</title></head><body><main>{body}</main></body></html>\n'


@bp.get("/sjis/")
def shift_jis():  # type: ignore[no-untyped-def]
    # No charset in the header: only the meta tag tells the encoding
    html = (
        '<!DOCTYPE html>\n<html lang="ja"><head><meta charset="Shift_JIS"><title>日本語のページ</title></head>'
        "<body><p>これはシフトJISのページです。</p></body></html>\n"
    )
    return Response(html.encode("shift_jis"), content_type="text/html")


@bp.get("/many-links/")
def many_links():  # type: ignore[no-untyped-def]
    # 100,000 links on one page (fragments of itself: nothing more to crawl), for a tab busy extracting them
    anchors = "".join(f'<a href="#s{i}">Section {i}</a>\n' for i in range(100_000))
    return page("Many Links", anchors)


@bp.get("/many-links/small-<int:n>")
def many_links_small(n: int):  # type: ignore[no-untyped-def]
    return page(f"Small {n}", links(("/many-links/", "Back")))


@bp.get("/busy/")
def busy():  # type: ignore[no-untyped-def]
    # Its own script keeps the page's main thread busy for a minute after DOMContentLoaded: the page answers no
    # extraction (as a tab starved by another tab's 100,000-link page did), while its HTML came whole
    seconds = min(float(request.args.get("seconds", "60")), 120.0)
    script = (
        "<script>addEventListener('DOMContentLoaded', () => setTimeout(() => {"
        f"const end = Date.now() + {seconds * 1000:.0f}; while (Date.now() < end) {{}}"
        "}, 0));</script>"
    )
    body = "<h1>Busy</h1>" + links(("/busy/next", "Next"), ("/about", "About"))
    return page("Busy Page", body, head=script)


@bp.get("/busy/next")
def busy_next():  # type: ignore[no-untyped-def]
    return page("After Busy")
