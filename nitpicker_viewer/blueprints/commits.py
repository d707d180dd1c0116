"""`/commits`, `/diff` and `/diff/page`: the crawl generations, what changed between two, one page's HTML diff."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from flask import Blueprint, abort, request

from nitpicker_core import MenuLink, RegisterBlueprint, UsageError, hookimpl
from nitpicker_viewer.app import query, render
from nitpicker_viewer.i18n import translate
from nitpicker_viewer.tables import Col, paged_table

if TYPE_CHECKING:
    from flask import Request

commits = Blueprint("commits", __name__, template_folder="../templates")

DIFF_LIMIT = 500  # URLs per list; the API's /api/diff?limit= gives more
DIFF_EXPLAIN = 50  # modified pages whose changes the diff view explains (100 took 0.5 s warm at 10k pages)
HTML_DIFF_LINES = 5000  # lines of a page's HTML diff shown; the API's /api/page-diff has all of them
VALUE_CHARS = 300  # a changed field's old or new value is cut here (a long description, a hash)


@commits.get("/commits")
def index() -> str:
    table = paged_table(
        "commits",
        "view.commits",
        "commits",
        (
            Col("id", "col.commit"),
            Col("kind", "col.kind"),
            Col("status", "col.state"),
            Col("started_at", "col.started"),
            Col("finished_at", "col.finished"),
            Col("pages", "col.urls_recorded", None, "num"),
            Col("parent_id", "col.parent"),
            Col("tools", "col.tools"),
        ),
        sortable=False,
    )
    for row in table.rows:
        row["pages"] = (row.get("stats") or {}).get("pages")
    return render("commits.html", title="view.commits", table=table)


@commits.get("/diff")
def diff() -> str:
    data = query("diff", base=request.args.get("base"), limit=DIFF_LIMIT, explain=DIFF_EXPLAIN)
    changes = data.get("changes") or {}
    # pages that became error pages or redirects (or came back) first: the changes that break something
    # (a page gone since the base, an error now, is explained with them, first)
    gone = data.get("gone") or []
    first = gone[:DIFF_EXPLAIN] + sorted(
        data["modified"][: max(DIFF_EXPLAIN - len(gone), 0)], key=lambda url: not _telling(changes.get(url))
    )
    return render(
        "diff.html",
        title="view.diff",
        d=data,
        limit=DIFF_LIMIT,
        explained=DIFF_EXPLAIN,
        first=first,
        rest=data["modified"][max(DIFF_EXPLAIN - len(gone), 0) :],
        page_diff_href=page_diff_href,
    )


def _telling(change: Mapping[str, Any] | None) -> bool:
    said = (change or {}).get("summary") or []
    return bool(said) and said[0]["change"] in ("became_error", "recovered", "redirects", "redirect_removed")


def page_diff_href(url: str, base: int, commit: int) -> str:
    """The page diff's link (cheaper than url_for when the diff view lists hundreds of pages)."""
    return f"{request.script_root}/diff/page?url={quote(url, safe='')}&base={base}&commit={commit}"


@commits.get("/diff/page")
def page_diff() -> str:
    """One page's changes and its rendered HTML's unified diff, as escaped text (never the page's markup)."""
    url = request.args.get("url", "")
    if not url:
        abort(400, "give ?url=")
    base, note = request.args.get("base"), None
    try:
        data = query("page-diff", url=url, base=base, html="true")
    except UsageError as exc:  # a modified page without stored HTML on one side: its other changes still show
        if "no stored HTML" not in str(exc):
            raise
        data, note = query("page-diff", url=url, base=base), str(exc)
    lines = (data.get("html_diff") or "").splitlines()
    return render(
        "page_diff.html",
        title="view.page_diff",
        url=url,
        d=data,
        lines=lines[:HTML_DIFF_LINES],
        total_lines=len(lines),
        html_note=note,
    )


@commits.app_template_filter("diff_line")
def diff_line(line: str) -> str:
    """The CSS class of a unified diff line: added, removed, a hunk header or context."""
    if line.startswith(("+++", "---")):
        return "file"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")


@commits.app_template_filter("diff_value")
def diff_value(value: Any) -> str:
    """A changed value as one short line of text: strings as they are, the rest as JSON; cut at VALUE_CHARS."""
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + "…"


@commits.app_template_filter("facet_item")
def facet_item(item: Any) -> str:
    """One added or removed link, image, resource, JSON-LD block, tag, heading or error as one line."""
    if not isinstance(item, Mapping):
        return diff_value(item)
    if "href" in item:
        return f"{item['href']} “{item.get('text') or ''}”"
    if "src" in item:
        return f"{item['src']} (alt: {diff_value(item.get('alt'))})"
    if "types" in item:
        return (
            f"{item.get('kind')}: {', '.join(item.get('types') or []) or '—'} {diff_value(item.get('data'))}"
        )
    return " · ".join(diff_value(v) for v in item.values() if v not in (None, ""))


def _label(prefix: str, name: str) -> str:
    text = translate(prefix + name)
    return name if text == prefix + name else text


@commits.app_template_filter("say")
def say(item: Mapping[str, Any]) -> str:
    """One change of a page in words, in the page's language (a `summary` item of `page-diff`)."""
    kind = item.get("change")
    old, new = diff_value(item.get("old")), diff_value(item.get("new"))
    if kind in (
        "became_error",
        "recovered",
        "status",
        "content_type",
        "redirect_changed",
        "redirect_removed",
    ):
        return translate("diff.say." + kind, old=old, new=new)
    if kind == "redirects":
        status = item.get("status")
        if status:
            return translate("diff.say.redirects_status", new=new, old=status[0], code=status[1])
        return translate("diff.say.redirects", new=new)
    if kind in ("field_added", "field_removed", "field_changed", "flag_on", "flag_off"):
        return translate("diff.say." + kind, field=_label("field.", str(item.get("field"))), old=old, new=new)
    if kind == "facet":
        added, removed = item.get("added") or 0, item.get("removed") or 0
        key = (
            "diff.say.facet"
            if added and removed
            else "diff.say.facet_added"
            if added
            else "diff.say.facet_removed"
        )
        return translate(
            key, facet=_label("diff.facet.", str(item.get("facet"))), added=added, removed=removed
        )
    if kind == "gone":
        names = [_label("field.", name) for name in item.get("fields") or []]
        names += [
            f"{_label('diff.facet.', name)} ({count})" for name, count in (item.get("facets") or {}).items()
        ]
        return translate("diff.say.gone", names=", ".join(names))
    if kind == "headers":
        return "; ".join(
            translate("diff.say.headers_" + key, names=", ".join(item[key]))
            for key in ("added", "removed", "changed")
            if item.get(key)
        )
    if kind == "content":
        if item.get("old") is None or item.get("new") is None:
            return translate("diff.say.content")
        return translate("diff.say.content_size", old=f"{item['old']:,}", new=f"{item['new']:,}")
    if kind == "other":
        return translate("diff.say.other", names=", ".join(item.get("fields") or []))
    return str(item.get("text") or "")  # a kind this viewer does not know yet: its English sentence


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(commits)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [MenuLink("/commits", "view.commits", order=50)]
