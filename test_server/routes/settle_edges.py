"""Pages that test when a rendered page counts as settled: late requests, endless polling, lazy content."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from test_server.routes._html import page

bp = Blueprint("settle_edges", __name__)

LATE_DELAY = 0.3  # the server's own slowness: each late part is answered this much later
BUSY_MS = 400  # how long /settle/busy/ keeps its script running between its two requests
# Counts the page's window.scrollTo calls, so a test can ask the page whether anyone scrolled it
COUNT_SCROLLS = (
    "<script>const scrollTo0 = window.scrollTo.bind(window); window.__scrolls = 0;"
    "window.scrollTo = (...args) => { window.__scrolls += 1; return scrollTo0(...args); };</script>"
)
TALL = '<div style="height: 4000px">tall</div>'


def _two_fetches(between: str = "") -> str:
    """After load: two requests in a row (the second starts when the first ends, after ``between`` ran), then a
    link named by the second appears."""
    return (
        "<script>addEventListener('load', () => fetch('/settle/late/part/1').then((r) => r.text())"
        f".then(() => {{ {between} return fetch('/settle/late/part/2'); }}).then((r) => r.text()).then((href) => {{"
        "const a = document.createElement('a'); a.href = href; a.textContent = 'late link';"
        "document.body.append(a); }));</script>"
    )


@bp.get("/settle/late/")
def late():  # type: ignore[no-untyped-def]
    return page("Late Content", "<p>A link arrives after load.</p>" + _two_fetches())


@bp.get("/settle/busy/")
def busy():  # type: ignore[no-untyped-def]
    # The page's script is busy for BUSY_MS between its two requests: a fixed quiet window after the first ends
    # would call the page settled before the second starts
    busy_loop = f"const t = Date.now(); while (Date.now() - t < {BUSY_MS}) {{}}"
    return page(
        "Busy Before Its Next Request", "<p>A link arrives after a busy script.</p>" + _two_fetches(busy_loop)
    )


@bp.get("/settle/late/part/<int:n>")
def late_part(n: int):  # type: ignore[no-untyped-def]
    current_app.extensions["stop_event"].wait(LATE_DELAY)
    return Response("/settle/late/found" if n == 2 else "ok", content_type="text/plain")


@bp.get("/settle/poll/")
def poll():  # type: ignore[no-untyped-def]
    # Polls for ever, a request every 150 ms: the network is never idle for 500 ms, yet the page is done
    script = "<script>setInterval(() => fetch('/settle/poll/tick'), 150);</script>"
    return page("Polling", "<p>Asks the server what is new, for ever.</p>" + script)


@bp.get("/settle/poll/tick")
def poll_tick():  # type: ignore[no-untyped-def]
    return Response("nothing new", content_type="text/plain")


@bp.get("/settle/tall/")
def tall():  # type: ignore[no-untyped-def]
    image = '<img src="/settle/img.svg" alt="eager" width="10" height="10">'
    return page("Tall Without Lazy Images", COUNT_SCROLLS + image + TALL + "<p>end</p>")


@bp.get("/settle/tall-lazy/")
def tall_lazy():  # type: ignore[no-untyped-def]
    image = '<img src="/settle/img.svg" alt="lazy" width="10" height="10" loading="lazy">'
    return page("Tall With A Lazy Image", COUNT_SCROLLS + TALL + image)


@bp.get("/settle/img.svg")
def image():  # type: ignore[no-untyped-def]
    svg = (
        "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10'/></svg>"
    )
    return Response(svg, content_type="image/svg+xml")
