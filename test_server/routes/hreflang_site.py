"""/hreflang-site/ and /pagination-site/: one instance of each defect the hreflang and pagination checks find.

Hreflang alternates are written in the markup and, on /hreflang-site/header, in the HTTP Link header; the
pagination series uses rel=next/prev in both as well. The home pages link every page but /hreflang-site/hidden.
The sm-* pages' alternates are declared by /hreflang-site/sitemap.xml (``<xhtml:link>``, read when a crawl is
given ``--sitemap``), sm-ja's in its markup: sm-en's set and sm-ja's confirm each other across the two sources.
"""

from __future__ import annotations

from html import escape

from flask import Blueprint, Response, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("hreflang_site", __name__)
H = "/hreflang-site"
P = "/pagination-site"


def _abs(path: str) -> str:
    return request.host_url.rstrip("/") + path if path.startswith("/") else path


def _alternates(*pairs: tuple[str, str]) -> str:
    return "".join(
        f'<link rel="alternate" hreflang="{escape(code)}" href="{escape(_abs(href))}">\n'
        for code, href in pairs
    )


# page name -> its hreflang alternates (code, href)
HREFLANG: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("en", f"{H}/en"),
        ("fr", f"{H}/fr"),
        ("de", f"{H}/de"),  # de gives itself de-AT and does not name en back
        ("es", f"{H}/old-es"),  # a redirect
        ("it", f"{H}/noindex-it"),
        ("pt", f"{H}/gone"),  # a 404
        ("x-default", f"{H}/en"),
    ),
    "fr": (("en", f"{H}/en"), ("fr", f"{H}/fr"), ("x-default", f"{H}/en")),
    "de": (("de-AT", f"{H}/de"),),  # no x-default
    "bad": (
        ("not a code", f"{H}/bad"),
        ("", f"{H}/bad"),
        ("en_US", f"{H}/en"),
        ("fr", "javascript:alert(1)"),
        ("en-GB", f"{H}/bad"),
        ("x-default", f"{H}/bad"),
    ),
    "dup": (("ja", f"{H}/dup"), ("fr", f"{H}/fr"), ("fr", f"{H}/fr-ca"), ("x-default", f"{H}/dup")),
    "noself": (("en", f"{H}/en"), ("x-default", f"{H}/en")),
    "lonely": (("ja", f"{H}/lonely"), ("en", f"{H}/hidden"), ("x-default", f"{H}/lonely")),
    "sm-ja": (("ja", f"{H}/sm-ja"), ("en", f"{H}/sm-en"), ("x-default", f"{H}/sm-en")),  # sm-en's: sitemap
}
XHTML = "http://www.w3.org/1999/xhtml"
# sitemap <url> of a page -> the (code, href) of its <xhtml:link rel="alternate"> elements
SITEMAP: dict[str, tuple[tuple[str, str], ...]] = {
    "sm-en": (("en", f"{H}/sm-en"), ("fr", f"{H}/sm-fr"), ("ja", f"{H}/sm-ja"), ("x-default", f"{H}/sm-en")),
    "sm-fr": (("en", f"{H}/sm-en"), ("fr", f"{H}/sm-fr"), ("x-default", f"{H}/sm-en")),
    # sm-en does not name sm-de back; en_GB is no tag; gone answers 404; no x-default
    "sm-de": (("de", f"{H}/sm-de"), ("en", f"{H}/sm-en"), ("en_GB", f"{H}/sm-en"), ("es", f"{H}/gone")),
    # not a page (404): its sitemap alternates are no page's
    "gone": (("not a code", f"{H}/gone"),),
}
HOME = (
    "en",
    "fr",
    "de",
    "es",
    "old-es",
    "noindex-it",
    "gone",
    "bad",
    "dup",
    "fr-ca",
    "noself",
    "lonely",
    "header",
    "sm-en",
    "sm-fr",
    "sm-de",
    "sm-ja",
)


@bp.get(f"{H}/")
def hreflang_home():  # type: ignore[no-untyped-def]
    return page("Hreflang Site", links(*((f"{H}/{name}", name) for name in HOME)))


@bp.get(f"{H}/sitemap.xml")
def hreflang_sitemap():  # type: ignore[no-untyped-def]
    items = []
    for name, pairs in SITEMAP.items():
        links_ = "".join(
            f'<xhtml:link rel="alternate" hreflang="{escape(code)}" href="{escape(_abs(href))}"/>'
            for code, href in pairs
        )
        if name == "sm-fr":  # a <link> of the sitemap's own namespace is no alternate: never read
            links_ += f'<link rel="alternate" hreflang="not valid" href="{escape(_abs(H + "/sm-fr"))}"/>'
        items.append(f"<url><loc>{escape(_abs(f'{H}/{name}'))}</loc>{links_}</url>\n")
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="{XHTML}">\n'
        + "".join(items)
        + "</urlset>\n"
    )
    return Response(body, content_type="application/xml")


@bp.get(f"{H}/<name>")
def hreflang_page(name: str):  # type: ignore[no-untyped-def]
    if name == "old-es":
        return redirect(f"{H}/es", code=301)
    if name == "noindex-it":
        return page("Italiano", lang="it", head='<meta name="robots" content="noindex">\n')
    if name == "header":
        response = page("Header", lang="ja", body=links((f"{H}/", "Home")))
        response.headers["Link"] = (
            f'<{_abs(H + "/header")}>; rel="alternate"; hreflang="ja", '
            f'<{H}/fr>; rel="alternate"; hreflang="fr", '
            f'<{_abs(H + "/header")}>; rel="alternate"; hreflang="qq-bogus-tag-x"'
        )
        return response
    if name not in HREFLANG and name not in ("es", "fr-ca", "hidden", "sm-en", "sm-fr", "sm-de"):
        return page("Not Found", status=404)
    return page(f"Page {name}", links((f"{H}/", "Home")), head=_alternates(*HREFLANG.get(name, ())))


def _pagination(*pairs: tuple[str, str]) -> str:
    return "".join(f'<link rel="{rel}" href="{escape(_abs(href))}">\n' for rel, href in pairs)


# page name -> (rel=next/prev links in the markup, anchors, extra head)
PAGINATION: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, ...], str]] = {
    "list-1": ((("next", f"{P}/list-2"),), (f"{P}/list-2",), ""),
    "list-2": ((("prev", f"{P}/list-1"), ("next", f"{P}/list-3")), (f"{P}/list-1", f"{P}/list-3"), ""),
    # list-3's next has no anchor, and list-4 names list-2 as its prev
    "list-3": ((("prev", f"{P}/list-2"), ("next", f"{P}/list-4")), (f"{P}/list-2",), ""),
    "list-4": ((("prev", f"{P}/list-2"), ("next", f"{P}/gone")), (f"{P}/list-2", f"{P}/gone"), "canonical"),
    "loop-a": ((("next", f"{P}/loop-b"), ("prev", f"{P}/loop-b")), (f"{P}/loop-b",), ""),
    "loop-b": ((("next", f"{P}/loop-a"), ("prev", f"{P}/loop-a")), (f"{P}/loop-a",), ""),
    "self": ((("next", f"{P}/self"),), (), ""),
    "header-1": ((), (f"{P}/header-2",), ""),
    "header-2": ((), (f"{P}/header-1",), "noindex"),
    # chapters of a document (Sphinx writes next/prev like this) whose canonical names the same chapter on
    # another host: no page of the series is hidden, so no pagination finding
    "chapter-1": ((("next", f"{P}/chapter-2"),), (f"{P}/chapter-2",), "elsewhere"),
    "chapter-2": ((("prev", f"{P}/chapter-1"),), (f"{P}/chapter-1",), "elsewhere"),
}


@bp.get(f"{P}/")
def pagination_home():  # type: ignore[no-untyped-def]
    return page(
        "Pagination Site",
        links(*((f"{P}/{n}", n) for n in ("list-1", "list-4", "loop-a", "self", "header-1", "chapter-1"))),
    )


@bp.get(f"{P}/<name>")
def pagination_page(name: str):  # type: ignore[no-untyped-def]
    if name not in PAGINATION:
        return page("Not Found", status=404)
    rels, anchors, extra = PAGINATION[name]
    head = _pagination(*rels)
    if extra == "canonical":
        head += f'<link rel="canonical" href="{_abs(P + "/list-1")}">\n'
    if extra == "noindex":
        head += '<meta name="robots" content="noindex">\n'
    if extra == "elsewhere":
        head += f'<link rel="canonical" href="https://docs.example.org{P}/{name}">\n'
    response = page(f"Page {name}", links(*((a, a.rsplit("/", 1)[1]) for a in anchors)), head=head)
    if name == "header-1":
        response.headers["Link"] = f'<{P}/header-2>; rel="next"'
    if name == "header-2":
        response.headers["Link"] = f'<{_abs(P + "/header-1")}>; rel="prev"'
    return response
