"""/analyze/source/: pages whose markup differs between the HTML the server sent and the rendered DOM."""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("analyze_source", __name__, url_prefix="/analyze/source")

# Like Sphinx's sidebar script: it copies the search box into the sidebar on every page, id and all, so
# the rendered DOM has a duplicate id the server never sent.
SIDEBAR_JS = """
const box = document.getElementById("searchbox");
document.getElementById("sidebar").appendChild(box.cloneNode(true));
"""

# Served byte for byte: the stray </i> on line 11 is a parse error of the sent HTML that the browser
# repairs (drops), so only a reader of the server's HTML sees it (html5lib reports 11:24, the ">").
DOC = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>Sidebar page</title>
<script src="/analyze/source/sidebar.js" defer></script>
</head>
<body>
<h1>Sidebar page</h1>
<div id="searchbox"><input type="search" aria-label="Search"></div>
<p>Text with a stray</i> end tag.</p>
<nav id="sidebar"><a href="/analyze/source/">Home</a> <a href="/analyze/source/long">Long</a></nav>
</body>
</html>
"""
LONG_PARAGRAPHS = 60  # about 4,000 characters: over the max_size the tests set, far under the default


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Source fixtures",
        "<h1>Source fixtures</h1>\n" + links(("sidebar", "Sidebar page"), ("long", "Long page")),
    )


@bp.get("/sidebar")
def sidebar():  # type: ignore[no-untyped-def]
    return Response(DOC, content_type="text/html; charset=UTF-8")


@bp.get("/sidebar.js")
def sidebar_js():  # type: ignore[no-untyped-def]
    return Response(SIDEBAR_JS, content_type="text/javascript; charset=UTF-8")


@bp.get("/long")
def long():  # type: ignore[no-untyped-def]
    body = "\n".join(
        f"<p>Paragraph {n} of a long page that says the same thing again.</p>" for n in range(LONG_PARAGRAPHS)
    )
    return page("Long page", f"<h1>Long page</h1>\n{body}")
