"""`nitpicker issues ARCHIVE`: every check's findings by priority, new and fixed against a base; a CI gate."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli import ci_formats, exit_codes
from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.changes import change_lines
from nitpicker_cli.options import ISSUES_SETTINGS, list_flags, setting_flags, setting_options
from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.pipeline import verdict
from nitpicker_core.query import query_registry, run_query

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def _number(value: Any) -> str:
    return "–" if value is None else str(value)


def render_table(answer: dict[str, Any]) -> str:
    """The issues answer as a plain-text table, most severe first; checks without findings are left out."""
    rows = [
        r for r in answer["items"] if r["findings"] or r["fixed"] or r.get("gone") or r["state"] == "error"
    ]
    # an analyzer that never ran on the commit is one line per analyzer, not one per rule
    unanalysed = sorted(
        {
            source.split("/", 1)[0]
            for r in answer["items"]
            if r["state"] == "not_analysed"
            for source in r.get("sources") or [r["id"]]
        }
    )
    base = answer["base"]
    lines = [f"commit {answer['commit']}" + (f" against base {base}" if base is not None else "")]
    if answer.get("base_note"):
        lines.append(f"note: {answer['base_note']}")
    # GONE: the base's findings that vanished with their page (an error now, or no longer crawled)
    header = ("PRIORITY", "TYPE", "CHECK", "FINDINGS", "NEW", "FIXED", "GONE", "URLS", "% OF URLS", "TITLE")
    table = [header] + [
        (
            r["priority"],
            r.get("type") or "issue",
            r["id"],
            "not analysed"
            if r["state"] == "not_analysed"
            else "error"
            if r["state"] == "error"
            else _number(r["findings"]),
            _number(r["new"]),
            _number(r["fixed"]),
            _number(r.get("gone")),
            _number(r["urls"]),
            "–" if r.get("share") is None else f"{r['share']}%",
            r["title"],
        )
        for r in rows
    ]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header) - 1)]
    for row in table:
        lines.append(
            "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
        )
    if not rows:
        lines.append("no findings")
    elif answer.get("share_of"):
        lines.append(
            f"% of URLs: of the {answer['share_of']['urls']} internal URLs ({answer['share_of']['definition']})"
        )
    quiet = sum(1 for r in answer["items"] if r not in rows and r["state"] == "ok")
    if quiet:
        lines.append(f"{quiet} more checks found nothing (--json lists them)")
    if unanalysed:
        lines.append(
            f"not analysed on this commit: {', '.join(unanalysed)} (nitpicker analyze adds their checks)"
        )
    return "\n".join(lines)


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("issues", epilog=exit_codes.epilog())
    @click.argument("archive", type=click.Path(path_type=str))
    @click.option("--commit", default=None, help="Commit id to read (default: HEAD).")
    @click.option(
        "--base", default=None, help="Commit to compare with (default: the previous complete commit)."
    )
    @click.option(
        "--format",
        "fmt",
        type=click.Choice(ci_formats.FORMATS),
        default=None,
        help="What to print on stdout: text (the table), json (the issues query's answer), junit "
        "(JUnit XML: a test case per check; findings matching --fail-on fail it, without "
        "--fail-on those of priority high or worse), sarif (SARIF 2.1.0: a result per finding) or "
        "github (GitHub Actions annotations). Default: text on a terminal, json when piped.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
    @click.option(
        "--table", "as_table", is_flag=True, help="Same as --format text: the table even when piped."
    )
    @click.option(
        "--fail-on",
        "fail_on",
        multiple=True,
        metavar="SPEC",
        help=f"Exit {exit_codes.GATE_FAILED} when findings match: new:PRIORITY (new findings of that "
        "priority or worse), PRIORITY (any finding), CHECK-ID, new:CHECK-ID. Repeatable.",
    )
    @setting_options(pm, ISSUES_SETTINGS)
    def issues(
        archive: str,
        commit: str | None,
        base: str | None,
        fmt: str | None,
        as_json: bool,
        as_table: bool,
        fail_on: tuple[str, ...],
        **kw: Any,
    ) -> int:
        """What is wrong with the site at a commit, most severe first, and what is new or fixed since BASE."""
        from nitpicker_core.indexing import check_settings

        app = get_app()
        app.config(list_flags(setting_flags(kw, app.pm)))
        check_settings(app.pm)
        fmt = ci_formats.choose_format(fmt, as_json, as_table)
        specs = [verdict.parse(text) for text in fail_on]
        if any(isinstance(s, verdict.IssueSpec) and s.check for s in specs):
            verdict.check_known(specs, verdict.known_checks(app.pm))
        registry = query_registry(app.pm)
        with open_archive(archive) as reader:
            answer = run_query(registry, reader, "issues", {"base": base}, commit)
            result = (
                verdict.evaluate(specs, reader, answer["commit"], registry, base, answer) if specs else None
            )
            report = (
                ci_formats.render(fmt, app.pm, reader, registry, answer, base, fail_on, result)
                if fmt in ci_formats.CI_FORMATS
                else None
            )
            as_text = report is None and not (fmt == "json" or (fmt is None and not sys.stdout.isatty()))
            named = run_query(registry, reader, "issue-changes", {"base": base}, commit) if as_text else None
        if report is not None:
            click.echo(report, nl=False)
        elif not as_text:
            emit_json(answer, pretty=True)
        else:
            click.echo(render_table(answer))
            for line in change_lines(named, archive, commit, base):
                click.echo(line)
        if result is None or result["passed"]:
            return 0
        for check in result["checks"]:
            if check["failed"]:
                named = ", ".join(check.get("failing") or ()) or check["check"]
                click.echo(
                    f"nitpicker: --fail-on {check['check']}: {check['value']} findings ({named})", err=True
                )
        return exit_codes.GATE_FAILED
