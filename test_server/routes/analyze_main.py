"""/analyze/main/: pages whose main content is found by each method of the main-contents analyzer."""

from __future__ import annotations

import base64

from flask import Blueprint, Response

from test_server.routes._html import page

bp = Blueprint("analyze_main", __name__, url_prefix="/analyze/main")

GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


@bp.get("/pixel.gif")
def pixel():  # type: ignore[no-untyped-def]
    return Response(GIF, content_type="image/gif")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    # Found by <main>
    return page(
        "Main fixtures",
        """<header><p>Site header</p></header>
<main>
<h1>Main pages</h1>
<p>Four pages.</p>
<ul><li><a href="role">Role</a></li><li><a href="article">Article</a></li><li><a href="dense">Dense</a></li><li><a href="custom">Custom</a></li></ul>
</main>
<footer><p>Footer text</p></footer>""",
    )


@bp.get("/role")
def role():  # type: ignore[no-untyped-def]
    # Found by [role=main]
    return page(
        "Role main",
        """<div role="main" id="content">
<h2>Role main</h2>
<p>Alpha beta.</p>
<img src="/analyze/main/pixel.gif" alt="x"> <img src="/analyze/main/pixel.gif">
</div>
<div class="side"><p>Side</p></div>""",
    )


@bp.get("/article")
def article():  # type: ignore[no-untyped-def]
    # Found by article: of two, the one with more text
    return page(
        "Articles",
        """<article><h2>First</h2><p>Short one.</p></article>
<article id="long"><h2>Second</h2><p>This article is the longer one.</p>
<table><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td colspan="2">Both</td></tr></tbody></table>
</article>""",
    )


@bp.get("/dense")
def dense():  # type: ignore[no-untyped-def]
    # No landmark: the densest block is #content (neither section alone holds 60% of the text)
    return page(
        "Dense",
        """<div id="wrap">
<div id="header"><p>Brand</p></div>
<div id="content">
<section class="intro"><h1>Dense</h1><p>Intro words here, a few more of them to balance the body.</p></section>
<section class="body"><p>The body of the page has most of the words, more than the intro.</p></section>
</div>
<div id="sidebar"><p>Sidebar <a href="/analyze/main/">link text</a></p></div>
</div>""",
    )


@bp.get("/custom")
def custom():  # type: ignore[no-untyped-def]
    # <main> by default; `.entry` with --main-content-selector .entry
    return page(
        "Custom",
        """<main><p>Main text.</p>
<div class="entry"><h2>Entry</h2><p>Entry text.</p><a href="/analyze/main/">Back</a></div>
</main>""",
    )
