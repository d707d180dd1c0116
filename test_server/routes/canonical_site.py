"""/canonical-site/: a small site with one instance of each defect the canonical checks find.

The home page names itself and links every page. Pages: one without a canonical, a self-referencing one
(relative), a duplicate naming another page, canonicals naming a 404, a redirect, a noindex page and a URL
robots.txt blocks, an invalid one (javascript:), an HTML canonical the HTTP Link header contradicts, two
different <link rel=canonical>, one a script rewrites, one declared by the Link header only, one in <body>,
and one naming a page no link reaches.
"""

from __future__ import annotations

from flask import Blueprint, Response, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("canonical_site", __name__, url_prefix="/canonical-site")
HOME = "/canonical-site/"
# page name -> the canonical href written in its <head> ("" = no <link rel=canonical>)
HEADS = {
    "missing": "",
    "self": "/canonical-site/self",
    "copy": "/canonical-site/self",
    "to-gone": "/canonical-site/gone",
    "to-redirect": "/canonical-site/moved",
    "to-noindex": "/canonical-site/hidden",
    "to-blocked": "/private/page",
    "js": "javascript:void(0)",
    "header-conflict": "/canonical-site/header-conflict",
    "two": "/canonical-site/two",
    "scripted": "/canonical-site/scripted",
    "header-only": "",
    "in-body": "",
    "to-lonely": "/canonical-site/lonely",
}
LINKED = ("gone", "moved", "hidden", "/private/page")


def _canonical(href: str) -> str:
    return f'<link rel="canonical" href="{href}">\n' if href else ""


@bp.get("/")
def home() -> Response:
    targets = [(f"{HOME}{name}", name) for name in HEADS]
    targets += [(t if t.startswith("/") else f"{HOME}{t}", t) for t in LINKED]
    return page("Canonical Site", links(*targets), head=_canonical(request.base_url))


@bp.get("/<name>")
def named(name: str) -> Response:
    back = links((HOME, "Home"))
    if name == "gone":
        return page("Gone", back, status=404)
    if name == "moved":
        return redirect(f"{HOME}self", 302)  # type: ignore[return-value]
    if name == "hidden":
        return page("Hidden", back, head='<meta name="robots" content="noindex">\n')
    if name not in HEADS:
        return page("Not Found", status=404)
    head = _canonical(HEADS[name])
    body = back
    if name == "two":
        head += _canonical("/canonical-site/copy")
    elif name == "scripted":
        body += (
            "<script>document.querySelector('link[rel=canonical]')"
            ".setAttribute('href', '/canonical-site/copy')</script>"
        )
    elif name == "in-body":
        body += _canonical(f"{HOME}in-body")
    response = page(f"Canonical: {name}", body, head=head)
    if name == "header-conflict":
        response.headers["Link"] = '<http://example.test/other>; rel="canonical"'
    elif name == "header-only":
        response.headers["Link"] = f'<{request.base_url}>; rel="canonical", </style.css>; rel=preload'
    return response
