"""/canonicals/: pages whose rel=canonical is written wrong in each way a site generator gets it wrong.

Invalid (``canonical-invalid``): javascript:, data:, empty, blank, fragment-only, white space in the host,
no host. Valid: an https: canonical on this http: site (the move to HTTPS search engines advise), the page's own URL written relative, another page
of the site written absolute (a ``canonical-mismatch`` only), a relative path with a query.
"""

from __future__ import annotations

from html import escape

from flask import Blueprint, Response, abort, request

from test_server.routes._html import links, page

bp = Blueprint("canonicals", __name__, url_prefix="/canonicals")

# page name -> the href its canonical is written with ({origin} is this server's http://host:port)
CANONICALS = {
    "javascript": "javascript:void(0)",
    "data": "data:text/html,<p>copy</p>",
    "empty": "",
    "blank": "   ",
    "fragment": "#top",
    "spaces": "http://exa mple.test/canonicals/spaces",
    "no-host": "http://",
    "other-scheme": "https://{host}/canonicals/other-scheme",
    "relative-self": "/canonicals/relative-self",
    "elsewhere": "{origin}/canonicals/",
    "relative-query": "relative-self?lang=en",
}


@bp.get("/")
def index() -> Response:
    return page(
        "Canonicals",
        links(*((f"/canonicals/{name}", name) for name in CANONICALS)),
        head=f'<link rel="canonical" href="{request.host_url}canonicals/">\n',
    )


@bp.get("/<name>")
def canonical(name: str) -> Response:
    if name not in CANONICALS:
        abort(404)
    written = CANONICALS[name].format(origin=request.host_url.rstrip("/"), host=request.host)
    return page(
        f"Canonical: {name}",
        '<p><a href="/canonicals/">Back</a></p>',
        head=f'<link rel="canonical" href="{escape(written)}">\n',
    )
