"""/structured-data/: valid and invalid items in JSON-LD, Microdata and RDFa, and items a script adds.

tests/analyzers/test_structured_data.py crawls this subtree and asserts the structured-data analyzer's
exact findings; each defect below is there once, named where it is written.
"""

from __future__ import annotations

import json

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("structured_data", __name__, url_prefix="/structured-data")


def _ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>\n'


BREADCRUMBS = {
    "@context": "https://schema.org",
    "@type": "BreadcrumbList",
    "itemListElement": [
        {"@type": "ListItem", "position": 1, "name": "Home", "item": "https://example.com/"},
        {"@type": "ListItem", "position": 2, "name": "Shop", "item": "https://example.com/shop"},
    ],
}
# valid but for: colour (no such property), availability "in stock" (not an ItemAvailability), reviews
# (superseded by review)
PRODUCT = {
    "@context": "https://schema.org",
    "@type": "Product",
    "name": "Widget",
    "colour": "red",
    "image": "https://example.com/w.png",
    # markup in a value: text to every reader (the viewer's tree shows it escaped, never as an element)
    "description": 'A widget <img src="x" onerror="window.pwned=1">.',
    "brand": {"@type": "Brand", "name": "Acme"},
    "sku": "W-1",
    "reviews": "https://example.com/w/reviews",
    "offers": {
        "@type": "Offer",
        "price": "9.99",
        "priceCurrency": "EUR",
        "availability": "in stock",
        "priceValidUntil": "2030-12-31",
    },
}
# a question without its answer (required by the FAQ rich result)
FAQ = {
    "@context": "https://schema.org",
    "@type": "FAQPage",
    "mainEntity": [
        {"@type": "Question", "name": "Why?", "acceptedAnswer": {"@type": "Answer", "text": "Because."}},
        {"@type": "Question", "name": "How?"},
    ],
}
# an @id loop (the page is part of the site, the site has the page as a part): read, not followed forever
GRAPH = {
    "@context": "https://schema.org",
    "@graph": [
        {"@id": "#site", "@type": "WebSite", "name": "Shop", "hasPart": {"@id": "#page"}},
        {"@id": "#page", "@type": "WebPage", "name": "Widget", "isPartOf": {"@id": "#site"}},
    ],
}

JSONLD_BODY = "<h1>JSON-LD</h1>\n" + "".join(_ld(d) for d in (BREADCRUMBS, PRODUCT, FAQ, GRAPH))

# Microdata: a complete VideoObject (eligible), a Product without offers, review or rating (one of them is
# required), a misspelt type
MICRODATA_BODY = """<h1>Microdata</h1>
<div itemscope itemtype="https://schema.org/VideoObject">
  <span itemprop="name">Unboxing</span>
  <meta itemprop="thumbnailUrl" content="https://example.com/t.jpg">
  <meta itemprop="uploadDate" content="2024-03-01">
  <meta itemprop="contentUrl" content="https://example.com/v.mp4">
  <meta itemprop="embedUrl" content="https://example.com/embed/v">
  <meta itemprop="duration" content="PT1M30S">
  <p itemprop="description">A widget unboxed.</p>
</div>
<div itemscope itemtype="https://schema.org/Product">
  <span itemprop="name">Gadget</span>
  <meta itemprop="image" content="https://example.com/g.png">
  <p itemprop="description">A gadget.</p>
  <span itemprop="brand">Acme</span>
  <span itemprop="sku">G-1</span>
</div>
<div itemscope itemtype="https://schema.org/Prodcut"><span itemprop="name">Typo</span></div>
"""

# RDFa: a complete breadcrumb trail (eligible), a VideoObject whose uploadDate is no date and without a
# thumbnailUrl (required)
RDFA_BODY = """<h1>RDFa</h1>
<ol vocab="https://schema.org/" typeof="BreadcrumbList">
  <li property="itemListElement" typeof="ListItem">
    <a property="item" href="/structured-data/"><span property="name">Home</span></a>
    <meta property="position" content="1">
  </li>
</ol>
<div vocab="https://schema.org/" typeof="VideoObject">
  <span property="name">Teaser</span>
  <span property="uploadDate">last week</span>
  <meta property="contentUrl" content="https://example.com/teaser.mp4">
  <meta property="embedUrl" content="https://example.com/embed/teaser">
  <meta property="duration" content="PT30S">
  <p property="description">A teaser.</p>
</div>
"""

SITE = {
    "@context": "https://schema.org",
    "@type": "WebSite",
    "name": "Before the script",
    "url": "https://example.com/",
}
# The server sends the WebSite item; the script renames it and adds a breadcrumb trail.
SCRIPT = f"""
document.querySelector('script[type="application/ld+json"]').textContent = {json.dumps(json.dumps({**SITE, "name": "After the script"}))};
const added = document.createElement("script");
added.type = "application/ld+json";
added.textContent = {json.dumps(json.dumps(BREADCRUMBS))};
document.head.appendChild(added);
"""


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Structured data",
        "<h1>Structured data</h1>\n"
        + links(
            ("jsonld", "JSON-LD"), ("microdata", "Microdata"), ("rdfa", "RDFa"), ("scripted", "Scripted")
        ),
    )


@bp.get("/jsonld")
def jsonld():  # type: ignore[no-untyped-def]
    return page("JSON-LD", JSONLD_BODY)


@bp.get("/microdata")
def microdata():  # type: ignore[no-untyped-def]
    return page("Microdata", MICRODATA_BODY)


@bp.get("/rdfa")
def rdfa():  # type: ignore[no-untyped-def]
    return page("RDFa", RDFA_BODY)


@bp.get("/scripted")
def scripted():  # type: ignore[no-untyped-def]
    head = _ld(SITE) + '<script src="/structured-data/scripted.js" defer></script>\n'
    return page("Scripted", "<h1>Scripted</h1>", head=head)


@bp.get("/scripted.js")
def scripted_js():  # type: ignore[no-untyped-def]
    return Response(SCRIPT, content_type="text/javascript; charset=UTF-8")
