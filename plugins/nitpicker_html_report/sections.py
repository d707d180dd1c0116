"""The built-in sections of the HTML and PDF reports, registered through ``register_report_sections``.

Every number comes from the registered queries (``issues``, ``issue-urls``, ``summary``, ``commits``,
``info``) and, for the depth and response-time charts, from the read model's count of the rows the ``pages``
query lists: the report says what `nitpicker issues` and `nitpicker pages` say.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html import escape
from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, ReportSection, UsageError, read

from .charts import PRIORITY_COLOURS, bar_chart, line_chart
from .messages import text

if TYPE_CHECKING:
    from nitpicker_core import ReportContext

TOP = 10  # issues named in the executive summary
CHANGE_EXAMPLES = 3  # example URLs per check and state in "what changed"
TREND_COMMITS = 10  # the newest commits the trend chart shows


# -- data shared by the sections (each query answer is kept by ReportContext for the run) ---------------


def issue_params(report: ReportContext, lang: str) -> dict[str, Any]:
    params: dict[str, Any] = {"lang": lang}
    if report.options.get("compare"):
        params["base"] = str(report.options["compare"])
    return params


def issues(report: ReportContext, lang: str) -> dict[str, Any]:
    """The `issues` answer of the report's commit against the compared one, check texts in ``lang``."""
    answer: dict[str, Any] = report.query("issues", **issue_params(report, lang))
    return answer


def found(report: ReportContext, lang: str) -> list[dict[str, Any]]:
    """The rows of `issues` that found something, most severe first (the query's order)."""
    return [row for row in issues(report, lang)["items"] if row.get("findings")]


def examples(report: ReportContext, check: str, limit: int, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"check": check, "limit": max(1, limit), "lines": False}  # the report shows none
    if report.options.get("compare"):
        params["base"] = str(report.options["compare"])
    if state:
        params["state"] = state
    answer: dict[str, Any] = report.run("issue-urls", **params)
    return answer


def example_limit(report: ReportContext) -> int:
    given = report.options.get("examples")
    return 10 if given is None else max(1, int(given))


def this_commit(report: ReportContext) -> dict[str, Any]:
    for row in report.query("commits", limit=1000)["items"]:
        if row["id"] == report.commit:
            return dict(row)
    return {"id": report.commit}


def missing_analyzers(report: ReportContext, lang: str) -> list[str]:
    """Analyzers whose checks are not_analysed on the commit: their analysis did not run."""
    names = {
        source.split("/", 1)[0]
        for row in issues(report, lang)["items"]
        if row.get("state") == "not_analysed"
        for source in row.get("sources") or [row["id"]]
    }
    return sorted(names)


# -- small HTML helpers ----------------------------------------------------------------------------


def priority_label(lang: str, priority: str) -> str:
    return text(lang, f"priority_{priority}")


def badge(lang: str, priority: str) -> str:
    return f'<span class="badge p-{escape(priority)}">{escape(priority_label(lang, priority))}</span>'


def table(headers: list[str], rows: list[list[str]], caption: str = "", numeric: tuple[int, ...] = ()) -> str:
    """A table with a header row (``th scope=col``); cells are HTML already escaped by the caller."""
    head = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{h}</th>' for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if i in numeric else ''}>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    cap = f"<caption>{caption}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def url_link(url: str) -> str:
    return f'<a href="{escape(url)}">{escape(url)}</a>'


def url_count(lang: str, count: int) -> str:
    """``1 URL``, ``3 URLs`` (``3 件のURL`` in Japanese)."""
    if lang == "ja":
        return f"{count:,} 件のURL"
    return f"{count:,} URL" + ("" if count == 1 else "s")


def percent(share: float | None) -> str:
    """The `issues` query's ``share`` (already a percentage: 3.6 is 3.6%) as text."""
    return "" if share is None else f"{share:g}%"


def slug(check: str) -> str:
    return "issue-" + "".join(c if c.isalnum() else "-" for c in check.lower())


# -- the sections ----------------------------------------------------------------------------------


def render_cover(report: ReportContext, lang: str) -> str:
    info = report.query("info")
    commit = this_commit(report)
    base = issues(report, lang)["base"]
    roots = info.get("roots") or info.get("start_urls") or []
    sites = sorted({_origin(u) for u in roots})
    date = _when(str(commit.get("started_at") or commit.get("finished_at") or ""))
    rows = [
        [text(lang, "site"), "<br>".join(escape(s) for s in sites) or escape(text(lang, "none"))],
        [text(lang, "start_urls"), "<br>".join(url_link(u) for u in roots) or escape(text(lang, "none"))],
        [text(lang, "date"), escape(date)],
        [text(lang, "commit"), escape(str(report.commit))],
        [
            text(lang, "compared_with"),
            escape(str(base)) if base is not None and base != report.commit else escape(text(lang, "none")),
        ],
    ]
    body = "".join(f'<tr><th scope="row">{escape(k)}</th><td>{v}</td></tr>' for k, v in rows)
    return f'<table class="cover">{body}</table>'


def _when(stamp: str) -> str:
    """``2026-12-03T14:37:01.227Z`` → ``2026-12-03 14:37 UTC`` (anything else as it is)."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}).*Z", stamp)
    return f"{match[1]} {match[2]} UTC" if match else stamp


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url


def render_summary(report: ReportContext, lang: str) -> str:
    rows = found(report, lang)
    answer = issues(report, lang)
    out = []
    missing = missing_analyzers(report, lang)
    if missing:
        out.append(
            f'<p class="note" role="note">{escape(text(lang, "not_analysed", names=", ".join(missing)))}</p>'
        )
    counts: dict[str, list[int]] = {p: [0, 0] for p in PRIORITIES}
    for row in rows:
        counts[row["priority"]][0] += 1
        counts[row["priority"]][1] += int(row["findings"])
    out.append(f'<h3 id="by-priority">{escape(text(lang, "by_priority"))}</h3>')
    out.append(
        table(
            [
                escape(text(lang, "priority")),
                escape(text(lang, "checks_col")),
                escape(text(lang, "findings")),
            ],
            [[badge(lang, p), str(c[0]), str(c[1])] for p, c in counts.items()],
            numeric=(1, 2),
        )
    )
    out.append(f'<h3 id="top-issues">{escape(text(lang, "top_issues"))}</h3>')
    if rows:
        items = "".join(
            f'<li>{badge(lang, r["priority"])} <a href="#{slug(r["id"])}">'
            + escape(
                text(
                    lang,
                    "top_issue_line",
                    title=r["title"],
                    urls=url_count(lang, r["urls"]),
                    share=percent(r.get("share")),
                )
            )
            + "</a></li>"
            for r in rows[:TOP]
        )
        out.append(f'<ol class="top">{items}</ol>')
    else:
        out.append(f"<p>{escape(text(lang, 'no_issues'))}</p>")
    out.append(_changes(report, lang, answer))
    return "".join(out)


def _changes(report: ReportContext, lang: str, answer: dict[str, Any]) -> str:
    base = answer["base"]
    if base is None or base == report.commit:
        return f'<h3 id="changes">{escape(text(lang, "changes", base="—"))}</h3><p>{escape(text(lang, "no_base"))}</p>'
    heading = f'<h3 id="changes">{escape(text(lang, "changes", base=base))}</h3>'
    changed = [r for r in answer["items"] if r.get("new") or r.get("fixed") or r.get("regressed")]
    if not changed:
        return heading + f"<p>{escape(text(lang, 'no_changes'))}</p>"
    rows = []
    for r in changed:
        samples = []
        for state in ("new", "fixed"):
            if r.get(state):
                listed = examples(report, r["id"], CHANGE_EXAMPLES, state)["items"]
                urls = list(dict.fromkeys(item["url"] for item in listed))[:CHANGE_EXAMPLES]
                samples.append(
                    f"<span>{escape(text(lang, state))}: " + ", ".join(url_link(u) for u in urls) + "</span>"
                )
        rows.append(
            [
                f"{badge(lang, r['priority'])} {escape(r['title'])} <code>{escape(r['id'])}</code>",
                str(r.get("new") or 0),
                str(r.get("fixed") or 0),
                str(r.get("regressed") or 0),
                "<br>".join(samples),
            ]
        )
    headers = [text(lang, k) for k in ("check", "new", "fixed", "regressed", "examples")]
    return heading + table([escape(h) for h in headers], rows, numeric=(1, 2, 3))


def render_overview(report: ReportContext, lang: str) -> str:
    rows = found(report, lang)
    if not rows:
        return f"<p>{escape(text(lang, 'no_issues'))}</p>"
    answer = issues(report, lang)
    headers = [text(lang, k) for k in ("check", "priority", "type", "urls", "share")]
    body = [
        [
            f'<a href="#{slug(r["id"])}">{escape(r["title"])}</a> <code>{escape(r["id"])}</code>',
            badge(lang, r["priority"]),
            escape(text(lang, f"type_{r['type']}")),
            str(r["urls"]),
            percent(r.get("share")),
        ]
        for r in rows
    ]
    note = text(lang, "share_of", count=answer["share_of"]["urls"])
    return table([escape(h) for h in headers], body, numeric=(3, 4)) + f"<p>{escape(note)}</p>"


def render_issues(report: ReportContext, lang: str) -> str | None:
    rows = found(report, lang)
    if not rows:
        return None
    limit = example_limit(report)
    out = []
    for r in rows:
        help_ = r.get("help") or {}
        listed = examples(report, r["id"], limit)
        items = listed["items"][:limit]
        total = listed.get("total", r["findings"])
        sample = table(
            [escape(text(lang, "url")), escape(text(lang, "detail"))],
            [[url_link(i["url"]), escape(str(i.get("detail") or ""))] for i in items],
            caption=escape(text(lang, "examples_of", shown=len(items), total=total)),
        )
        why = text(lang, f"why_{r['priority']}", share=percent(r.get("share")))
        kind = text(lang, f"type_{r['type']}")
        more = (
            f'<p><a href="{escape(help_["help_url"])}">{escape(text(lang, "more_help"))}</a></p>'
            if help_.get("help_url")
            else ""
        )
        out.append(
            f'<article class="issue" aria-labelledby="{slug(r["id"])}">'
            f'<h3 id="{slug(r["id"])}">{escape(r["title"])} {badge(lang, r["priority"])}</h3>'
            f'<p class="meta"><code>{escape(r["id"])}</code> · {escape(kind)} · '
            f"{escape(text(lang, 'urls'))}: {r['urls']} ({percent(r.get('share'))})</p>"
            f"<h4>{escape(text(lang, 'description'))}</h4><p>{escape(help_.get('description') or '')}</p>"
            f"<h4>{escape(text(lang, 'why'))}</h4><p>{escape(why)}</p>"
            f"<h4>{escape(text(lang, 'fix'))}</h4><p>{escape(help_.get('fix') or '')}</p>{more}"
            f"<h4>{escape(text(lang, 'examples'))}</h4>{sample}</article>"
        )
    return "".join(out)


def render_charts(report: ReportContext, lang: str) -> str:
    out = []
    summary = report.query("summary")
    totals = summary["totals"]
    # blocked: the server refused the crawler (401, 403, 429, 999, a bot challenge); in its 4xx bar too
    statuses = [
        (k, float(totals.get(k) or 0)) for k in ("2xx", "3xx", "4xx", "5xx", "failed", "skipped", "blocked")
    ]
    out.append(f'<h3 id="chart-status">{escape(text(lang, "status_codes"))}</h3>')
    out.append(bar_chart("status-chart", text(lang, "status_codes"), statuses))
    # the HTML pages the `pages` query lists with --strict, counted by SQLite (not read row by row)
    depths = read.page_histogram(report.reader, report.commit, "depth")
    times = read.page_histogram(report.reader, report.commit, "response_ms", RESPONSE_BUCKETS)
    if depths:
        out.append(f'<h3 id="chart-depth">{escape(text(lang, "depth"))}</h3>')
        out.append(
            bar_chart(
                "depth-chart", text(lang, "depth"), [(str(d), float(n)) for d, n in sorted(depths.items())]
            )
        )
    if times:
        ms = text(lang, "ms")
        bars = [(_bucket_label(b, ms), float(times[b])) for b in sorted(times)]
        out.append(f'<h3 id="chart-response">{escape(text(lang, "response_times"))}</h3>')
        out.append(bar_chart("response-chart", text(lang, "response_times"), bars))
    by_category = Counter(r["category"] for r in found(report, lang))
    if by_category:
        out.append(f'<h3 id="chart-category">{escape(text(lang, "by_category_chart"))}</h3>')
        out.append(
            bar_chart(
                "category-chart",
                text(lang, "by_category_chart"),
                [(c, float(n)) for c, n in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0]))],
            )
        )
    by_priority = Counter(r["priority"] for r in found(report, lang))
    out.append(f'<h3 id="chart-priority">{escape(text(lang, "by_priority_chart"))}</h3>')
    out.append(
        bar_chart(
            "priority-chart",
            text(lang, "by_priority_chart"),
            [(priority_label(lang, p), float(by_priority.get(p, 0))) for p in PRIORITIES],
            colours=[PRIORITY_COLOURS[p] for p in PRIORITIES],
        )
    )
    trend = _trend(report, lang)
    if trend:
        out.append(f'<h3 id="chart-trend">{escape(text(lang, "trend"))}</h3>{trend}')
    return "".join(out)


#: upper bounds (ms) of the response-time chart's bars; the last bar is everything slower
RESPONSE_BUCKETS = (100, 200, 500, 1000, 2000, 5000)


def _bucket_label(index: int, unit: str) -> str:
    if index == len(RESPONSE_BUCKETS):
        return f"≥ {RESPONSE_BUCKETS[-1]:,} {unit}"
    low = RESPONSE_BUCKETS[index - 1] if index else 0
    return f"{low:,}–{RESPONSE_BUCKETS[index]:,} {unit}"


def _trend(report: ReportContext, lang: str) -> str:
    commits = [
        row["id"]
        for row in report.query("commits", limit=1000)["items"]
        if row["id"] <= report.commit and row.get("status") in (None, "complete")
    ]
    commits = sorted(commits)[-TREND_COMMITS:]
    if len(commits) < 2:
        return ""
    series: dict[str, list[int]] = {p: [] for p in PRIORITIES}
    for commit in commits:
        try:
            rows = report.run_at(commit, "issues", base=str(commit))["items"]
        except UsageError:
            rows = []
        sums: Counter[str] = Counter()
        for row in rows:
            sums[row["priority"]] += int(row.get("findings") or 0)
        for p in PRIORITIES:
            series[p].append(sums[p])
    series = {p: v for p, v in series.items() if any(v)}
    names = {p: priority_label(lang, p) for p in series}
    return line_chart("trend-chart", text(lang, "trend"), [str(c) for c in commits], series, names)


def render_appendix(report: ReportContext, lang: str) -> str:
    info = report.query("info")
    commit = this_commit(report)
    options = info.get("options") or info.get("crawl_options") or {}
    settings = [[f"<code>{escape(str(k))}</code>", escape(_short(v))] for k, v in sorted(options.items())]
    out = [f'<h3 id="settings">{escape(text(lang, "settings"))}</h3>']
    out.append(table([escape(text(lang, "setting")), escape(text(lang, "value"))], settings))
    tools = _tools(commit)
    out.append(f'<h3 id="tools">{escape(text(lang, "tools"))}</h3>')
    out.append(table([escape(text(lang, "tool")), escape(text(lang, "version"))], tools))
    return "".join(out)


def _tools(commit: dict[str, Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    environment = commit.get("environment") or {}
    for key, value in sorted(environment.items()) if isinstance(environment, dict) else []:
        if isinstance(value, str | int | float):
            rows.append([escape(str(key)), escape(str(value))])
    for run in commit.get("analyzers") or []:
        if isinstance(run, dict) and run.get("analyzer"):
            version = f"{run.get('version') or ''} ({run.get('status') or ''})"
            rows.append([escape(f"analyzer {run['analyzer']}"), escape(version)])
    if not rows and commit.get("tools"):
        rows.append(["tools", escape(str(commit["tools"]))])
    return rows


def _short(value: Any, limit: int = 200) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def titles(key: str) -> dict[str, str]:
    return {lang: text(lang, key) for lang in ("en", "ja")}


SECTIONS = (
    ReportSection("cover", text("en", "cover"), render_cover, order=10, titles=titles("cover")),
    ReportSection("summary", text("en", "summary"), render_summary, order=20, titles=titles("summary")),
    ReportSection("overview", text("en", "overview"), render_overview, order=30, titles=titles("overview")),
    ReportSection("issues", text("en", "issues"), render_issues, order=40, titles=titles("issues")),
    ReportSection("charts", text("en", "charts"), render_charts, order=50, titles=titles("charts")),
    ReportSection("appendix", text("en", "appendix"), render_appendix, order=1000, titles=titles("appendix")),
)
