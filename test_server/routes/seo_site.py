"""/seo-site/: pages whose per-URL SEO fields are known exactly (the `pages` query's SEO columns).

The home page (depth 0) links page A twice, B once, a URL that redirects to A, each non-indexable kind (a
noindex meta tag, a noindex X-Robots-Tag, a canonical to A, a 404, a 500, a PDF) and a Japanese page; A
links on to a deep page (depth 2). B says `googlebot: noindex` in its header (every other bot may index it)
and limits snippets in its meta robots. Every page's text is a known number of words.
"""

from __future__ import annotations

from flask import Blueprint, Response, redirect

from test_server.routes._html import links, page

bp = Blueprint("seo_site", __name__, url_prefix="/seo-site")
HOME = "/seo-site/"
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


@bp.get("/")
def home() -> Response:
    body = "<h1>Welcome home</h1><h2>First section</h2><p>One two three four five.</p>" + links(
        (f"{HOME}a", "Alpha"),
        (f"{HOME}a", "Alpha again"),
        (f"{HOME}b", "Beta"),
        (f"{HOME}moved", "Moved"),
        (f"{HOME}meta-noindex", "Meta"),
        (f"{HOME}header-noindex", "Header"),
        (f"{HOME}canonicalised", "Copy"),
        (f"{HOME}missing", "Missing"),
        (f"{HOME}broken", "Broken"),
        (f"{HOME}file.pdf", "File"),
        (f"{HOME}ja", "Japan"),
        ("http://127.0.0.1:9/elsewhere", "Away"),
    )
    response = page("WWW", body)
    response.headers["Last-Modified"] = "Wed, 21 Oct 2026 07:28:00 GMT"
    return response


@bp.get("/<name>")
def named(name: str) -> Response:
    back = links((HOME, "Home"))
    if name == "a":
        return page(
            "iii",
            "<h1>Alpha</h1><h1>Second</h1><p>Six words are on this page.</p>"
            + back
            + links((f"{HOME}deep", "Deeper")),
        )
    if name == "b":
        response = page("Beta", back, head='<meta name="robots" content="max-snippet:20, noarchive">\n')
        response.headers["X-Robots-Tag"] = "googlebot: noindex"
        return response
    if name == "moved":
        return redirect(f"{HOME}a", 301)  # type: ignore[return-value]
    if name == "meta-noindex":
        return page("Meta", back, head='<meta name="robots" content="noindex">\n')
    if name == "header-noindex":
        response = page("Header", back)
        response.headers["X-Robots-Tag"] = "noindex, nofollow"
        return response
    if name == "canonicalised":
        return page("Copy", back, head=f'<link rel="canonical" href="{HOME}a">\n')
    if name == "broken":
        return page("Broken", back, status=500)
    if name == "file.pdf":
        return Response(PDF, content_type="application/pdf")
    if name == "ja":
        return page("日本語", "<p>東京</p>", lang="ja")
    if name == "deep":
        return page("Deep", back)
    return page("Not Found", status=404)
