"""`/` and `/issue?check=`: the Issues overview by category against a base commit, and one issue's URLs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, abort, request, url_for

from nitpicker_core import PRIORITIES
from nitpicker_viewer.app import derived, query, query_once, render
from nitpicker_viewer.changes import named_changes
from nitpicker_viewer.i18n import current_language, translate
from nitpicker_viewer.tables import Col, Filter, paged_table

issues = Blueprint("issues", __name__, template_folder="../templates")

STATES = ("new", "persisting", "fixed", "gone")  # gone: vanished with its page (an error now)
# which rows the overview lists: with findings (the default), every check, or only those with new, fixed or
# regressed findings against the base (what got worse, what got better)
SHOW = (
    ("found", "issues.show_found"),
    ("new", "issues.show_new"),
    ("fixed", "issues.show_fixed"),
    ("regressed", "issues.show_regressed"),
    ("all", "issues.show_all"),
)
PICKER_COMMITS = 500  # commits offered in the base picker, newest first
SCAN_PAGE = 10_000  # the issue-urls query's largest page: every finding of one check on one URL


@dataclass
class Category:
    """One category's rows, in the query's order (most severe first)."""

    name: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return category_label(self.name)


def category_label(name: str) -> str:
    """A check category's name in the page's language; a plugin's own category is shown as it is named."""
    key = "issue_category." + name
    text = translate(key)
    return name if text == key else text


def issues_answer(base: str | None, **params: Any) -> dict[str, Any]:
    """The `issues` query with each check's title, description and fix in the page's language."""
    return query("issues", base=base, lang=current_language(), **params)


def _arg(name: str) -> str | None:
    return request.args.get(name) or None


def _link(endpoint: str, **params: Any) -> str:
    """``endpoint``'s URL keeping the commit and base the page was asked for."""
    keep = {key: request.args.get(key) for key in ("commit", "base") if request.args.get(key)}
    return url_for(endpoint, **{**keep, **{k: v for k, v in params.items() if v is not None}})


def categorised(rows: list[dict[str, Any]]) -> list[Category]:
    """``issues`` rows grouped by category in their order, each with the links of its counts: ``href`` (and
    ``hrefs.current``) the check's URLs found now, ``hrefs.<state>`` those new, fixed or persisting."""
    categories: dict[str, Category] = {}
    for row in rows:
        row["href"] = _link("issues.detail", check=row["id"])
        row["hrefs"] = {
            "current": row["href"],
            **{state: _link("issues.detail", check=row["id"], state=state) for state in STATES},
        }
        categories.setdefault(row["category"], Category(row["category"])).rows.append(row)
    return list(categories.values())


def _shown(row: dict[str, Any]) -> bool:
    """A row worth a look: it finds something now, fixed something since the base, or failed."""
    return row["state"] == "error" or bool(row["findings"]) or bool(row["fixed"]) or bool(row.get("gone"))


def _analyzer(row: dict[str, Any]) -> str | None:
    """The analyzer an analyzer-rule row depends on (``axe`` of ``axe/image-alt``), None for crawl checks."""
    analyzers = {source.split("/", 1)[0] for source in row["sources"] if "/" in source}
    return next(iter(sorted(analyzers)), None)


def _commit_options() -> list[dict[str, Any]]:
    rows = query("commits", limit=PICKER_COMMITS)["items"]
    return [
        {
            "id": row["id"],
            "kind": row.get("kind"),
            "finished": row.get("finished_at") or row.get("started_at"),
            "status": row.get("status"),
            "head": row.get("head"),
        }
        for row in rows
    ]


@issues.get("/")
def overview() -> str:
    priority = _arg("priority")
    if priority is not None and priority not in PRIORITIES:
        abort(400, f"parameter 'priority' must be one of {', '.join(PRIORITIES)}")
    show = request.args.get("show") or "found"
    if show not in dict(SHOW):
        abort(400, f"parameter 'show' must be one of {', '.join(dict(SHOW))}")
    data = issues_answer(_arg("base"), priority=priority)
    rows = data["items"]
    if show in ("new", "fixed", "regressed"):
        shown = [row for row in rows if row[show]]
    else:
        shown = rows if show == "all" else [row for row in rows if _shown(row)]
    shown_ids = {row["id"] for row in shown}
    hidden = [row for row in rows if row["id"] not in shown_ids]
    not_analysed = sorted({_analyzer(row) or "" for row in hidden if row["state"] == "not_analysed"} - {""})
    totals = {key: sum(row[key] or 0 for row in rows) for key in ("findings", "new", "fixed")}
    return render(
        "issues.html",
        title="view.issues",
        data=data,
        categories=categorised(shown),
        commits=_commit_options(),
        priorities=PRIORITIES,
        priority=priority or "",
        show=show,
        show_options=SHOW,
        totals=totals,
        hidden_clean=sum(1 for r in hidden if r["state"] == "ok"),
        hidden_not_analysed=sum(1 for r in hidden if r["state"] == "not_analysed"),
        not_analysed_by=not_analysed,
        all_href=_link("issues.overview", show="all", priority=priority),
        changes=named_changes(_arg("base"), priority, _link),
    )


def issue_row(check: str, rows: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The overview's row for a check id: its own row, or the shared-defect row it is a source of."""
    rows = issues_answer(_arg("base"))["items"] if rows is None else rows
    return next((row for row in rows if row["id"] == check), None) or next(
        (row for row in rows if check in row["sources"]), None
    )


# A link check's rows say where each link is; every other row names the page, what on it, and who found it.
LINK_COLUMNS = (
    Col("url", "col.source", None, "page"),
    Col("state", "col.finding_state", None, "finding_state"),
    Col("target", "col.link_target", None, "page"),
    Col("text", "col.text"),
    Col("answer", "col.status"),
    Col("position", "col.line"),
)
FINDING_COLUMNS = (
    Col("url", "col.page", None, "page"),
    Col("state", "col.finding_state", None, "finding_state"),
    Col("detail", "col.detail"),
    Col("sources", "col.found_by", None, "list"),
)
# a check about an element of the page: where that element is, and in which stored HTML (rendered, sent)
LOCATED_COLUMNS = (
    *FINDING_COLUMNS[:3],
    Col("position", "col.line"),
    Col("html", "col.line_html"),
    FINDING_COLUMNS[3],
)


def _columns(row: dict[str, Any] | None) -> tuple[Col, ...]:
    if row is not None and row.get("link"):
        return LINK_COLUMNS
    return LOCATED_COLUMNS if row is not None and row.get("located") else FINDING_COLUMNS


@issues.get("/issue")
def detail() -> str:
    check = request.args.get("check", "")
    if not check:
        abort(400, "give ?check= (a check id, e.g. broken-link)")
    # the default lists the commit's findings, as many as the count above; fixed ones are the base's
    state_options = (("", "issues.current"), *((state, "state." + state) for state in STATES), ("all", "any"))
    answer = issues_answer(_arg("base"))
    row = issue_row(check, answer["items"])
    table = paged_table(
        "issue-urls",
        "issues.urls",
        "issue-urls",
        _columns(row),
        filters=(Filter("state", "col.finding_state", "select", state_options),),
        params={"check": check, "base": _arg("base")},
        sortable=False,
    )
    if row is None:  # the query knew the id, so a registered check without a row cannot happen; be explicit
        abort(404, f"no check {check!r}")
    return render(
        "issue.html",
        title="view.issue",
        check=check,
        row=row,
        table=table,
        share_of=answer["share_of"],
        category=category_label(row["category"]),
        overview_href=_link("issues.overview"),
    )


def _on_page(url: str, base: str | None) -> list[tuple[str, int, str, tuple[str, ...], bool]]:
    """Every defect on one page against ``base``: (issue row id, state, detail, sources, regressed).

    Each check is asked for this URL only, which reads its stored findings by key; an index of every finding
    of the commit, built on the first page opened, took 26 s at 100,000 pages.
    """
    found = []
    for row in issues_answer(base)["items"]:
        if not _shown(row) or row["state"] == "error":
            continue
        for item in query_once(
            "issue-urls", check=row["id"], base=base, url=url, state="all", limit=SCAN_PAGE, lines=False
        )["items"]:
            found.append(
                (
                    row["id"],
                    STATES.index(item["state"]),
                    item["detail"],
                    tuple(item.get("sources") or [item["check"]]),
                    bool(item.get("regressed")),
                )
            )
    return found


def page_issues(url: str) -> list[dict[str, Any]]:
    """Every defect on one page (fixed ones too), in the overview's order, new before persisting: a defect
    several checks found is one entry naming them."""
    base = _arg("base")
    # a live crawl's answers may change between two reads: rows are matched by id, never by position
    ranked = {row["id"]: (rank, row) for rank, row in enumerate(issues_answer(base)["items"])}
    found = []
    for issue, state, detail, sources, regressed in derived(
        ("page-issues", base, url), lambda: _on_page(url, base)
    ):
        if issue not in ranked:
            continue
        rank, row = ranked[issue]
        found.append(
            {
                "rank": rank,
                "state": STATES[state],
                "detail": detail,
                "sources": list(sources),
                "regressed": regressed,
                "title": row["title"],
                "priority": row["priority"],
                "issue": issue,
                "href": _link("issues.detail", check=issue),
            }
        )
    found.sort(key=lambda f: (f["rank"], STATES.index(f["state"]), f["detail"], f["sources"]))
    return found
