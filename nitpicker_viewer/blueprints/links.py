"""Link views: broken links, external links, isolated pages and clusters, and the interactive link graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, abort, jsonify, request, url_for

from nitpicker_core import MenuLink, RegisterBlueprint, hookimpl
from nitpicker_core.errors import NitpickerError
from nitpicker_viewer.app import query, render
from nitpicker_viewer.tables import Col, Filter, paged_table

if TYPE_CHECKING:
    from flask import Request

links = Blueprint("links", __name__, template_folder="../templates")

GRAPH_EDGE_LIMIT = 3000  # edges drawn; the nodes are their endpoints (a few thousand stay usable)
AROUND_NODES = 150  # pages drawn around one page: a hub's second ring is cut here (one page-detail per page)


GROUPS = ("target", "source", "anchor")
# Per grouping: the columns and the default sort (each group's own URL).
BROKEN_COLUMNS = {
    "target": (
        (
            Col("url", "col.resolved", "url", "page"),
            Col("status", "col.status", None, "status"),
            Col("pages", "col.referring_pages", "pages", "num"),
            Col("anchors", "col.anchors", "anchors", "num"),
            Col("sources", "col.source", None, "pages"),
            Col("links", "col.written", None, "anchors"),
        ),
        "url",
    ),
    "source": (
        (
            Col("source", "col.source", "source", "page"),
            Col("targets", "col.broken_targets", "targets", "num"),
            Col("anchors", "col.anchors", "anchors", "num"),
            Col("urls", "col.resolved", None, "pages"),
            Col("links", "col.written", None, "anchors"),
        ),
        "source",
    ),
    "anchor": (
        (
            Col("source", "col.source", "source", "page"),
            Col("href", "col.written", "href", "url"),
            Col("line", "col.line", None, "num"),
            Col("url", "col.resolved", "url", "page"),
            Col("status", "col.status", None, "status"),
            Col("text", "col.text"),
        ),
        "source",
    ),
}


@links.get("/broken-links")
def broken() -> str:
    asked = request.args.get("group", "")
    group = asked if asked in GROUPS else "target"
    columns, default_sort = BROKEN_COLUMNS[group]
    table = paged_table(
        "broken",
        "view.broken_links",
        "broken-links",
        columns,
        filters=(Filter("group", "filter.group", "select", tuple((g, "group." + g) for g in GROUPS)),),
        params={"group": group},
        default_sort=default_sort,
    )
    if group == "anchor":  # line and column in one cell
        for row in table.rows:
            if row.get("line") is not None:
                row["line"] = f"{row['line']}:{row['col']}" if row.get("col") is not None else row["line"]
    return render("table_view.html", title="view.broken_links", table=table)


@links.get("/external-links")
def external() -> str:
    table = paged_table(
        "external",
        "view.external_links",
        "external-links",
        (
            Col("url", "col.destination", "url", "page"),
            Col("status", "col.status", "status", "status"),
            Col("error_kind", "col.error_kind"),
            Col("outcome", "col.outcome", None, "outcome"),
            Col("referrers", "col.referrers", "referrers", "num"),
            Col("anchors", "col.anchors", "anchors", "num"),
        ),
        default_sort="url",
    )
    return render("table_view.html", title="view.external_links", table=table, note="external.note")


@links.get("/isolated")
def isolated() -> str:
    table = paged_table(
        "isolated",
        "view.isolated_pages",
        "isolated-pages",
        (
            Col("url", "col.url", "url", "page"),
            Col("title", "col.title", "title"),
            Col("status", "col.status", "status", "status"),
            Col("root", "col.root", "root", "bool"),
        ),
        filters=(
            Filter(
                "include_roots",
                "filter.include_roots",
                "select",
                (("", "filter.default"), ("true", "yes"), ("false", "no")),
            ),
        ),
        default_sort="url",
    )
    return render("table_view.html", title="view.isolated_pages", table=table, tabs="isolated")


@links.get("/isolated/clusters")
def clusters() -> str:
    table = paged_table(
        "clusters",
        "view.isolated_clusters",
        "isolated-clusters",
        (
            Col("size", "col.size_pages", None, "num"),
            Col("roots", "col.roots", None, "pages"),
            Col("urls", "col.urls", None, "pages"),
        ),
        filters=(
            Filter("singletons", "filter.singletons", "check"),
            Filter("rooted", "filter.rooted", "check"),
        ),
        sortable=False,
    )
    return render(
        "table_view.html",
        title="view.isolated_clusters",
        table=table,
        tabs="isolated",
        note_text=("clusters.singletons", table.extra.get("singleton_total", 0)),
    )


@links.get("/graph")
def graph() -> str:
    # No query here: the picture loads its data from /api/link-graph (or /graph/around for one page's
    # neighbourhood), so the page answers at once and announces loading while a large graph is computed.
    url, depth = request.args.get("url", ""), _depth()
    commit = request.args.get("commit")
    api = (
        url_for("links.around", url=url, depth=depth, commit=commit)
        if url
        else url_for(
            "api.call", name="link-graph", limit=GRAPH_EDGE_LIMIT, sort="anchors", order="desc", commit=commit
        )
    )
    return render(
        "graph.html",
        title="view.graph",
        limit=GRAPH_EDGE_LIMIT,
        tabs="graph",
        api=api,
        centre=url,
        depth=depth,
        around_limit=AROUND_NODES,
    )


def _depth() -> int:
    return 2 if request.args.get("depth") == "2" else 1


@links.get("/graph/around")
def around() -> Response:
    """The internal pages within ``depth`` links of ``url`` (either direction) and the links between them,
    shaped as the ``link-graph`` answer; ``truncated`` when more than AROUND_NODES pages were reached."""
    url = request.args.get("url", "")
    if not url:
        abort(400, "give ?url=")
    return jsonify(neighbourhood(url, _depth()))


def neighbourhood(url: str, depth: int) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str], int] = {}
    reached, frontier, truncated = {url}, [url], False
    for level in range(depth + 1):
        following: list[str] = []
        for current in frontier:
            try:
                detail = query("page-detail", url=current)
            except NitpickerError:  # linked to but never recorded
                continue
            page = detail.get("page") or {}
            if page.get("is_external"):
                continue  # the graph is of the site's own pages
            nodes[current] = {"url": current, "status": page.get("status"), "title": page.get("title") or ""}
            if level == depth:
                continue
            pairs = [
                ((current, a.get("redirect_dest") or a["href"]), 1) for a in detail.get("outbound") or ()
            ]
            pairs += [
                ((i["source"], current), i.get("anchors") or 1)
                for i in (detail.get("inbound") or {}).get("items", ())
            ]
            for (source, target), anchors in pairs:
                if source == target:
                    continue
                edges[(source, target)] = (
                    edges.get((source, target), 0) + anchors if source == current else anchors
                )
                other = target if source == current else source
                if other in reached:
                    continue
                if len(reached) >= AROUND_NODES:
                    truncated = True
                    continue
                reached.add(other)
                following.append(other)
        frontier = following
    items = [
        {"source": s, "target": t, "anchors": n}
        for (s, t), n in sorted(edges.items())
        if s in nodes and t in nodes
    ]
    return {
        "items": items,
        "nodes": sorted(nodes.values(), key=lambda n: n["url"]),
        "centre": url,
        "depth": depth,
        "total": len(items),
        "truncated": truncated,
    }


@links.get("/graph/edges")
def edges() -> str:
    table = paged_table(
        "edges",
        "graph.edges",
        "link-graph",
        (
            Col("source", "col.source", "source", "page"),
            Col("target", "col.target", "target", "page"),
            Col("anchors", "col.anchors", "anchors", "num"),
        ),
        default_sort="source",
    )
    return render("table_view.html", title="graph.edges", table=table, tabs="graph")


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(links)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [
        MenuLink("/broken-links", "view.broken_links", order=20),
        MenuLink("/external-links", "view.external_links", order=21),
        MenuLink("/isolated", "view.isolated", order=22),
        MenuLink("/graph", "view.graph", order=23),
    ]
