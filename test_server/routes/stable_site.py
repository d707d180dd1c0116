"""/stable-site/: pages whose images and sub-resources arrive at their own pace, re-crawled unchanged (issue 33).

Every page has a favicon link (one broken, one page none, so Chromium asks /favicon.ico by itself), an eager
logo, a ``srcset`` image and a ``<picture>`` (a device preset picks another file), an image a script adds once
a fetch after ``load`` answers, one a timer adds well after ``load``, and images below the fold that load
lazily and slowly (the home page's last one is broken; a lazy image in a hidden menu never loads at all).
Files answer with an ETag and ``Cache-Control: no-cache``, as /static-site/'s do.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib

from flask import Blueprint, Response, current_app, request

from test_server.routes._html import links, page

bp = Blueprint("stable_site", __name__, url_prefix="/stable-site")

PAGES = ("", "p1", "p2", "p3", "plain")
LAZY_DELAY = 0.15  # seconds the server takes for each image below the fold
TIMER_MS = 5000  # the timer adds its image this long after `load` (a carousel's next slide): after the read


def _png(width: int, height: int) -> bytes:
    """A grey PNG of ``width`` x ``height``: the file a device preset picks shows in the natural size recorded."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG_1X1 = _png(1, 1)
PNG_2X1 = _png(2, 1)


def _file(data: bytes, ctype: str) -> Response:
    etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response = Response(status=304)
    else:
        response = Response(data, content_type=ctype)
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = "no-cache"
    return response


def _page(name: str) -> Response:
    title = name or "home"
    icon = {
        "plain": "",
        "p2": '<link rel="icon" href="/stable-site/missing-icon.png">\n',
    }.get(name, '<link rel="icon" type="image/png" href="/stable-site/icon.png">\n')
    lazy = "".join(
        f'<img src="/stable-site/lazy-{title}-{i}.png" loading="lazy" alt="lazy {i}" width="40" height="40">'
        for i in range(3)
    )
    if not name:
        lazy += '<img src="/stable-site/gone-lazy.png" loading="lazy" alt="broken" width="40" height="40">'
    scripts = (
        "<script>addEventListener('load', () => {"
        "const add = (src, alt) => { const i = document.createElement('img'); i.src = src; i.alt = alt;"
        " document.getElementById('added').append(i); };"
        f"fetch('/stable-site/data/{title}.json').then((r) => r.json()).then((d) => add(d.src, 'fetched'));"
        f"setTimeout(() => add('/stable-site/timer-{title}.png', 'timer'), {TIMER_MS});"
        "});</script>"
    )
    body = (
        '<img src="/stable-site/logo.png" alt="logo" width="40" height="40">'
        '<img src="/stable-site/wide.png" srcset="/stable-site/narrow.png 400w, /stable-site/wide.png 1200w"'
        ' sizes="100vw" alt="responsive" width="40" height="40">'
        '<picture><source media="(max-width: 600px)" srcset="/stable-site/art-small.png">'
        '<img src="/stable-site/art-large.png" alt="art" width="40" height="40"></picture>'
        '<nav hidden><img src="/stable-site/menu.png" loading="lazy" alt="menu"></nav>'
        f'<h1>Stable {title}</h1><p>Static text of {title}.</p><div id="added"></div>'
        + links(*((f"/stable-site/{other}", f"Page {other or 'home'}") for other in PAGES))
        + f'<div style="height: 4000px"></div>{lazy}{scripts}'
    )
    response = page(f"Stable {title}", body, head=icon)
    return _file(response.get_data(), "text/html; charset=UTF-8")


@bp.get("/")
@bp.get("/<name>")
def one(name: str = ""):  # type: ignore[no-untyped-def]
    if name not in PAGES:
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    return _page(name)


@bp.get("/data/<name>.json")
def data(name: str):  # type: ignore[no-untyped-def]
    body = json.dumps({"src": f"/stable-site/fetched-{name}.png"}).encode()
    return _file(body, "application/json")


@bp.get("/logo.png")
@bp.get("/icon.png")
@bp.get("/narrow.png")
@bp.get("/art-small.png")
@bp.get("/menu.png")
@bp.get("/fetched-<name>.png")
@bp.get("/timer-<name>.png")
def image(name: str = ""):  # type: ignore[no-untyped-def]
    return _file(PNG_1X1, "image/png")


@bp.get("/wide.png")
@bp.get("/art-large.png")
def wide():  # type: ignore[no-untyped-def]
    return _file(PNG_2X1, "image/png")


@bp.get("/lazy-<name>-<int:i>.png")
def lazy(name: str, i: int):  # type: ignore[no-untyped-def]
    # a slow file: its answer comes while the page is being read
    current_app.extensions["stop_event"].wait(LAZY_DELAY)
    return _file(PNG_1X1, "image/png")
