"""The demo shop under /showcase/: every page is there to show one thing nitpicker finds.

Version 1 is what the first run crawls; version 2 (the shop a little later) adds and removes pages, fixes
some problems and makes new ones, so a second run into the same archive shows what changed.
"""

from __future__ import annotations

import json
from html import escape

from flask import Blueprint, Response, current_app, redirect, request

PREFIX = "/showcase"
VERSIONS = (1, 2)

bp = Blueprint("showcase", __name__, url_prefix=PREFIX)

VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
CSS = """body { font-family: sans-serif; color: #222; background: #fff; margin: 2em; }
nav a { margin-right: 1em; }
.faint { color: #c8c8c8; }
"""

# name → (title, description); 4 and 5 share both on purpose (duplicate titles and descriptions)
PRODUCTS = {
    1: ("Oak table", "A solid oak dining table for six."),
    2: ("Linen chair", "A light chair with a linen seat."),
    3: ("Desk lamp", "A brass desk lamp with a warm bulb."),
    4: ("Garden chair", "A folding chair for the garden."),
    5: ("Garden chair", "A folding chair for the garden."),
    6: ("Garden chair, blue", "The folding garden chair in blue."),
    7: ("Bookshelf", "A tall bookshelf in white ash."),
    8: ("Rug", "A hand-woven wool rug."),
    9: ("Sofa", "A three-seat sofa in grey wool."),
}


def version() -> int:
    """The version this server shows (the app's ``NITPICKER_DEMO_VERSION``; 1 when the app sets none)."""
    return int(current_app.config.get("NITPICKER_DEMO_VERSION", 1))


def _url(path: str) -> str:
    return f"{PREFIX}/{path}"


def _partner(path: str) -> str:
    """The same server as 127.0.0.1: another host, so its links are external ones."""
    return f"http://127.0.0.1:{request.server[1] if request.server else 80}{PREFIX}/{path}"


def _html(
    title: str,
    body: str,
    *,
    lang: str | None = "en",
    description: str | None = None,
    head: str = "",
    status: int = 200,
) -> Response:
    lang_attr = f' lang="{lang}"' if lang else ""
    meta = f'<meta name="description" content="{escape(description)}">\n' if description else ""
    nav = (
        f'<nav><a href="{_url("")}">Home</a><a href="{_url("products/")}">Products</a>'
        f'<a href="{_url("blog/")}">Blog</a><a href="{_url("ja/")}">日本語</a></nav>'
    )
    html = (
        f'<!DOCTYPE html>\n<html{lang_attr}>\n<head>\n<meta charset="UTF-8">\n<title>{escape(title)}</title>\n'
        f'{meta}{VIEWPORT}<link rel="stylesheet" href="{_url("style.css")}">\n{head}</head>\n'
        f"<body>\n{nav}\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )
    response = Response(html, status=status, content_type="text/html; charset=UTF-8")
    if (
        status == 200
    ):  # an ETag, so `crawl --update` can ask with If-None-Match and get 304 for unchanged pages
        response.add_etag()
        response.make_conditional(request)
    return response


def _list(*items: tuple[str, str]) -> str:
    return (
        "<ul>"
        + "".join(f'<li><a href="{escape(href)}">{escape(text)}</a></li>' for href, text in items)
        + "</ul>"
    )


def _jsonld(data: dict[str, object]) -> str:
    return f'<script type="application/ld+json">{json.dumps(data, ensure_ascii=False)}</script>\n'


def _image(name: str, alt: str | None = None, size: tuple[int, int] | None = (160, 120)) -> str:
    alt_attr = f' alt="{escape(alt)}"' if alt is not None else ""
    size_attr = f' width="{size[0]}" height="{size[1]}"' if size else ""
    return f'<img src="{_url(f"img/{name}.svg")}"{alt_attr}{size_attr}>'


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    links = [
        (_url("products/"), "All products"),
        (_url("blog/"), "Blog"),
        (_url("ja/"), "日本語のページ"),
        (_url("about"), "About us"),
        (_url("contact"), "Contact"),
        (_url("sale"), "Sale (moved for good)"),
        (_url("promo"), "Promotion (two redirects)"),
        (_url("stores"), "Our stores (server error)"),
        (_partner("partner"), "Our partner"),
        (_partner("partner-gone"), "A partner that closed"),
    ]
    if version() == 1:  # version 2 drops the link to the page that is gone: a broken link fixed
        links.insert(5, (_url("old-catalogue"), "Old catalogue"))
    org = {
        "@context": "https://schema.org",
        "@type": "Organization",
        "name": "Demo Shop",
        "url": request.host_url.rstrip("/") + _url(""),
    }
    body = (
        f"<h1>Demo Shop</h1>\n<p>Furniture for home and garden. This little shop is nitpicker's demo: "
        f"each page shows one thing an audit finds.</p>\n{_image('banner', 'Our showroom', (320, 120))}\n"
        + _list(*links)
    )
    return _html(
        "Demo Shop", body, description="Furniture for home and garden, made to be audited.", head=_jsonld(org)
    )


def _product_numbers() -> list[int]:
    return [1, 2, 3, 4, 5, 6, 7, 8] if version() == 1 else [1, 2, 3, 4, 5, 6, 7, 9]


@bp.get("/products/")
def products():  # type: ignore[no-untyped-def]
    items = [(_url(f"products/{n}"), PRODUCTS[n][0]) for n in _product_numbers()]
    body = (
        "<h1>Products</h1>\n" + _list(*items) + f'\n<p><a href="{_url("products/99")}">Clearance item</a></p>'
    )
    return _html("Products — Demo Shop", body, description="Every piece of furniture we sell.")


@bp.get("/products/<int:n>")
def product(n: int):  # type: ignore[no-untyped-def]
    if n not in _product_numbers():
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    name, description = PRODUCTS[n]
    if n == 2 and version() == 2:
        name = "Linen chair (new colours)"  # a changed title between the versions
    head = _jsonld(
        {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": name,
            "description": description,
            "offers": {"@type": "Offer", "price": 100 + n * 10, "priceCurrency": "EUR"},
        }
    )
    if n == 3:  # a trailing comma: JSON-LD that does not parse
        head = '<script type="application/ld+json">{"@type": "Product", "name": "Desk lamp",}</script>\n'
    if n == 6:  # a canonical naming another page, and a shared title that says something else
        head += (
            f'<link rel="canonical" href="{request.host_url.rstrip("/")}{_url("products/5")}">\n'
            '<meta property="og:title" content="Cheap chairs!">\n'
        )
    if n == 7:
        head += '<meta property="og:description" content="Our best seller.">\n'
    size = None if n == 7 else (160, 120)  # an image without width/height: the layout shifts
    body = (
        f"<h1>{escape(name)}</h1>\n{_image(f'product-{n}', name, size)}\n<p>{escape(description)}</p>\n"
        f'<p><a href="{_url("products/")}">Back to all products</a></p>'
    )
    return _html(f"{name} — Demo Shop", body, description=description, head=head)


POSTS = {
    1: "Choosing a dining table",
    2: "Caring for linen",
    3: "Ten things about garden chairs that everybody who owns a garden should know before the summer",
    4: "Our new showroom",
    5: "Draft: the autumn collection",
    6: "The sofa is here",
}


def _post_numbers() -> list[int]:
    return [1, 2, 3, 4, 5] if version() == 1 else [1, 2, 3, 4, 5, 6]


@bp.get("/blog/")
def blog():  # type: ignore[no-untyped-def]
    items = [(_url(f"blog/{n}"), POSTS[n]) for n in _post_numbers()]
    return _html("Blog — Demo Shop", "<h1>Blog</h1>\n" + _list(*items), description="News from the shop.")


@bp.get("/blog/<int:n>")
def post(n: int):  # type: ignore[no-untyped-def]
    if n not in _post_numbers():
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    title, head = POSTS[n], ""
    heading = f"<h1>{escape(title)}</h1>"
    text = "<p>We write about furniture and how to keep it for a long time.</p>"
    description: str | None = f"{title}: a post from the Demo Shop blog."
    if n == 2:  # no meta description and no h1
        description, heading = None, f"<h2>{escape(title)}</h2>"
    if n == 3:  # a title too long for search results, and two h1
        heading += "\n<h1>Before the summer</h1>"
    if n == 4 and version() == 1:  # a script error in the console (fixed in version 2)
        text += "\n<script>showroomMap.init();</script>"
    if n == 5:  # linked from the blog, but asks not to be indexed
        head = '<meta name="robots" content="noindex">\n'
        if version() == 2:  # links a product that version 2 no longer sells: a new broken link
            text += f'\n<p>Pairs well with the <a href="{_url("products/8")}">wool rug</a>.</p>'
    if n == 6:
        text += f'\n<p>Meet the <a href="{_url("products/9")}">sofa</a>.</p>'
    return _html(title, f"{heading}\n{text}", description=description, head=head)


JA_PAGES = {
    "company": (
        "会社案内",
        """<h1>会社案内</h1>
<p>私たちは家具を作っています。お客様のご注文をを毎月お届けします。</p>
<p>ｻｰﾋﾞｽの詳細は担当者にお問い合わせください。</p>
<p>送料は全国一律１０００円です。</p>""",
    ),
    "care": (
        "お手入れ",
        """<h1>お手入れ</h1>
<p>サーバの設定とサーバーの監視を行います。木の家具は乾いた布で拭いてください。</p>
<p>この説明書は重要である。</p>""",
    ),
}


@bp.get("/ja/")
def ja_top():  # type: ignore[no-untyped-def]
    items = [(_url(f"ja/{slug}"), title) for slug, (title, _) in JA_PAGES.items()]
    return _html(
        "日本語のページ",
        "<h1>日本語のページ</h1>\n" + _list(*items),
        lang="ja",
        description="デモショップの日本語のページです。",
    )


@bp.get("/ja/<slug>")
def ja_page(slug: str):  # type: ignore[no-untyped-def]
    if slug not in JA_PAGES:
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    title, body = JA_PAGES[slug]
    if slug == "company" and version() == 2:  # the doubled particle is fixed in version 2
        body = body.replace("をを", "を")
    return _html(title, body, lang="ja", description=f"{title}のページです。")


@bp.get("/about")
def about():  # type: ignore[no-untyped-def]
    # Accessibility problems: no lang, an image without alt, a field without label, an empty link, faint text
    body = f"""<h1>About us</h1>
{_image("team")}
<form action="{_url("")}"><input type="text" name="newsletter"></form>
<p><a href="{_url("contact")}"></a></p>
<p class="faint">Family-run since 1987.</p>
<p><a href="{_url("old-catalogue")}">Our old catalogue</a></p>"""
    return _html("About us — Demo Shop", body, lang=None, description="Who we are.")


@bp.get("/contact")
def contact():  # type: ignore[no-untyped-def]
    # Markup problems: a duplicate id, a skipped heading level, an obsolete element, an empty button
    body = f"""<h1>Contact</h1>
<div id="address">Main Street 1</div>
<div id="address">Open Monday to Friday</div>
<h3>Write to us</h3>
<center>We answer within a day.</center>
<button type="button"></button>
<p><a href="mailto:shop@example.com">shop@example.com</a> · <a href="{_url("stores")}">Stores</a></p>"""
    return _html("Contact — Demo Shop", body, description="How to reach us.")


@bp.get("/sale")
def sale():  # type: ignore[no-untyped-def]
    return redirect(_url("products/"), code=301)


@bp.get("/promo")
def promo():  # type: ignore[no-untyped-def]
    return redirect(_url("sale"), code=302)  # a chain: promo → sale → products/


@bp.get("/stores")
def stores():  # type: ignore[no-untyped-def]
    return _html("Server error", "<h1>Something went wrong</h1>", status=500)


@bp.get("/partner")
def partner():  # type: ignore[no-untyped-def]
    return _html("Partner", "<h1>Our partner</h1>", description="A partner site.")


@bp.get("/style.css")
def style():  # type: ignore[no-untyped-def]
    return Response(CSS, content_type="text/css; charset=UTF-8")


@bp.get("/img/<name>.svg")
def image(name: str):  # type: ignore[no-untyped-def]
    # The banner is drawn far larger than it is shown: an oversized image
    width, height = (2400, 900) if name == "banner" else (160, 120)
    hue = sum(map(ord, name)) % 360
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
        f'<rect width="100%" height="100%" fill="hsl({hue}, 40%, 70%)"/>'
        f'<text x="50%" y="50%" text-anchor="middle" font-size="{height // 6}">{escape(name)}</text></svg>'
    )
    return Response(svg, content_type="image/svg+xml")
