"""/static-site/: a static site as a file server sends it, re-crawled unchanged (issue 33).

Eight pages share a logo and each has images below the fold that load lazily; every page names a favicon.
Files answer with an ETag and ``Cache-Control: no-cache``, so a browser that saw one asks again with
If-None-Match and gets 304 (no type, no length) on the next page that uses it.
"""

from __future__ import annotations

import base64
import hashlib

from flask import Blueprint, Response, request

from test_server.routes._html import links, page

bp = Blueprint("static_site", __name__, url_prefix="/static-site")

PAGES = 8
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ICO = bytes.fromhex("00000100010001010000010020003000000016000000") + PNG_1X1


def _file(data: bytes, ctype: str) -> Response:
    etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response = Response(status=304)
    else:
        response = Response(data, content_type=ctype)
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = "no-cache"
    return response


def _page(n: int) -> Response:
    name = "Home" if n == 0 else f"Page {n}"
    head = '<link rel="icon" href="/static-site/favicon.ico">\n'
    lazy = "".join(
        f'<img src="/static-site/lazy-{n}-{i}.png" loading="lazy" alt="lazy {i}" width="40" height="40">'
        for i in range(3)
    )
    body = (
        '<img src="/static-site/logo.png" alt="logo" width="40" height="40">'
        f"<h1>{name}</h1><p>Static text of {name}.</p>"
        + links(*((f"/static-site/p{k}", f"Page {k}") for k in range(1, PAGES)), ("/static-site/", "Home"))
        + f'<div style="height: 4000px"></div>{lazy}'
    )
    response = page(f"Static {name}", body, head=head)
    data = response.get_data()
    return _file(data, "text/html; charset=UTF-8")


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    return _page(0)


@bp.get("/p<int:n>")
def one(n: int):  # type: ignore[no-untyped-def]
    if not 1 <= n < PAGES:
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    return _page(n)


@bp.get("/logo.png")
@bp.get("/lazy-<int:n>-<int:i>.png")
def image(n: int = 0, i: int = 0):  # type: ignore[no-untyped-def]
    return _file(PNG_1X1, "image/png")


@bp.get("/favicon.ico")
def favicon():  # type: ignore[no-untyped-def]
    return _file(ICO, "image/x-icon")
