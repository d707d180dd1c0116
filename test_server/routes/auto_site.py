"""/auto-site/: a mixed site for ``crawl --render auto``, page templates whose scripts change nothing or much.

Each template's first page is linked from the home page; its other pages only from that first one, so the
first is the template's rendered sample whatever the crawl's parallelism. Every page lists its links (the
home page at least), so a template's pages have one structure.

- article (/article/N): a script (harmless.js) that changes nothing but logs a console error, and a search
  field without a label
  (an accessibility defect axe finds, rendered or not); /article/1 links to /article/2, /3 and /latin (an
  article sent as UTF-8 whose bytes are Latin-1).
- list (/list/N): no script; /list/1 links to /list/2.
- built (/built/N): an inline script builds a link to /article/1N (only a rendering crawler finds it);
  /built/1 links to /built/2.
- head (/head/title, /canonical, /robots): head.js sets the title, adds a canonical, adds meta robots
  noindex, as the page's data attributes say; /head/title links to the other two.
- /empty: an HTML answer with no body at all (nothing to parse).

/auto-site/run/<token>/ is the same site under a test's own prefix, for a crawl to interrupt: every page but
the home page and each template's first one (its sample) answers only once ``/auto-site/run/<token>/open``
was posted, so a crawl stopped before that has stored the samples and none of the pages that follow them;
``/auto-site/run/<token>/navigations`` tells how many times a browser navigated to each of its pages.

/auto-site/failing/<token>/ (apart, so that a crawl of /auto-site/ never meets it): two pages of one
template; the first browser navigation to either (a request with ``Sec-Fetch-Mode: navigate``, which the
crawler's own requests do not send) makes that page redirect the browser to itself for good, so that
template's sample fails to render while the other page renders. The token keeps one test's pages its own.
"""

from __future__ import annotations

import threading
from collections import Counter

from flask import Blueprint, Response, abort, current_app, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("auto_site", __name__, url_prefix="/auto-site")

A = "/auto-site"
ARTICLE = " ".join(f"word{i}" for i in range(60))
HARMLESS = "window.harmless = (window.harmless || 0) + 1; console.error('harmless but noisy');"
HEAD = """var c = document.getElementById('cfg').dataset;
if (c.title) { document.title = c.title; }
if (c.canonical) { var l = document.createElement('link'); l.rel = 'canonical'; l.href = c.canonical;
  document.head.appendChild(l); }
if (c.robots) { var m = document.createElement('meta'); m.name = 'robots'; m.content = c.robots;
  document.head.appendChild(m); }
"""
BUILD = (
    "var u = document.getElementById('more'); var a = document.createElement('a');"
    "a.href = u.dataset.target; a.textContent = 'More'; u.appendChild(a);"
)
HEAD_DATA = {
    "title": 'data-title="Scripted title"',
    "canonical": f'data-canonical="{A}/article/1"',
    "robots": 'data-robots="noindex"',
}


_opened: set[str] = set()  # the tokens of /run/<token>/ whose gate is open
_navigated: dict[str, Counter[str]] = {}  # token → page (under its prefix) → browser navigations to it
_gate = threading.Condition()


def _root(token: str | None) -> str:
    return A if token is None else f"{A}/run/{token}"


def _home(token: str | None) -> tuple[str, str]:
    # every page lists its links (the home page at least), so a template's pages have the same structure
    return (f"{_root(token)}/", "Home")


def _arrived(token: str | None, follower: bool) -> None:
    """/run/<token>/: the browser's navigations counted, and a page following its sample held at the gate."""
    if token is None:
        return
    if request.headers.get("Sec-Fetch-Mode") == "navigate":
        with _gate:
            _navigated.setdefault(token, Counter())[request.path.removeprefix(_root(token))] += 1
    if follower:
        stop = current_app.extensions["stop_event"]
        with _gate:  # bounded: a test that never opens the gate must not hang the server's shutdown
            _gate.wait_for(lambda: token in _opened or stop.is_set(), timeout=300)


@bp.post("/run/<token>/open")
def open_gate(token: str):  # type: ignore[no-untyped-def]
    with _gate:
        _opened.add(token)
        _gate.notify_all()
    return {"opened": token}


@bp.get("/run/<token>/navigations")
def navigations(token: str):  # type: ignore[no-untyped-def]
    with _gate:
        return dict(_navigated.get(token, Counter()))


def _article(n: str, more: str, token: str | None) -> str:
    root = _root(token)
    return (
        f'<header class="top"><nav><a href="{root}/">Home</a></nav><form><input type="text" name="q"></form></header>'
        f"<main><article><h1>Article {n}</h1><p>{ARTICLE}</p>{more}</article></main>"
        f'<footer class="bottom">Footer</footer><script src="{root}/harmless.js"></script>'
    )


@bp.get("/")
@bp.get("/run/<token>/")
def home(token: str | None = None):  # type: ignore[no-untyped-def]
    _arrived(token, False)
    first = ("article/1", "list/1", "built/1", "head/title", "empty")
    root = _root(token)
    return page("Auto", "<main><h1>Auto</h1>" + links(*((f"{root}/{p}", p) for p in first)) + "</main>")


@bp.get("/harmless.js")
@bp.get("/run/<token>/harmless.js")
def harmless(token: str | None = None):  # type: ignore[no-untyped-def]
    return Response(HARMLESS, content_type="text/javascript")


@bp.get("/head.js")
@bp.get("/run/<token>/head.js")
def head_js(token: str | None = None):  # type: ignore[no-untyped-def]
    return Response(HEAD, content_type="text/javascript")


@bp.get("/article/<int:n>")
@bp.get("/run/<token>/article/<int:n>")
def article(n: int, token: str | None = None):  # type: ignore[no-untyped-def]
    if n not in (1, 2, 3, 11, 12):
        abort(404)  # numbered URLs the crawl guesses (pagination) are not pages
    _arrived(token, n != 1)
    root = _root(token)
    more = links(
        *(
            ((f"{root}/article/2", "2"), (f"{root}/article/3", "3"), (f"{root}/latin", "latin"))
            if n == 1
            else ()
        ),
        _home(token),
    )
    return page(f"Article {n}", _article(str(n), more, token))


@bp.get("/latin")
@bp.get("/run/<token>/latin")
def latin(token: str | None = None):  # type: ignore[no-untyped-def]
    _arrived(token, True)
    html = "<!DOCTYPE html>\n<html lang='fr'><head><title>Café</title></head><body>" + _article(
        "café", links(_home(token)), token
    )
    return Response(html.encode("latin-1") + b"</body></html>", content_type="text/html; charset=UTF-8")


@bp.get("/list/<int:n>")
@bp.get("/run/<token>/list/<int:n>")
def listing(n: int, token: str | None = None):  # type: ignore[no-untyped-def]
    if n not in (1, 2):
        abort(404)
    _arrived(token, n != 1)
    more = links(*(((f"{_root(token)}/list/2", "next"),) if n == 1 else ()), _home(token))
    return page(f"List {n}", f'<div class="list"><h1>List {n}</h1><p>{ARTICLE}</p>{more}</div>')


@bp.get("/built/<int:n>")
@bp.get("/run/<token>/built/<int:n>")
def built(n: int, token: str | None = None):  # type: ignore[no-untyped-def]
    if n not in (1, 2):
        abort(404)
    _arrived(token, n != 1)
    root = _root(token)
    more = links(*(((f"{root}/built/2", "next"),) if n == 1 else ()), _home(token))
    body = (
        f"<main><h1>Built {n}</h1><p>{ARTICLE}</p>{more}"
        f'<p id="more" data-target="{root}/article/1{n}"></p></main><script>{BUILD}</script>'
    )
    return page(f"Built {n}", body)


@bp.get("/head/<name>")
@bp.get("/run/<token>/head/<name>")
def head(name: str, token: str | None = None):  # type: ignore[no-untyped-def]
    if name not in HEAD_DATA:
        abort(404)
    _arrived(token, name != "title")
    root = _root(token)
    others = (
        ((f"{root}/head/canonical", "canonical"), (f"{root}/head/robots", "robots"))
        if name == "title"
        else ()
    )
    more = links(*others, _home(token))
    data = HEAD_DATA[name].replace(f'"{A}/', f'"{root}/')  # the canonical under the run's prefix
    body = (
        f'<main><h1>Head</h1><p>{ARTICLE}</p><div id="cfg" {data}>{more}</div></main>'
        f'<script src="{root}/head.js"></script>'
    )
    return page(f"Head {name}", body)


@bp.get("/empty")
@bp.get("/run/<token>/empty")
def empty(token: str | None = None):  # type: ignore[no-untyped-def]
    _arrived(token, False)
    return Response(b"", content_type="text/html; charset=UTF-8")


_looping: dict[str, int] = {}  # token → the page its first browser navigation asked for
_lock = threading.Lock()


@bp.get("/failing/<token>/")
def failing_home(token: str):  # type: ignore[no-untyped-def]
    return page(
        "Failing",
        "<main><h1>Failing</h1>"
        + links(*((f"{A}/failing/{token}/page/{n}", str(n)) for n in (1, 2)))
        + "</main>",
    )


@bp.get("/failing/<token>/page/<int:n>")
def failing_page(token: str, n: int):  # type: ignore[no-untyped-def]
    if n not in (1, 2):
        abort(404)
    if request.headers.get("Sec-Fetch-Mode") == "navigate":
        with _lock:
            looping = _looping.setdefault(token, n) == n
        if looping:  # the browser gives up after 20 redirects: this template's sample fails to render
            return redirect(request.path, 302)
    return page(f"Failing {n}", f'<div class="failing"><h1>Failing {n}</h1><p>{ARTICLE}</p></div>')
