"""`/canonicals`, `/sitemaps`, `/hreflang`, `/pagination`, `/directives`: one view per family of SEO checks.

Each lists every check of its family with the Issues overview's table (counts on the commit against its
base, each linking to the check's URLs); the Sitemaps view also lists the sitemaps the crawl read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, abort, request

from nitpicker_core import MenuLink
from nitpicker_viewer.app import has_query, render
from nitpicker_viewer.blueprints.issues import categorised, issues_answer
from nitpicker_viewer.i18n import translate
from nitpicker_viewer.tables import Col, paged_table

seo = Blueprint("seo", __name__, template_folder="../templates")

# The checks of the directives family in the `links` category (its others are `indexability` checks that
# are not about canonicals): what issue 29 calls "directives and links".
DIRECTIVE_LINK_CHECKS = frozenset(
    {
        "nofollow-internal-link",
        "page-too-deep",
        "no-internal-outlinks",
        "anchor-text-non-descriptive",
        "link-to-non-canonical",
    }
)


def _canonical(row: dict[str, Any]) -> bool:
    return str(row["id"]).startswith("canonical-")


@dataclass(frozen=True)
class Family:
    """One view: the check categories it reads and, where a category holds other families too, which rows."""

    name: str
    categories: tuple[str, ...]
    member: Callable[[dict[str, Any]], bool] = lambda row: True

    @property
    def title(self) -> str:
        return "view." + self.name

    @property
    def intro(self) -> str:
        return "seo.intro_" + self.name


FAMILIES = {
    family.name: family
    for family in (
        Family("canonicals", ("indexability",), _canonical),
        Family("sitemaps", ("sitemaps",)),
        Family("hreflang", ("hreflang",)),
        Family("pagination", ("pagination",)),
        Family(
            "directives",
            ("indexability", "links"),
            lambda row: (
                row["id"] in DIRECTIVE_LINK_CHECKS if row["category"] == "links" else not _canonical(row)
            ),
        ),
    )
}
MENU_ORDER = 44  # after the findings views (40-43), before Commits (50)

SITEMAP_COLUMNS = (
    Col("url", "col.sitemap", None, "url"),
    Col("source", "col.sitemap_source"),
    Col("parent", "col.sitemap_parent", None, "url"),
    Col("kind", "col.sitemap_kind"),
    Col("status", "col.status", None, "status"),
    Col("entries", "col.sitemap_entries", None, "num"),
    Col("problems", "col.sitemap_problems", None, "list"),
)


def _sitemap_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `sitemaps` query's rows for the table: each problem as one "kind: detail" line, None without any."""
    return [
        {
            **item,
            "problems": [
                f"{p['kind']}: {p['detail']}" if p.get("detail") else p["kind"] for p in item["problems"]
            ]
            or None,  # none: the table's "—"
        }
        for item in items
    ]


def family_rows(family: Family) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The `issues` answer of the family's first category and every check row of the family, in the query's
    order per category (most severe first)."""
    answers = [
        issues_answer(request.args.get("base") or None, category=category) for category in family.categories
    ]
    rows = [row for answer in answers for row in answer["items"] if family.member(row)]
    return answers[0], rows


def _view(name: str) -> str:
    family = FAMILIES.get(name)
    if family is None:  # routes are made from FAMILIES: cannot happen
        abort(404)
    data, rows = family_rows(family)
    sitemaps = None
    if family.name == "sitemaps" and has_query("sitemaps"):
        sitemaps = paged_table(
            "sitemaps",
            "seo.sitemaps_read",
            "sitemaps",
            SITEMAP_COLUMNS,
            sortable=False,
            shape=_sitemap_rows,
        )
    return render(
        "seo.html",
        title=family.title,
        family=family,
        data=data,
        categories=categorised(rows),
        sitemaps=sitemaps,
    )


def _route(name: str) -> None:
    seo.add_url_rule(f"/{name}", name, lambda: _view(name), methods=["GET"])


for _name in FAMILIES:
    _route(_name)


def menu_links() -> list[MenuLink]:
    """One menu link per family, in FAMILIES' order."""
    return [
        MenuLink(f"/{name}", FAMILIES[name].title, order=MENU_ORDER + index)
        for index, name in enumerate(FAMILIES)
    ]


# The reasons `non_indexable_reason` gives, by how they start: (message key, whether a URL follows)
_REASONS = (
    ("blocked by robots.txt", "indexability.blocked", False),
    ("redirects to ", "indexability.redirects", True),
    ("canonicalised to ", "indexability.canonicalised", True),
    ("noindex (X-Robots-Tag)", "indexability.noindex_header", False),
    ("noindex", "indexability.noindex", False),
)


@seo.app_template_global()
def indexability_label(value: dict[str, Any] | None) -> dict[str, Any]:
    """What page detail shows of `page-detail`'s ``indexability``: ``state`` (indexable, non_indexable,
    not_judged) and its ``label``, the ``reason`` in the page's language and the ``url`` it names (a
    redirect's target, the canonical), if any."""
    value = value or {}
    if value.get("indexable") is None:
        return {
            "state": "not_judged",
            "label": translate("indexability.not_judged"),
            "reason": None,
            "url": None,
        }
    if value["indexable"]:
        return {"state": "indexable", "label": translate("seo.indexable"), "reason": None, "url": None}
    label = translate("seo.non_indexable")  # the pages table's words
    reason = str(value.get("reason") or "")
    for start, key, names_url in _REASONS:
        if reason.startswith(start):
            url = reason[len(start) :] if names_url else None
            return {"state": "non_indexable", "label": label, "reason": translate(key), "url": url}
    if reason.startswith("failed: "):
        text = translate("indexability.failed", kind=reason.removeprefix("failed: "))
    elif reason.startswith("not HTML (") and reason.endswith(")"):
        text = translate("indexability.not_html", type=reason.removeprefix("not HTML (")[:-1])
    elif reason.isdigit():
        text = translate("indexability.status", status=reason)
    else:
        text = reason
    return {"state": "non_indexable", "label": label, "reason": text, "url": None}
