"""/scope/: a blog, docs and an admin area that nothing links to."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("scope", __name__, url_prefix="/scope")


@bp.get("/blog/")
def blog():  # type: ignore[no-untyped-def]
    return page("Blog Top", links(("post-1", "Post 1"), ("post-2", "Post 2"), ("/scope/docs/", "Docs")))


@bp.get("/blog/<any('post-1', 'post-2'):name>")
def post(name: str):  # type: ignore[no-untyped-def]
    return page(f"Post {name[-1]}")


@bp.get("/docs/")
def docs():  # type: ignore[no-untyped-def]
    return page("Docs Top", links(("/scope/docs/api", "API")))


@bp.get("/docs/api")
def api():  # type: ignore[no-untyped-def]
    return page("API Docs")


@bp.get("/admin/")
def admin():  # type: ignore[no-untyped-def]
    return page("Admin", links(("/scope/admin/settings", "Settings")))


@bp.get("/admin/settings")
def settings():  # type: ignore[no-untyped-def]
    return page("Settings")
