"""What a crawl, analyze or pipeline run leaves behind, for people (a short summary) and programs (JSON).

The facts come from the registered queries (``summary``, ``error-kinds``, ``issues``, ``diff``), so the
summary says what `nitpicker query`, the viewer and the MCP tools say about the same commit.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, NitpickerPluginManager

PRIORITIES = ("critical", "high", "medium", "low", "info")


def json_option(f: Any) -> Any:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print the result as JSON (the default when stdout is not a terminal).",
    )(f)


def for_people(as_json: bool) -> bool:
    """A human summary on a terminal; JSON with --json or when stdout is piped or redirected."""
    return not as_json and sys.stdout.isatty()


def _query(
    pm: NitpickerPluginManager, reader: ArchiveReader, name: str, params: dict[str, Any], commit: int
) -> Any:
    from nitpicker_core import query_registry, run_query

    registry = query_registry(pm)
    if name not in registry:  # its plugin is disabled: that part of the summary is left out
        return None
    return run_query(registry, reader, name, params, commit)


def _errors(found: Any) -> list[dict[str, Any]]:
    from nitpicker_cli.refusals import reason

    items = []
    for item in (found or {}).get("items", []):
        example = item["examples"][0] if item["examples"] else None
        items.append(
            {
                "kind": item["kind"],
                "count": item["count"],
                "internal": item["internal"],
                "external": item["external"],
                "reason": reason(item["kind"], example["message"] or "", example["url"]) if example else "",
                "example": example["url"] if example else None,
            }
        )
    return items


def _findings(found: Any) -> dict[str, Any] | None:
    """Findings of the checks that ran, by priority; the checks with the most findings first (``top``)."""
    if found is None:
        return None
    by_priority = dict.fromkeys(PRIORITIES, 0)
    top = []
    for item in found.get("items", []):
        if item.get("findings"):
            by_priority[item["priority"]] = by_priority.get(item["priority"], 0) + item["findings"]
            top.append(
                {
                    "check": item["id"],
                    "priority": item["priority"],
                    "findings": item["findings"],
                    "urls": item.get("urls"),
                }
            )
    top.sort(
        key=lambda t: (PRIORITIES.index(t["priority"]) if t["priority"] in PRIORITIES else 9, -t["findings"])
    )
    since = None
    if found.get("base") is not None:  # against the previous complete commit: findings new and fixed since
        items = found.get("items", [])
        since = {
            "base": found["base"],
            "new": sum(i.get("new") or 0 for i in items),
            "fixed": sum(i.get("fixed") or 0 for i in items),
        }
    return {"by_priority": by_priority, "total": sum(by_priority.values()), "top": top[:5], "since": since}


def _changed(found: Any) -> dict[str, Any] | None:
    if found is None or found.get("base") is None:
        return None
    return {
        "base": found["base"],
        **{key: len(found.get(key) or []) for key in ("added", "removed", "gone", "modified")},
    }


def next_commands(archive: Path, analyzed: bool) -> list[str]:
    name = shlex.quote(str(archive))
    commands = [f"nitpicker viewer {name}", f"nitpicker issues {name}"]
    if not analyzed:
        commands.insert(1, f"nitpicker analyze {name}")
    return commands


def gather(pm: NitpickerPluginManager, archive: Path, commit: int | None = None) -> dict[str, Any]:
    """The commit's pages, errors by kind (with the reason), findings by priority and the change since its
    parent, read back from the archive."""
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        resolved = reader.resolve(commit)
        summary = _query(pm, reader, "summary", {}, resolved) or {}
        totals = summary.get("totals")
        internal = (summary.get("counts") or {}).get("internal") or {}
        facts: dict[str, Any] = {
            "commit": resolved,
            # the summary query's named counts (nitpicker_core.counts), as the viewer and sheets show them
            "totals": totals,
            "pages": (totals or {}).get("pages"),
            # internal URLs include the host's URLs outside the crawl's scope: checked, not crawled
            "urls": {
                **{side: (totals or {}).get(f"{side}_urls") for side in ("internal", "external")},
                "outside_scope": internal.get("outside_scope", 0),
            },
            # robots.txt's site-wide verdict on the well-known crawlers (None: no robots.txt was read)
            "crawlers": summary.get("crawlers"),
            "errors": _errors(_query(pm, reader, "error-kinds", {"examples": 1}, resolved)),
            "findings": _findings(_query(pm, reader, "issues", {}, resolved)),
            "changed": _changed(_query(pm, reader, "diff", {"explain": 0, "limit": 100000}, resolved)),
        }
        if (
            facts["findings"] and facts["findings"]["since"]
        ):  # an update: name what changed, not just count it
            facts["findings"]["changes"] = _query(pm, reader, "issue-changes", {}, resolved)
    return facts


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def error_lines(errors: list[dict[str, Any]]) -> list[str]:
    lines = []
    for e in errors:
        sides = " / ".join(f"{e[side]} {side}" for side in ("internal", "external") if e[side])
        reason = f": {_short(e['reason'])}" if e["reason"] else ""
        example = f" (e.g. {e['example']})" if e["example"] else ""
        lines.append(f"  {e['kind']} ({sides}){reason}{example}")
    return lines


def findings_lines(findings: dict[str, Any] | None, archive: str | Path | None = None) -> list[str]:
    """Findings by priority; after an update the new, fixed and regressed ones by check with their URLs."""
    from nitpicker_cli.changes import change_lines

    if findings is None:
        return []
    named = change_lines(findings.get("changes"), archive) if archive is not None else []
    if not findings["total"]:
        return ["Findings: none", *named]  # the fixed ones, after an update that fixed everything
    counts = " · ".join(f"{n} {p}" for p, n in findings["by_priority"].items() if n)
    top = ", ".join(f"{t['check']} ({t['findings']})" for t in findings["top"][:3])
    since = findings.get("since")
    change = f"; since commit {since['base']}: {since['new']} new, {since['fixed']} fixed" if since else ""
    return [f"Findings: {counts} — most severe: {top}{change}", *named]


def changed_lines(changed: dict[str, Any] | None) -> list[str]:
    if changed is None:
        return ["Changed: nothing to compare with (the archive's first commit)"]
    gone = f"{changed['gone']} gone (an error now) · " if changed.get("gone") else ""
    return [
        f"Changed since commit {changed['base']}: {changed['added']} added · {changed['removed']} removed · "
        f"{gone}{changed['modified']} modified"
    ]


def rendered_words(
    rendered: int,
    revalidation: dict[str, Any] | None,
    parsed: int | None = None,
    auto: dict[str, Any] | None = None,
) -> str:
    """How pages were read: "N rendered", the pages read without a browser (--render never, auto: with the
    templates it found) and, for an update, the pages taken over unchanged apart: they were not rendered
    again (issue 33: an update of an unchanged site said "1171 rendered" when almost nothing was)."""
    unchanged = int((revalidation or {}).get("unchanged") or 0)
    words = f"{max(0, rendered - unchanged)} rendered"
    if parsed or auto:
        words += f", {parsed or 0} read without a browser"
    if auto:
        words += (
            f" (auto: {auto.get('templates', 0)} template{'' if auto.get('templates') == 1 else 's'}, "
            f"{auto.get('rendered_templates', 0)} rendered"
            + (f"; {auto['degraded']}" if auto.get("degraded") else "")
            + ")"
        )
    if unchanged:
        words += f", {unchanged} unchanged (304)"
    return words


def crawl_lines(crawl: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    """The crawl stage in a few lines: pages among the internal URLs (those outside the scope said apart),
    external URLs, errors by side."""
    totals = facts.get("totals") or {}
    external = (facts.get("urls") or {}).get("external")
    internal = (facts.get("urls") or {}).get("internal")
    outside = (facts.get("urls") or {}).get("outside_scope")
    pages = facts.get("pages")
    lines = [
        f"Crawl {crawl.get('status', 'complete')}: {_plural(pages or 0, 'page')}"
        + (f" of {_plural(internal, 'internal URL')}" if internal is not None else "")
        + f" ({rendered_words(crawl.get('rendered', 0), crawl.get('revalidation'), crawl.get('parsed'), crawl.get('auto'))}, "
        + f"{crawl.get('skipped', 0)} skipped)"
        + (f", {_plural(outside, 'internal URL')} outside the scope checked" if outside else "")
        + (f", {_plural(external, 'external URL')} checked" if external else "")
        + (f" in {_duration(crawl['seconds'])}" if crawl.get("seconds") is not None else "")
    ]
    lines.extend(waited_lines(crawl.get("waited")))
    errors = facts.get("errors") or []
    if totals:  # errors as every front door counts them: 4xx, 5xx and failed URLs, per side
        sides = {side: _error_counts(totals[side]) for side in ("internal", "external")}
        if any(sum(counts.values()) for counts in sides.values()):
            lines.append(
                "Errors: "
                + ", ".join(
                    f"{sum(counts.values())} {side}"
                    + (
                        f" ({' · '.join(f'{n} {key}' for key, n in counts.items() if n)})"
                        if sum(counts.values())
                        else ""
                    )
                    for side, counts in sides.items()
                )
            )
            lines.extend(error_lines(errors))
        else:
            lines.append("Errors: none")
        lines.extend(blocked_lines(totals))
        lines.extend(crawler_lines(facts.get("crawlers")))
        return lines
    internal_errors, external_errors = crawl.get("internal_errors", 0), crawl.get("external_errors", 0)
    if internal_errors or external_errors:
        lines.append(f"Errors: {internal_errors} internal, {external_errors} external")
        lines.extend(error_lines(errors))
        answered = external_errors - sum(e["external"] for e in errors)
        if answered > 0:  # the crawl counts external links that answer 4xx/5xx as errors too
            lines.append(
                f"  error status ({answered} external): external links answered 4xx/5xx "
                "(see the broken-links query)"
            )
    else:
        lines.append("Errors: none")
    return lines


def blocked_lines(totals: dict[str, Any]) -> list[str]:
    """The URLs whose server refused the crawler (401, 403, 429, 999, a bot challenge), apart from the broken."""
    if not totals.get("blocked"):
        return []
    by = ", ".join(f"{row['count']} × {row['status']}" for row in totals.get("blocked_by_status") or [])
    sides = ", ".join(
        f"{totals[side]['blocked']} {side}"
        for side in ("internal", "external")
        if totals[side].get("blocked")
    )
    return [
        f"Blocked: {sides} ({by}): the server refused the crawler, not a broken page (pages --outcome blocked)"
    ]


def crawler_lines(crawlers: dict[str, Any] | None) -> list[str]:
    """The AI crawlers (and search crawlers) the site's robots.txt blocks site-wide; nothing when none was read."""
    if not crawlers:
        return []
    ai, blocked = crawlers["ai_blocked"], crawlers["blocked"]
    search = [token for token in blocked if token not in ai]
    named = f" ({', '.join(ai)})" if ai else ""
    partly = f", {len(crawlers['ai_partly'])} on some start origins" if crawlers.get("ai_partly") else ""
    others = crawlers["crawlers"] - crawlers["ai_crawlers"]
    return [
        f"AI crawlers: {len(ai)} of {crawlers['ai_crawlers']} blocked site-wide by robots.txt{named}{partly}; "
        f"search crawlers: {len(search)} of {others}"
        + (f" ({', '.join(search)})" if search else "")
        + " (query crawlers)"
    ]


def waited_lines(waited: dict[str, float] | None) -> list[str]:
    """How long the crawl waited on each host (Retry-After, the slowdown after a 429/503/timeout, --max-rps,
    Crawl-delay), the longest first; nothing when no host made it wait a second."""
    hosts = sorted((waited or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    if sum(seconds for _, seconds in hosts) < 1:
        return []
    shown = ", ".join(f"{seconds:.1f} s on {host}" for host, seconds in hosts[:3])
    more = f" and {len(hosts) - 3} more hosts" if len(hosts) > 3 else ""
    return [f"Waited: {shown}{more} (Retry-After, slowdown after 429/503/timeouts, --max-rps, Crawl-delay)"]


def _error_counts(side: dict[str, int]) -> dict[str, int]:
    return {"4xx": side["4xx"], "5xx": side["5xx"], "failed": side["failed"]}


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def analyze_lines(analysis: dict[str, Any]) -> list[str]:
    analyzers = analysis.get("analyzers") or {}
    if not analyzers:
        return []
    errors = sum(a.get("errors", 0) for a in analyzers.values())
    cached = sum(a.get("cached", 0) for a in analyzers.values())
    return [
        f"Analyzed {_plural(analysis.get('pages') or 0, 'page')} with {_plural(len(analyzers), 'analyzer')} "
        f"({', '.join(analyzers)}): {analysis.get('violations', 0)} violations, {errors} analyzer errors"
        + (f", {cached} page results reused" if cached else "")
    ]


def closing_lines(archive: Path, commit: int, analyzed: bool) -> list[str]:
    return [
        f"Archive: {archive} (commit {commit})",
        "Next:",
        *(f"  {command}" for command in next_commands(archive, analyzed)),
    ]


def print_lines(lines: list[str]) -> None:
    click.echo("\n".join(lines))
