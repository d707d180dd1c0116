"""`/commits` and `/diff`: the archive's crawl generations and what changed between two of them."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from nitpicker_core import MenuLink, hookimpl
from nitpicker_viewer.app import query, render
from nitpicker_viewer.tables import Col, paged_table

commits = Blueprint("commits", __name__, template_folder="../templates")

DIFF_LIMIT = 500  # URLs per list; the API's /api/diff?limit= gives more


@commits.get("/commits")
def index() -> str:
    table = paged_table("commits", "view.commits", "commits", (
        Col("id", "col.commit"), Col("kind", "col.kind"), Col("status", "col.state"),
        Col("started_at", "col.started"), Col("finished_at", "col.finished"), Col("pages", "col.pages", None, "num"),
        Col("parent_id", "col.parent")), sortable=False)
    for row in table.rows:
        row["pages"] = (row.get("stats") or {}).get("pages")
    return render("commits.html", title="view.commits", table=table)


@commits.get("/diff")
def diff() -> str:
    data = query("diff", base=request.args.get("base"), limit=DIFF_LIMIT)
    return render("diff.html", title="view.diff", d=data, limit=DIFF_LIMIT)


@hookimpl
def register_viewer_blueprints(register: Any) -> None:
    register(commits)


@hookimpl
def viewer_menu_links(request: Any) -> list[MenuLink]:
    return [MenuLink("/commits", "view.commits", order=50)]
