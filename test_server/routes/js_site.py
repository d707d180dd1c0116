"""/js-site/: pages whose scripts add links, main text, head fields and robots directives, beside static ones.

Each scripted page's HTML as sent differs from its rendered page in one known way (the JavaScript-dependence
checks, plugins/nitpicker_checks/javascript.py); the home page and /static need no JavaScript at all.

- /links: a script appends a link to /hidden (only a rendering crawler finds /hidden).
- /text: the main text is written by a script (the HTML as sent says "Loading").
- /head: a script sets the title, the meta description and the H1 (another sets window.pwned: the viewer's
  raw-vs-rendered tab shows the source as text, and the page's scripts must not run in the viewer).
- /canonical: a script points the canonical at /static.
- /noindex-added: a script adds meta robots noindex; /noindex-removed: a script removes the one sent.
"""

from __future__ import annotations

from flask import Blueprint, abort

from test_server.routes._html import links, page

bp = Blueprint("js_site", __name__, url_prefix="/js-site")

J = "/js-site"
PAGES = ("static", "links", "text", "head", "canonical", "noindex-added", "noindex-removed")
ARTICLE = " ".join(f"word{i}" for i in range(60))


def _script(code: str) -> str:
    return f"<script>{code}</script>"


_BODIES = {
    "static": (f"<main><h1>Static</h1><p>{ARTICLE}</p></main>", ""),
    "hidden": (f"<main><h1>Hidden</h1><p>{ARTICLE} hidden</p></main>", ""),
    "links": (
        f"<main><h1>Links</h1><p>{ARTICLE}</p><ul id='more'></ul></main>"
        + _script(
            "var a = document.createElement('a'); a.href = '/js-site/hidden'; a.textContent = 'Hidden';"
            "document.getElementById('more').appendChild(a);"
        ),
        "",
    ),
    "text": (
        "<main><h1>Text</h1><p id='text'>Loading</p></main>"
        + _script(f"document.getElementById('text').textContent = '{ARTICLE}';"),
        "",
    ),
    "head": (
        f"<main><h1 id='h'>Sent heading</h1><p>{ARTICLE}</p></main>"
        + _script("window.pwned = 1")  # the viewer shows this page's source as text: it must never run there
        + _script(
            "document.title = 'Scripted title';"
            "document.querySelector('meta[name=description]').setAttribute('content', 'Scripted description');"
            "document.getElementById('h').textContent = 'Scripted heading';"
        ),
        '<meta name="description" content="Sent description">\n',
    ),
    "canonical": (
        f"<main><h1>Canonical</h1><p>{ARTICLE}</p></main>"
        + _script("document.querySelector('link[rel=canonical]').href = '/js-site/static';"),
        '<link rel="canonical" href="/js-site/canonical">\n',
    ),
    "noindex-added": (
        f"<main><h1>Noindex added</h1><p>{ARTICLE}</p></main>"
        + _script(
            "var m = document.createElement('meta'); m.name = 'robots'; m.content = 'noindex';"
            "document.head.appendChild(m);"
        ),
        "",
    ),
    "noindex-removed": (
        f"<main><h1>Noindex removed</h1><p>{ARTICLE}</p></main>"
        + _script("document.querySelector('meta[name=robots]').remove();"),
        '<meta name="robots" content="noindex">\n',
    ),
}


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    return page(
        "JavaScript", "<main><h1>JavaScript</h1>" + links(*((f"{J}/{p}", p) for p in PAGES)) + "</main>"
    )


@bp.get("/<name>")
def scripted(name: str):  # type: ignore[no-untyped-def]
    if name not in _BODIES:
        abort(404)
    body, head = _BODIES[name]
    return page(f"JavaScript {name}", body, head=head)
