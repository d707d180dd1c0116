"""/generations/<site>/: pages re-crawled as generations, with validators, per-render noise and request counts.

Each ``<site>`` name is an independent site (its own page versions and counters), so tests never share
state. Pages and sub-resources send ETag and Last-Modified and answer a matching If-None-Match or
If-Modified-Since with 304. Every render carries what differs when nothing changed: a Date header, a
request id, a session cookie, a CSP nonce, a CSRF token; the sub-resources answer after a random delay,
so the browser sees them in a different order from one crawl to the next.

- ``/generations/<site>/`` links to ``p1`` … ``p{PAGES}``; each page loads style.css, logo.png, app.js.
- ``/generations/<site>/__change/<page>`` gives one page a new version (new title and text, new ETag).
- ``/generations/<site>/__hits`` is JSON: per path, the 200s, the 304s and the conditional requests.

A site named ``ignores-…`` sends validators but never answers 304 (a server that ignores them); a site
named ``lastmod-…`` sends Last-Modified only, no ETag.
"""

from __future__ import annotations

import base64
import random
import secrets
import threading
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from flask import Blueprint, Response, jsonify, request

from test_server.routes._html import links, page

bp = Blueprint("generations", __name__, url_prefix="/generations")

PAGES = 30  # with the index, the 31 pages of the site the issue measured
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
STATIC = {
    "style.css": ("text/css", b"body { color: #222; }\n"),
    "app.js": ("text/javascript", b"document.documentElement.dataset.ready = '1';\n"),
    "logo.png": ("image/png", PNG_1X1),
}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

_lock = threading.Lock()
_versions: dict[str, Counter[str]] = defaultdict(Counter)  # site → page → version (0 = the first)
_hits: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))


def _count(site: str, path: str, outcome: str, conditional: bool) -> None:
    with _lock:
        _hits[site][path][outcome] += 1
        if conditional:
            _hits[site][path]["conditional"] += 1


def _validated(site: str, path: str, etag: str, modified: datetime, build: object) -> Response:
    """304 when the request's validators match, else the full response from ``build()``; counted either way."""
    inm = request.headers.get("If-None-Match")
    ims = request.headers.get("If-Modified-Since")
    conditional = bool(inm or ims)
    fresh = False
    if site.startswith("ignores-"):
        pass  # validators are sent and never honoured
    elif inm is not None:
        fresh = etag in [tag.strip() for tag in inm.split(",")] or inm.strip() == "*"
    elif ims is not None:
        try:
            fresh = parsedate_to_datetime(ims) >= modified
        except (TypeError, ValueError):
            fresh = False
    if fresh:
        response = Response(status=304)
    else:
        response = build()  # type: ignore[operator]
    _count(site, path, "304" if fresh else "200", conditional)
    if not site.startswith("lastmod-"):
        response.headers["ETag"] = etag
    response.headers["Last-Modified"] = format_datetime(modified, usegmt=True)
    # what differs on every response even when the content does not (the server adds a Date header too)
    response.headers["X-Request-Id"] = secrets.token_hex(8)
    response.headers["Server-Timing"] = f"app;dur={random.randint(1, 99)}"
    return response


def _page_html(site: str, name: str, version: int) -> Response:
    nonce = secrets.token_urlsafe(12)
    csrf = secrets.token_hex(16)
    title = f"Generations {name}" + (f" v{version}" if version else "")
    head = (
        f'<meta name="csrf-token" content="{csrf}">\n'
        f'<link rel="stylesheet" href="/generations/{site}/style.css">\n'
        f'<script nonce="{nonce}" src="/generations/{site}/app.js"></script>\n'
    )
    body = (
        f"<h1>{title}</h1>\n<p>Text of {name}, version {version}.</p>\n"
        f'<img src="/generations/{site}/logo.png" alt="logo" width="1" height="1">\n'
        f'<form method="post" action="/generations/{site}/{name}">'
        f'<input type="hidden" name="csrf_token" value="{csrf}"><button>Send</button></form>\n'
        + links(("/generations/" + site + "/", "Home"))
    )
    response = page(title, body, head=head)
    response.headers["Set-Cookie"] = f"session={secrets.token_hex(12)}; Path=/; HttpOnly"
    response.headers["Content-Security-Policy"] = f"script-src 'self' 'nonce-{nonce}'"
    return response


@bp.get("/<site>/")
def index(site: str):  # type: ignore[no-untyped-def]
    names = [f"p{n}" for n in range(1, PAGES + 1)]

    def build() -> Response:
        return page("Generations", links(*((f"/generations/{site}/{n}", n.upper()) for n in names)))

    return _validated(site, "/", '"index-v0"', EPOCH, build)


@bp.get("/<site>/<name>")
def one_page(site: str, name: str):  # type: ignore[no-untyped-def]
    if name in STATIC:
        # a random delay per response: the browser's network events come in a different order each time
        time.sleep(random.uniform(0, 0.05))
        ctype, data = STATIC[name]
        return _validated(site, name, f'"{name}-v0"', EPOCH, lambda: Response(data, content_type=ctype))
    if not (name.startswith("p") and name[1:].isdigit() and 1 <= int(name[1:]) <= PAGES):
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    with _lock:
        version = _versions[site][name]
    modified = EPOCH + timedelta(days=version)
    return _validated(site, name, f'"{name}-v{version}"', modified, lambda: _page_html(site, name, version))


@bp.get("/<site>/__change/<name>")
def change(site: str, name: str):  # type: ignore[no-untyped-def]
    with _lock:
        _versions[site][name] += 1
        version = _versions[site][name]
    return jsonify({"page": name, "version": version})


@bp.get("/<site>/__hits")
def hits(site: str):  # type: ignore[no-untyped-def]
    with _lock:
        return jsonify({path: dict(counts) for path, counts in _hits[site].items()})
