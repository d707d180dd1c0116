"""Pages whose content comes from markup or script: lazy images, JSON-LD and client redirects."""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("scripted", __name__)

SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}'><rect width='{w}' height='{h}'/></svg>"
)


@bp.get("/lazy/")
def lazy():  # type: ignore[no-untyped-def]
    images = "".join(
        f'<div style="height: 1200px">block {n}</div>'
        f'<img src="/lazy/img/{n}.svg" alt="lazy {n}" width="120" height="80" loading="lazy">'
        for n in range(1, 4)
    )
    return page("Lazy Images", '<img src="/lazy/img/0.svg" alt="eager" width="120" height="80">' + images)


@bp.get("/lazy/img/<int:n>.svg")
def lazy_image(n: int):  # type: ignore[no-untyped-def]
    return Response(SVG.format(w=120, h=80), content_type="image/svg+xml")


def _jsonld(content: str, kind: str = "application/ld+json") -> str:
    return f'<script type="{kind}">{content}</script>\n'


@bp.get("/jsonld/")
def jsonld_top():  # type: ignore[no-untyped-def]
    return page("JSON-LD Top", links(("valid", "Valid"), ("invalid", "Invalid"), ("speculation", "Rules")))


@bp.get("/jsonld/valid")
def jsonld_valid():  # type: ignore[no-untyped-def]
    data = (
        '{"@context": "https://schema.org", "@type": "Article", "headline": "Valid JSON-LD", '
        '"author": {"@type": "Person", "name": "Test Author"}}'
    )
    return page("JSON-LD Valid", "<p>Article</p>", head=_jsonld(data))


@bp.get("/jsonld/invalid")
def jsonld_invalid():  # type: ignore[no-untyped-def]
    return page(
        "JSON-LD Invalid", "<p>Broken</p>", head=_jsonld('{"@context": "https://schema.org", "@type": ')
    )


@bp.get("/jsonld/speculation")
def jsonld_speculation():  # type: ignore[no-untyped-def]
    rules = '{"prerender": [{"source": "list", "urls": ["/jsonld/valid"]}]}'
    return page("Speculation Rules", "<p>Not JSON-LD</p>", head=_jsonld(rules, "speculationrules"))


@bp.get("/js-redirect/")
def js_redirect():  # type: ignore[no-untyped-def]
    script = "<script>addEventListener('load', () => { location.href = '/js-redirect/dest'; });</script>"
    return page("JS Redirect", "<p>Leaving after load.</p>" + script)


@bp.get("/js-redirect/dest")
def js_redirect_dest():  # type: ignore[no-untyped-def]
    return page("JS Redirect Destination")


@bp.get("/meta-refresh/")
def meta_refresh():  # type: ignore[no-untyped-def]
    head = '<meta http-equiv="refresh" content="0; url=/meta-refresh/dest">\n'
    return page("Meta Refresh", "<p>Refreshing.</p>", head=head)


@bp.get("/meta-refresh/dest")
def meta_refresh_dest():  # type: ignore[no-untyped-def]
    return page("Meta Refresh Destination")


@bp.get("/analytics/")
def analytics():  # type: ignore[no-untyped-def]
    # Inline snippets only: the ids are there to be detected, nothing is loaded from the network
    head = """<meta name="generator" content="WordPress 6.4">
<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});
/* would load https://www.googletagmanager.com/gtm.js?id=' + i */})(window,document,'script','dataLayer','GTM-ABC1234');</script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}
gtag('js', new Date()); gtag('config', 'G-XXXX1234');</script>
"""
    body = "<noscript>GTM-ABC1234</noscript><p>Tracked page.</p>"
    return page("Analytics", body, head=head)
