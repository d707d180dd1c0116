"""`/summary`: the summary of the archive (counts, status, content types, metadata), plus the language switch.

The home page `/` is the Issues overview (blueprints/issues.py), mounted from here with the summary."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, make_response, redirect, request

from nitpicker_core import MenuLink, hookimpl
from nitpicker_viewer.app import query, render
from nitpicker_viewer.blueprints.issues import issues
from nitpicker_viewer.i18n import COOKIE, LANGUAGES

home = Blueprint("home", __name__, template_folder="../templates", static_folder="../static",
                 static_url_path="/static")


def _share(count: int, total: int) -> float:
    return round(100.0 * count / total, 1) if total else 0.0


@home.get("/summary")
def summary() -> str:
    data = query("summary")
    status = data["status"]
    total = status["total"]
    codes = [{"label": str(row["status"]), "count": row["count"], "pct": _share(row["count"], total)}
             for row in status["by_code"]]
    if status["failed"]:
        codes.append({"label": "summary.failed", "count": status["failed"], "pct": _share(status["failed"], total)})
    # URLs never requested (--no-fetch-external, a crawl cut short) are a category of their own, never failures.
    not_checked = status.get("not_checked", 0)
    if not_checked:
        codes.append({"label": "summary.not_checked", "count": not_checked, "pct": _share(not_checked, total)})
    failures = [{"label": row["kind"], "count": row["count"], "pct": _share(row["count"], status["failed"])}
                for row in status["failed_by_kind"]]
    type_total = sum(row["count"] for row in data["content_types"])
    types = [{"label": "category." + row["category"], "count": row["count"], "pct": _share(row["count"], type_total),
              "internal": row["internal"], "external": row["external"]}
             for row in data["content_types"] if row["count"]]
    fill = [{"label": "field." + row["field"], "count": row["filled"], "total": row["total"],
             "pct": round(100.0 * row["rate"], 1)} for row in data["metadata_fill"]]
    return render("summary.html", title="view.summary", counts=data["counts"], status=status, codes=codes,
                  failures=failures, types=types, fill=fill, not_checked=not_checked)


@home.get("/lang/<code>")
def set_language(code: str) -> Any:
    target = request.args.get("next", "/")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        target = "/"  # only paths of this viewer: never an open redirect
    response = make_response(redirect(target))
    if code in LANGUAGES:
        response.set_cookie(COOKIE, code, max_age=365 * 24 * 3600, samesite="Lax")
    return response


@hookimpl
def register_viewer_blueprints(register: Any) -> None:
    register(home)
    register(issues)


@hookimpl
def viewer_menu_links(request: Any) -> list[MenuLink]:
    return [MenuLink("/", "view.issues", order=0), MenuLink("/summary", "view.summary", order=1)]
