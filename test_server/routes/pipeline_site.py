"""/pipeline-site/: six slow pages (0.4 s each) and one broken link, for the pipeline's kill/resume tests."""

from __future__ import annotations

import time

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("pipeline_site", __name__, url_prefix="/pipeline-site")
PAGES = 6


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    items = [(f"p{n}", f"Page {n}") for n in range(1, PAGES + 1)]
    return page("Pipeline Site", "<p>alpha index</p>" + links(*items, ("missing", "Gone")))


@bp.get("/p<int:n>")
def numbered(n: int):  # type: ignore[no-untyped-def]
    if not 1 <= n <= PAGES:
        return page("Not Found", status=404)
    time.sleep(0.4)  # slow enough that a test can kill the crawl half-way
    return page(f"Page {n}", f"<p>alpha beta page {n}. Page text.</p>" + links(("./", "Index")))


@bp.get("/missing")
def missing():  # type: ignore[no-untyped-def]
    return page("Not Found", "<p>Gone.</p>", status=404)
