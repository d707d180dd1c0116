"""/checks-site/: a small site with one instance of each defect the built-in crawl checks find.

Every page answers with the security headers (CSP, X-Frame-Options, X-Content-Type-Options,
Referrer-Policy, Permissions-Policy), its own description, a viewport, a lang and one h1, except where a page
exists to lack one (/bare lacks the headers, the lang and the viewport).
"""

from __future__ import annotations

import struct
import zlib
from html import escape

from flask import Blueprint, Response, redirect, request

from test_server.routes._html import external, links

bp = Blueprint("checks_site", __name__, url_prefix="/checks-site")

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self' 'unsafe-inline'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Permissions-Policy": "camera=()",
}
LONG_TITLE = "A title far longer than any search result shows, so it will be cut off in the listing"


@bp.after_request
def _security_headers(response: Response) -> Response:
    if not request.path.endswith("/bare"):
        response.headers.update(SECURITY_HEADERS)
    return response


def _png(width: int, height: int) -> bytes:
    """A plain grey PNG of the given size (an oversized image needs real natural dimensions)."""

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


def _page(
    title: str | None,
    body: str = "",
    *,
    head: str = "",
    status: int = 200,
    lang: str = "en",
    description: str | None = "",
    h1: str | None = "Checks",
    viewport: bool = True,
) -> Response:
    """An HTML page; None leaves the element out (no <title>, no description, no h1).

    The default description names the path, so no two pages share one by accident.
    """
    if description == "":
        description = f"The {request.path} page of the checks site"
    parts = ['<meta charset="UTF-8">']
    if viewport:
        parts.append('<meta name="viewport" content="width=device-width, initial-scale=1">')
    if title is not None:
        parts.append(f"<title>{escape(title)}</title>")
    if description is not None:
        parts.append(f'<meta name="description" content="{escape(description)}">')
    lang_attr = f' lang="{lang}"' if lang else ""
    heading = f"<h1>{escape(h1)}</h1>" if h1 is not None else ""
    html = (
        f"<!DOCTYPE html>\n<html{lang_attr}>\n<head>\n{''.join(parts)}\n{head}</head>\n<body>\n"
        f"{heading}\n{body}\n</body>\n</html>\n"
    )
    return Response(html, status=status, content_type="text/html; charset=UTF-8")


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    return _page(
        "Checks Home",
        links(
            ("/checks-site/ok", "OK"),
            ("/checks-site/gone", "Gone"),
            ("/checks-site/nowhere", "Nowhere"),
            ("/checks-site/boom", "Boom"),
            ("/checks-site/old", "Old"),
            ("/checks-site/chain-1", "Chain"),
            ("/checks-site/loop-a", "Loop"),
            ("/checks-site/twin-a", "Twin A"),
            ("/checks-site/twin-b", "Twin B"),
            ("/checks-site/long-title", "Long"),
            ("/checks-site/untitled", "Untitled"),
            ("/checks-site/empty-title", "Empty title"),
            ("/checks-site/no-description", "No description"),
            ("/checks-site/empty-description", "Empty description"),
            ("/checks-site/long-description", "Long description"),
            ("/checks-site/no-h1", "No h1"),
            ("/checks-site/two-h1", "Two h1"),
            ("/checks-site/canonical", "Canonical"),
            ("/checks-site/social", "Social"),
            ("/checks-site/hidden", "Hidden"),
            ("/checks-site/images", "Images"),
            ("/checks-site/bare", "Bare"),
            ("/checks-site/jsonld", "JSON-LD"),
            ("/private/page", "Private"),
            ("/checks-site/script-error", "Script"),
            (external("/checks-site/ok"), "Elsewhere"),
            (external("/checks-site/nowhere"), "Elsewhere gone"),
            (external("/checks-site/blocked"), "Blocked"),
            (external("/checks-site/limited"), "Limited"),
            ("http://127.0.0.1:1/nothing", "Refused"),
        ),
    )


@bp.get("/ok")
def ok():  # type: ignore[no-untyped-def]
    return _page("Checks OK", links(("/checks-site/", "Home")))


@bp.get("/gone")
def gone():  # type: ignore[no-untyped-def]
    return _page("Gone", "<p>Not here any more.</p>", status=404)


@bp.get("/boom")
def boom():  # type: ignore[no-untyped-def]
    return _page("Boom", "<p>Broken.</p>", status=500)


@bp.get("/blocked")
def blocked():  # type: ignore[no-untyped-def]
    return _page("Blocked", "<p>No bots.</p>", status=403)


@bp.get("/limited")
def limited():  # type: ignore[no-untyped-def]
    return _page("Limited", "<p>Slow down.</p>", status=429)


@bp.get("/old")
def old():  # type: ignore[no-untyped-def]
    return redirect("/checks-site/ok", code=301)


@bp.get("/chain-1")
def chain_1():  # type: ignore[no-untyped-def]
    return redirect("/checks-site/chain-2", code=301)


@bp.get("/chain-2")
def chain_2():  # type: ignore[no-untyped-def]
    return redirect("/checks-site/ok", code=302)


@bp.get("/loop-a")
def loop_a():  # type: ignore[no-untyped-def]
    return redirect("/checks-site/loop-b", code=302)


@bp.get("/loop-b")
def loop_b():  # type: ignore[no-untyped-def]
    return redirect("/checks-site/loop-a", code=302)


@bp.get("/twin-a")
@bp.get("/twin-b")
def twin():  # type: ignore[no-untyped-def]
    return _page("Twin Page", description="Twin description")


@bp.get("/long-title")
def long_title():  # type: ignore[no-untyped-def]
    return _page(LONG_TITLE)


@bp.get("/untitled")
def untitled():  # type: ignore[no-untyped-def]
    return _page(None)


@bp.get("/empty-title")
def empty_title():  # type: ignore[no-untyped-def]
    return _page("")


@bp.get("/no-description")
def no_description():  # type: ignore[no-untyped-def]
    return _page("No Description", description=None)


@bp.get("/empty-description")
def empty_description():  # type: ignore[no-untyped-def]
    return _page("Empty Description", description=None, head='<meta name="description" content="">')


@bp.get("/long-description")
def long_description():  # type: ignore[no-untyped-def]
    return _page("Long Description", description="word " * 50)


@bp.get("/no-h1")
def no_h1():  # type: ignore[no-untyped-def]
    return _page("No Heading", h1=None)


@bp.get("/two-h1")
def two_h1():  # type: ignore[no-untyped-def]
    return _page("Two Headings", "<h1>Second</h1>", h1="First")


@bp.get("/canonical")
def canonical():  # type: ignore[no-untyped-def]
    return _page(
        "Canonical Elsewhere", head=f'<link rel="canonical" href="{request.host_url}checks-site/ok">'
    )


@bp.get("/social")
def social():  # type: ignore[no-untyped-def]
    head = (
        '<meta property="og:title" content="Social Title">'
        '<meta property="og:description" content="Social description">'
    )
    return _page("Social Page", head=head)


@bp.get("/hidden")
def hidden():  # type: ignore[no-untyped-def]
    return _page("Hidden Page", head='<meta name="robots" content="noindex">')


@bp.get("/images")
def images():  # type: ignore[no-untyped-def]
    body = (
        '<img src="/checks-site/img/fine.png" alt="Fine" width="10" height="10">'
        '<img src="/checks-site/img/no-alt.png" width="10" height="10">'
        '<img src="/checks-site/img/no-size.png" alt="No size">'
        '<img src="/checks-site/img/big.png" alt="Big" width="10" height="10">'
    )
    return _page("Images", body)


@bp.get("/img/<name>.png")
def png(name: str):  # type: ignore[no-untyped-def]
    side = 100 if name == "big" else 10
    return Response(_png(side, side), content_type="image/png")


@bp.get("/bare")
def bare():  # type: ignore[no-untyped-def]
    return _page("Bare Page", lang="", viewport=False)


@bp.get("/script-error")
def script_error():  # type: ignore[no-untyped-def]
    return _page("Script Error", "<script>throw new Error('checks-site script failed')</script>")


@bp.get("/jsonld")
def jsonld():  # type: ignore[no-untyped-def]
    head = (
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Thing"}</script>'
        '<script type="application/ld+json">{"@type": "Thing",, }</script>'
    )
    return _page("Structured Data", head=head)
