"""Pages for `crawl --screenshots`: two identical twins (one stored image), a page taller than the cap, an image.

Every page answers a conditional request with 304 (strong ETag of its body), so `crawl --update` takes
them over unchanged.
"""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, request

from test_server.routes._html import links, page

bp = Blueprint("screenshots", __name__)

TALL_PX = 12000  # above the 8000 px the full-size screenshot keeps
_STYLE = (
    "<style>body { margin: 0; font: 24px sans-serif; background: #fff8e7; } h1 { color: #7a1f00; }</style>"
)


def _validated(response: Response) -> Response:
    etag = '"' + hashlib.sha256(response.get_data()).hexdigest()[:16] + '"'
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        return Response(status=304, headers={"ETag": etag})
    response.headers["ETag"] = etag
    return response


@bp.get("/shots/")
def index():  # type: ignore[no-untyped-def]
    body = "<h1>Screenshots</h1>" + links(
        ("/shots/twin-a", "Twin A"),
        ("/shots/twin-b", "Twin B"),
        ("/shots/tall", "Tall"),
        ("/shots/pixel.svg", "A picture"),
    )
    return _validated(page("Screenshots", body, head=_STYLE))


@bp.get("/shots/twin-a")
@bp.get("/shots/twin-b")
def twin():  # type: ignore[no-untyped-def]
    # the same document at two URLs: the same rendering, so one stored image for both
    return _validated(page("Twin", "<h1>Twin</h1>" + links(("/shots/", "Back")), head=_STYLE))


@bp.get("/shots/tall")
def tall():  # type: ignore[no-untyped-def]
    body = (
        f'<h1>Tall</h1><div style="height: {TALL_PX}px; background: linear-gradient(#cde, #edc)">'
        "a very long page</div>" + links(("/shots/", "Back"))
    )
    return _validated(page("Tall", body, head=_STYLE))


@bp.get("/shots/pixel.svg")
def picture():  # type: ignore[no-untyped-def]
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
    )
    return _validated(Response(svg, content_type="image/svg+xml"))
