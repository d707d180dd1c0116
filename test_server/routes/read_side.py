"""/read-side/: a small documentation-like site for what readers count: external links that a crawl with
--no-fetch-external never requests, pages linking to themselves (in-page #fragment anchors), an orphan
that only links to itself, and one broken target written relatively with fragments from several pages."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import external, links, page

bp = Blueprint("read_side", __name__, url_prefix="/read-side")


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    body = links(
        ("docs/a.html", "A"),
        ("docs/b.html", "B"),
        ("#top", "Top"),
        ("./", "Home again"),
        ("docs/gone.html#section", "Gone section"),
        (external("/read-side/ext/1"), "Ext 1"),
        (external("/read-side/ext/2"), "Ext 2"),
        (external("/read-side/ext/3"), "Ext 3"),
    )
    return page("Read side", body)


@bp.get("/docs/a.html")
def doc_a():  # type: ignore[no-untyped-def]
    body = links(
        ("gone.html#intro", "Gone intro"),
        ("gone.html#other", "Gone other"),
        ("missing.html", "Missing"),
        ("#a1", "A1"),
        ("#a2", "A2"),
        ("a.html#a3", "A3"),
        ("../", "Home"),
        (external("/read-side/ext/1"), "Ext 1"),
    )
    return page("Doc A", body)


@bp.get("/docs/b.html")
def doc_b():  # type: ignore[no-untyped-def]
    return page("Doc B", links(("gone.html", "Gone"), ("../", "Home"), ("a.html", "A")))


@bp.get("/orphan.html")
def orphan():  # type: ignore[no-untyped-def]
    """No page links here; it links only to itself (crawled as a second root)."""
    return page("Orphan", links(("#x", "X"), ("#y", "Y"), ("orphan.html#z", "Z")))


@bp.get("/ext/<int:n>")
def ext(n: int):  # type: ignore[no-untyped-def]
    return page(f"External {n}", "<p>Reached under the external hostname.</p>")


@bp.get("/docs/gone.html")
@bp.get("/docs/missing.html")
def gone():  # type: ignore[no-untyped-def]
    return page("Not Found", "<p>Nothing here.</p>", status=404)
