"""/directives-site/: a small site with one instance of each defect the directive and link checks find.

The home page (English) links the others: one with a "click here" anchor, one with rel=nofollow, a page
whose meta robots says nofollow, one whose X-Robots-Tag says so, one whose meta robots and X-Robots-Tag
disagree (noindex by the header), a dead end, a duplicate naming another page as canonical, a Japanese page
(詳しくはこちら is non-descriptive there, "click here" is not judged by the English list) and a chain of
pages six clicks deep, and a page robots.txt blocks.
"""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("directives_site", __name__, url_prefix="/directives-site")
HOME = "/directives-site/"
DEEP = 6


@bp.get("/")
def home() -> Response:
    body = links(
        (f"{HOME}a", "click here"),
        (f"{HOME}meta-nofollow", "Meta nofollow"),
        (f"{HOME}header-nofollow", "Header nofollow"),
        (f"{HOME}conflict", "Conflict"),
        (f"{HOME}dead-end", "Dead end"),
        (f"{HOME}copy", "Copy of A"),
        (f"{HOME}ja", "日本語"),
        (f"{HOME}deep-1", "Deep"),
        ("/private/page", "Private"),
    )
    body += f'<p><a href="{HOME}b" rel="nofollow">Page B</a></p>'
    return page("Directives Site", body)


@bp.get("/<name>")
def named(name: str) -> Response:
    back = links((HOME, "Home"))
    if name in ("a", "b"):
        return page(f"Page {name}", back)
    if name == "meta-nofollow":
        return page("Meta nofollow", back, head='<meta name="robots" content="nofollow">\n')
    if name == "header-nofollow":
        response = page("Header nofollow", back)
        response.headers["X-Robots-Tag"] = "nofollow"
        return response
    if name == "conflict":
        response = page("Conflict", back, head='<meta name="robots" content="index, follow">\n')
        response.headers["X-Robots-Tag"] = "noindex"
        return response
    if name == "dead-end":
        return page("Dead end", "<p>Nothing links on from here.</p>")
    if name == "copy":
        return page("Copy", back, head=f'<link rel="canonical" href="{HOME}a">\n')
    if name == "ja":
        return page(
            "日本語",
            links((f"{HOME}a", "詳しくはこちら"), (f"{HOME}b", "click here"), (HOME, "ホーム")),
            lang="ja",
        )
    if name.startswith("deep-") and name[5:].isdigit() and 1 <= int(name[5:]) <= DEEP:
        n = int(name[5:])
        more = links((f"{HOME}deep-{n + 1}", f"Level {n + 1}")) if n < DEEP else ""
        return page(f"Level {n}", back + more)
    return page("Not Found", status=404)
