"""/sitemap-site/: a small site whose sitemaps hold one instance of each defect the sitemap checks find.

Crawled from /sitemap-site/ with ``--sitemap /sitemap-site/sitemap-index.xml --sitemap /sitemap-site-root.xml
--scope /private/`` (the shared /robots.txt names no sitemap, so other crawls of the test site read none). The
index lists a plain urlset, a gzipped one (holding the orphan), a missing file, broken XML, a wrong namespace,
a file over the 50,000-URL limit and itself (a loop). The root-level sitemap, whose location is the whole host,
lists a page robots.txt blocks.
"""

from __future__ import annotations

import gzip

from flask import Blueprint, Response, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("sitemap_site", __name__)
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
OVER_LIMIT = 50_001


def _origin() -> str:
    return request.host_url.rstrip("/")


def _urlset(paths: list[str], namespace: str = NS) -> str:
    items = "".join(f"<url><loc>{_origin() + p if p.startswith('/') else p}</loc></url>" for p in paths)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{namespace}">{items}</urlset>\n'


def _xml(text: str | bytes, content_type: str = "application/xml") -> Response:
    return Response(text, content_type=content_type)


@bp.get("/sitemap-site/")
def home():  # type: ignore[no-untyped-def]
    return page(
        "Sitemap Site",
        links(
            ("/sitemap-site/a", "A"),
            ("/sitemap-site/b", "B"),
            ("/sitemap-site/noindex", "Hidden"),
            ("/sitemap-site/old", "Old"),
            ("/sitemap-site/canonicalised", "Copy"),
            ("/sitemap-site/unlisted", "Unlisted"),
        ),
    )


@bp.get("/sitemap-site/<name>")
def plain(name: str):  # type: ignore[no-untyped-def]
    if name not in ("a", "b", "unlisted", "orphan"):
        return page("Not Found", status=404)
    return page(f"Page {name}", links(("/sitemap-site/", "Home")))


@bp.get("/sitemap-site/noindex")
def noindex():  # type: ignore[no-untyped-def]
    return page("Hidden", head='<meta name="robots" content="noindex">\n')


@bp.get("/sitemap-site/old")
def old():  # type: ignore[no-untyped-def]
    return redirect("/sitemap-site/a", code=301)


@bp.get("/sitemap-site/canonicalised")
def canonicalised():  # type: ignore[no-untyped-def]
    return page("Copy", head=f'<link rel="canonical" href="{_origin()}/sitemap-site/a">\n')


@bp.get("/sitemap-site/sitemap-index.xml")
def index():  # type: ignore[no-untyped-def]
    children = ("pages.xml", "more.xml.gz", "missing.xml", "broken.xml", "wrong-ns.xml", "big.xml")
    items = "".join(f"<sitemap><loc>{_origin()}/sitemap-site/{c}</loc></sitemap>" for c in children)
    items += f"<sitemap><loc>{_origin()}/sitemap-site/sitemap-index.xml</loc></sitemap>"
    return _xml(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">{items}</sitemapindex>\n'
    )


@bp.get("/sitemap-site/pages.xml")
def pages():  # type: ignore[no-untyped-def]
    paths = [
        "/sitemap-site/",
        "/sitemap-site/a",
        "/sitemap-site/noindex",
        "/sitemap-site/old",
        "/sitemap-site/gone",
        "/sitemap-site/canonicalised",
        "/outside/page",  # the same host, outside the sitemap's directory
        "http://example.invalid/page",  # another host
    ]
    return _xml(_urlset(paths))


@bp.get("/sitemap-site/more.xml.gz")
def more():  # type: ignore[no-untyped-def]
    body = gzip.compress(_urlset(["/sitemap-site/b", "/sitemap-site/orphan"]).encode())
    return _xml(body, "application/gzip")


@bp.get("/sitemap-site/broken.xml")
def broken():  # type: ignore[no-untyped-def]
    return _xml(f'<urlset xmlns="{NS}"><url><loc>{_origin()}/sitemap-site/b</loc></url><url>')


@bp.get("/sitemap-site/wrong-ns.xml")
def wrong_namespace():  # type: ignore[no-untyped-def]
    return _xml(_urlset(["/sitemap-site/a"], "http://www.google.com/schemas/sitemap/0.84"))


@bp.get("/sitemap-site/big.xml")
def big():  # type: ignore[no-untyped-def]
    return _xml(_urlset(["/sitemap-site/a"] * OVER_LIMIT))


@bp.get("/sitemap-site-root.xml")
def root_level():  # type: ignore[no-untyped-def]
    return _xml(_urlset(["/private/page", "/sitemap-site/a"]))
