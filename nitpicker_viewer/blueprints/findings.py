"""Finding views: analyzer violations (rows or counts per rule), analyzer errors, duplicate titles/descriptions,
mismatches, security headers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, request

from nitpicker_core import PRIORITIES, MenuLink, RegisterBlueprint, hookimpl, priority_of
from nitpicker_core.archive import digest
from nitpicker_viewer.app import CELL_LIST_LIMIT, render
from nitpicker_viewer.pickers import picker
from nitpicker_viewer.tables import Col, Filter, paged_table

if TYPE_CHECKING:
    from flask import Request

findings = Blueprint("findings", __name__, template_folder="../templates")

# one scale for every analyzer: axe's impacts and markup's levels both reach it through priority_of
PRIORITY_OPTIONS = (("", "any"), *((p, "priority." + p) for p in PRIORITIES))


def _violation_filters() -> tuple[Filter, ...]:
    return (
        picker("analyzer", "col.analyzer", "analyzer"),
        Filter("priority", "col.priority", "select", PRIORITY_OPTIONS),
        picker("rule", "col.rule", "rule"),
        Filter("url", "filter.url_contains"),
    )


def _with_priority(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's priority on the one scale (the query's own column when it has one)."""
    for row in rows:
        row.setdefault("priority", priority_of(row.get("severity")))
    return rows


@findings.get("/violations")
def violations() -> str:
    table = paged_table(
        "violations",
        "view.violations",
        "violations",
        (
            Col("url", "col.url", "url", "page"),
            Col("analyzer", "col.analyzer", "analyzer"),
            Col("priority", "col.priority", None, "priority"),
            Col("severity", "col.severity", "severity"),
            Col("rule", "col.rule", "rule"),
            Col("message", "col.message"),
            Col("location", "col.location"),
        ),
        filters=_violation_filters(),
        default_sort="url",
        shape=_with_priority,
    )
    return render("table_view.html", title="view.violations", table=table, tabs="findings")


@findings.get("/violations/rules")
def rules() -> str:
    table = paged_table(
        "rules",
        "violations.by_rule",
        "violations",
        (
            Col("analyzer", "col.analyzer"),
            Col("rule", "col.rule"),
            Col("priority", "col.priority", None, "priority"),
            Col("severity", "col.severity"),
            Col("count", "col.count", None, "num"),
            Col("pages", "col.pages", None, "num"),
        ),
        filters=_violation_filters()[:3],
        params={"group_by_rule": "true"},
        sortable=False,
        shape=_with_priority,
    )
    return render("table_view.html", title="view.violations", table=table, tabs="findings")


@findings.get("/analyzer-errors")
def analyzer_errors() -> str:
    """What analyzers failed on (a tab of the findings): the error, and its traceback folded away."""
    table = paged_table(
        "analyzer-errors",
        "view.analyzer_errors",
        "analyzer-errors",
        (
            Col("analyzer", "col.analyzer", "analyzer"),
            Col("url", "col.url", "url", "page"),
            Col("error", "col.error"),
            Col("traceback", "col.traceback", None, "traceback"),
        ),
        filters=(picker("analyzer", "col.analyzer", "analyzer"), Filter("url", "filter.url_contains")),
        default_sort="url",
    )
    return render(
        "table_view.html",
        title="view.analyzer_errors",
        table=table,
        tabs="findings",
        note="analyzer_errors.note",
    )


@findings.get("/duplicates")
def duplicates() -> str:
    # The page asks for the URLs its cells show (a group can hold thousands) and says how many more there are;
    # an export has them all.
    shown = not request.args.get("export")
    table = paged_table(
        "duplicates",
        "view.duplicates",
        "duplicates",
        (
            Col("value", "col.value"),
            Col("count", "col.count", None, "num"),
            Col("urls", "col.urls", None, "pages"),
        ),
        filters=(
            Filter(
                "field",
                "filter.field",
                "select",
                (("title", "field.title"), ("description", "field.description")),
            ),
        ),
        params={"urls": CELL_LIST_LIMIT} if shown else None,
        shape=(lambda rows: [{**row, "urls_total": row["count"]} for row in rows]) if shown else None,
        sortable=False,
    )
    return render("table_view.html", title="view.duplicates", table=table)


@findings.get("/mismatches")
def mismatches() -> str:
    table = paged_table(
        "mismatches",
        "view.mismatches",
        "mismatches",
        (
            Col("url", "col.url", "url", "page"),
            Col("kind", "col.kind", "kind"),
            Col("page_value", "col.page_value"),
            Col("declared_value", "col.declared_value"),
        ),
        filters=(
            Filter(
                "kind",
                "col.kind",
                "select",
                (
                    ("", "any"),
                    ("canonical", "mismatch.canonical"),
                    ("og_title", "mismatch.og_title"),
                    ("og_description", "mismatch.og_description"),
                ),
            ),
            Filter("url", "filter.url_contains"),
        ),
        default_sort="url",
    )
    return render("table_view.html", title="view.mismatches", table=table)


# The `headers` query's columns (its `headers` answer maps each to the header's name), in its order.
SECURITY_HEADERS = tuple(digest.SECURITY_HEADERS)


@findings.get("/security-headers")
def security_headers() -> str:
    """Per internal HTML page, which security headers it sends; counts per header lead to the pages without it."""
    table = paged_table(
        "security-headers",
        "view.security_headers",
        "headers",
        (
            Col("url", "col.url", None, "page"),
            Col("status", "col.status", None, "status"),
            *(Col(key, "header." + key, None, "present") for key in SECURITY_HEADERS),
        ),
        filters=(
            Filter(
                "missing",
                "filter.missing_header",
                "select",
                (("", "any"), *((key, "header." + key) for key in SECURITY_HEADERS)),
            ),
            Filter("url", "filter.url_contains"),
        ),
        sortable=False,
    )
    totals = table.extra.get("totals") or {}
    return render(
        "headers.html", title="view.security_headers", table=table, totals=totals, keys=SECURITY_HEADERS
    )


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(findings)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [
        MenuLink("/violations", "view.violations", order=40),
        MenuLink("/duplicates", "view.duplicates", order=41),
        MenuLink("/mismatches", "view.mismatches", order=42),
        MenuLink("/security-headers", "view.security_headers", order=43),
    ]
