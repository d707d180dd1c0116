"""/meta/: pages with every metadata field, robots noindex, and none at all."""

from __future__ import annotations

from flask import Blueprint, request

from test_server.routes._html import links, page

bp = Blueprint("meta", __name__, url_prefix="/meta")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Meta Top", links(("full", "Full"), ("robots-noindex", "Noindex"), ("minimal", "Minimal")))


@bp.get("/full")
def full():  # type: ignore[no-untyped-def]
    origin = request.host_url.rstrip("/")
    head = f"""<base href="{origin}/meta/">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="Test description">
<meta name="keywords" content="test,meta,nitpicker">
<meta name="robots" content="index,follow">
<meta name="author" content="Test Author">
<meta name="generator" content="Hand Written 1.0">
<meta name="theme-color" content="#336699">
<link rel="canonical" href="{origin}/meta/full">
<link rel="alternate" href="{origin}/meta/full-en">
<link rel="alternate" hreflang="en" href="{origin}/meta/full-en">
<link rel="alternate" hreflang="ja" href="{origin}/meta/full">
<link rel="alternate" hreflang="x-default" href="{origin}/meta/full-en">
<link rel="icon" href="{origin}/favicon.ico">
<link rel="apple-touch-icon" href="{origin}/apple-touch-icon.png">
<meta property="og:type" content="website">
<meta property="og:title" content="OG Title">
<meta property="og:site_name" content="Test Site">
<meta property="og:description" content="OG Description">
<meta property="og:url" content="{origin}/meta/full">
<meta property="og:image" content="{origin}/og-image.png">
<meta name="twitter:card" content="summary_large_image">
"""
    return page(
        "Full Meta Page", links(("robots-noindex", "Noindex"), ("minimal", "Minimal")), lang="ja", head=head
    )


@bp.get("/robots-noindex")
def robots_noindex():  # type: ignore[no-untyped-def]
    return page(
        "Robots Noindex",
        "<p>Hidden from search.</p>",
        head='<meta name="robots" content="noindex,nofollow,noarchive">\n',
    )


@bp.get("/minimal")
def minimal():  # type: ignore[no-untyped-def]
    return page("Minimal Page", "<p>Nothing but a title.</p>")
