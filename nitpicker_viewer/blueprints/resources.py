"""Resource views: sub-resources with filters, the pages referring to one resource, and images."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Blueprint, abort, request

from nitpicker_core import MenuLink, RegisterBlueprint, hookimpl
from nitpicker_viewer.app import render
from nitpicker_viewer.pickers import options
from nitpicker_viewer.tables import Col, Filter, paged_table, status_filter

if TYPE_CHECKING:
    from flask import Request

resources = Blueprint("resources", __name__, template_folder="../templates")

ANY_YES_NO = (("", "any"), ("true", "yes"), ("false", "no"))


@resources.get("/resources")
def index() -> str:
    table = paged_table(
        "resources",
        "view.resources",
        "resources",
        (
            Col("url", "col.url", "url", "resource"),
            Col("status", "col.status", "status", "status"),
            Col("content_type", "col.content_type", "content_type"),
            Col("content_length", "col.size", "content_length", "num"),
            Col("compression", "col.compression", "compression"),
            Col("cdn", "col.cdn", "cdn"),
            Col("referrers", "col.referrers", "referrers", "num"),
            Col("is_external", "col.external", None, "bool"),
        ),
        filters=(
            Filter("content_type", "col.content_type", "select", options("resource_content_type")),
            status_filter(),
            Filter("external", "col.external", "select", ANY_YES_NO),
            Filter("url", "filter.url_contains"),
        ),
        default_sort="url",
    )
    return render("table_view.html", title="view.resources", table=table)


@resources.get("/resource")
def referrers() -> str:
    url = request.args.get("url", "")
    if not url:
        abort(400, "give ?url=")
    table = paged_table(
        "referrers",
        "resource.referrers",
        "resource-referrers",
        (
            Col("url", "col.url", None, "page"),
            Col("title", "col.title"),
            Col("status", "col.status", None, "status"),
            Col("content_type", "col.content_type"),
        ),
        params={"url": url},
        sortable=False,
    )
    return render(
        "resource.html",
        title="view.resource",
        table=table,
        url=url,
        resource=table.extra.get("resource") or {},
        hide_url=True,
    )


@resources.get("/images")
def images() -> str:
    table = paged_table(
        "images",
        "view.images",
        "images",
        (
            Col("page", "col.page", "page", "page"),
            Col("src", "col.src", "src", "url"),
            Col("alt", "col.alt", "alt"),
            Col("viewport_width", "col.viewport_width", "viewport_width", "num"),
            Col("width", "col.width", "width", "num"),
            Col("height", "col.height", "height", "num"),
            Col("natural_width", "col.natural_width", "natural_width", "num"),
            Col("natural_height", "col.natural_height", "natural_height", "num"),
            Col("is_lazy", "col.lazy", None, "bool"),
            Col("oversized", "col.oversized", None, "bool"),
        ),
        filters=(
            Filter("missing_alt", "filter.missing_alt", "check"),
            Filter("missing_size", "filter.missing_size", "check"),
            Filter("oversized", "filter.oversized", "check"),
            Filter("lazy", "col.lazy", "select", ANY_YES_NO),
            Filter("viewport_width", "col.viewport_width", "number"),
            Filter("url", "filter.page_contains"),
        ),
        default_sort="page",
    )
    return render("table_view.html", title="view.images", table=table)


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(resources)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [MenuLink("/resources", "view.resources", order=30), MenuLink("/images", "view.images", order=31)]
