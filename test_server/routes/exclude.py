"""/exclude/: pages for --exclude globs, --exclude-keyword and --exclude-url."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import external, links, page

bp = Blueprint("exclude", __name__, url_prefix="/exclude")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Exclude Top",
        links(
            ("page-a", "Page A"),
            ("page-b", "Page B"),
            ("secret/hidden", "Hidden"),
            (external("/exclude/external-a"), "External A"),
            (external("/exclude/external-b"), "External B"),
        ),
    )


@bp.get("/page-a")
def page_a():  # type: ignore[no-untyped-def]
    return page("Exclude Page A", "<p>Allowed.</p>")


@bp.get("/page-b")
def page_b():  # type: ignore[no-untyped-def]
    return page("Exclude Page B", "<p>This page contains FORBIDDEN_KEYWORD.</p>")


@bp.get("/secret/hidden")
def hidden():  # type: ignore[no-untyped-def]
    return page("Secret Hidden", "<p>Excluded by glob.</p>")


@bp.get("/external-a")
def external_a():  # type: ignore[no-untyped-def]
    return page("External A")


@bp.get("/external-b")
def external_b():  # type: ignore[no-untyped-def]
    return page("External B")
