"""`/summary` (counts, status, content types, metadata; each number leads to its list), `/search`, the language
switch and `/favicon.ico`.

The home page `/` is the Issues overview (blueprints/issues.py), mounted from here with the summary, and so
are the SEO families' views (blueprints/seo.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, make_response, redirect, request, send_from_directory, url_for

from nitpicker_core import MenuLink, RegisterBlueprint, hookimpl
from nitpicker_viewer.app import has_query, query, render
from nitpicker_viewer.blueprints.issues import issues
from nitpicker_viewer.blueprints.seo import menu_links as seo_menu_links
from nitpicker_viewer.blueprints.seo import seo
from nitpicker_viewer.i18n import COOKIE, LANGUAGES

if TYPE_CHECKING:
    from flask import Request

home = Blueprint(
    "home", __name__, template_folder="../templates", static_folder="../static", static_url_path="/static"
)
SEARCH_PAGE = 200  # matches the search page lists (the box as one types shows fewer)


def _pages(**params: str) -> str:
    """The page list filtered by ``params``, external URLs included (the summary counts them too)."""
    keep = {"commit": request.args.get("commit")} if request.args.get("commit") else {}
    values: dict[str, Any] = {**keep, **params, "external": "1"}
    return url_for("pages.index", **values)


def _share(count: int, total: int) -> float:
    return round(100.0 * count / total, 1) if total else 0.0


@home.get("/summary")
def summary() -> str:
    data = query("summary")
    status = data["status"]
    total = status["total"]
    codes = [
        {
            "label": str(row["status"]),
            "count": row["count"],
            "pct": _share(row["count"], total),
            "href": _pages(status=str(row["status"]), every_type="1"),
        }
        for row in status["by_code"]
    ]
    if status["failed"]:
        codes.append(
            {
                "label": "summary.failed",
                "count": status["failed"],
                "pct": _share(status["failed"], total),
                "href": _pages(status="failed", every_type="1"),
            }
        )
    # URLs never requested (--no-fetch-external, a crawl cut short) are a category of their own, never failures.
    not_checked = status.get("not_checked", 0)
    if not_checked:
        codes.append(
            {
                "label": "summary.not_checked",
                "count": not_checked,
                "pct": _share(not_checked, total),
                "href": _pages(outcome="not_checked", every_type="1"),
            }
        )
    failures = [
        {
            "label": row["kind"],
            "count": row["count"],
            "pct": _share(row["count"], status["failed"]),
            "href": _pages(status="failed", every_type="1"),
        }
        for row in status["failed_by_kind"]
    ]
    type_total = sum(row["count"] for row in data["content_types"])
    types = [
        {
            "label": "category." + row["category"],
            "count": row["count"],
            "pct": _share(row["count"], type_total),
            "internal": row["internal"],
            "external": row["external"],
            "href": _pages(category=row["category"]),
        }
        for row in data["content_types"]
        if row["count"]
    ]
    # a fill rate leads to the pages that lack the field: what the auditor has to fix
    fill = [
        {
            "label": "field." + row["field"],
            "count": row["filled"],
            "total": row["total"],
            "pct": round(100.0 * row["rate"], 1),
            "href": _missing(row["field"]),
        }
        for row in data["metadata_fill"]
    ]
    return render(
        "summary.html",
        title="view.summary",
        counts=data["counts"],
        totals=data["totals"],
        definitions=data["definitions"],
        status=status,
        codes=codes,
        failures=failures,
        types=types,
        fill=fill,
        not_checked=not_checked,
        blocked_by=", ".join(
            f"{row['count']} × {row['status']}" for row in data["totals"]["blocked_by_status"]
        ),
        crawlers=_crawlers(data.get("crawlers")),
    )


def _crawlers(found: dict[str, Any] | None) -> dict[str, Any] | None:
    """robots.txt's site-wide verdict on the well-known crawlers: the AI ones and the search ones apart."""
    if found is None:
        return None
    search = [token for token in found["blocked"] if token not in found["ai_blocked"]]
    keep: dict[str, Any] = {"commit": request.args.get("commit")} if request.args.get("commit") else {}
    return {
        "ai": found["ai_blocked"],
        "ai_total": found["ai_crawlers"],
        "search": search,
        "search_total": found["crawlers"] - found["ai_crawlers"],
        "partly": found["ai_partly"],
        "href": url_for("api.call", name="crawlers", **keep),
    }


def _missing(field: str) -> str | None:
    """The internal HTML pages missing ``field``, when the page list can filter by it."""
    from nitpicker_viewer.blueprints.pages import METADATA_FIELDS

    if field not in METADATA_FIELDS:
        return None
    keep: dict[str, Any] = {"commit": request.args.get("commit")} if request.args.get("commit") else {}
    return url_for("pages.index", **keep, missing=field, category="html")


@home.get("/search")
def search() -> str:
    """URLs and titles containing ``q``: the search box's full list (and its form without JavaScript)."""
    text = request.args.get("q", "").strip()
    found = query("search", q=text, limit=SEARCH_PAGE) if text and has_query("search") else None
    return render("search.html", title="view.search", q=text, found=found)


@home.get("/favicon.ico")
def favicon() -> Response:
    # browsers ask for /favicon.ico on their own (a JSON answer under /api/ has no <link rel=icon>)
    response = send_from_directory(
        home.static_folder or "", "favicon.svg", mimetype="image/svg+xml", max_age=86400
    )
    return response


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
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(home)
    register(issues)
    register(seo)  # the SEO families' views share the overview's table and queries


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [
        MenuLink("/", "view.issues", order=0),
        MenuLink("/summary", "view.summary", order=1),
        *seo_menu_links(),
    ]
