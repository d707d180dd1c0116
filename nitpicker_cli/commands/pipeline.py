"""`nitpicker pipeline [URL]`: crawl → analyze (→ report) as stages of one journaled, resumable run."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from nitpicker_cli import ci_formats, exit_codes
from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.commands.analyze import complete_analyzers, summary_lines
from nitpicker_cli.commands.crawl import build_options, crawl_options
from nitpicker_cli.destinations import (
    TO_HELP,
    DestinationFlag,
    DestinationHelp,
    absolute_paths,
    destination_options,
    path_params,
    select_destination,
)
from nitpicker_cli.options import FiniteFloatRange, list_flags, setting_flags, setting_options
from nitpicker_cli.refusals import check_same_roots, unreachable_roots
from nitpicker_cli.summary import for_people, json_option
from nitpicker_core import UsageError, hookimpl
from nitpicker_core.analyze.engine import check_settings
from nitpicker_core.urls import split_credentials
from nitpicker_core.writable import check_file_destination

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

# Parameters that are about this invocation, not about what the run produces: never part of the declaration.
# Where the work runs (--executor) is one too: a run resumed on another cluster still reuses its stages.
_RUNTIME = {
    "resume",
    "journal_dir",
    "heartbeat",
    "dashboard",
    "verbose_here",
    "silent_here",
    "headers",
    "as_json",
    "executor",
    "junit",
    "sarif",
}
_PATHS = {"output", "xlsx", "csv_dir", "credentials"}
_REPORT_FLAGS = ("to", "sheet", "xlsx", "csv_dir")


def _paths() -> set[str]:
    """Parameters holding paths (stored absolute): the fixed ones and every destination's path options."""
    return _PATHS | path_params()


def _report_flags() -> set[str]:
    """Parameters that choose the report destination: given again on resume, they replace the stored ones."""
    return set(_REPORT_FLAGS) | {
        p.name
        for p in click.get_current_context().command.params
        if isinstance(p, DestinationFlag) and p.name
    }


DEMO_ARCHIVE = "nitpicker-demo.nitpicker"


@contextlib.contextmanager
def demo_site(port: int = 0, version: int = 1, *, exact: bool = False) -> Iterator[str]:
    """Serve the demo shop (the installed nitpicker_demo package) on 127.0.0.1 for the length of the run.

    ``exact``: only on ``port`` (a resumed run must see the URLs it crawled); OSError when it is taken.
    """
    from nitpicker_demo import PREFIX, serve

    try:
        server, base = serve(port=port, version=version)
    except OSError:  # the port an earlier run used is taken now
        if exact:
            raise
        server, base = serve(version=version)
    try:
        yield f"{base}{PREFIX}/"
    finally:
        server.shutdown()


@contextlib.contextmanager
def _resumed_demo(journal_path: Path, port: int, version: int) -> Iterator[str]:
    """The demo on the port the run used, or one line (and a journal event) saying that port is taken."""
    from nitpicker_core.pipeline import Journal

    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(demo_site(port, version, exact=True))
        except OSError:
            reason = (
                f"the demo this run crawled was served on port {port}, which another program uses now; "
                "free it and resume again, or start a new run"
            )
            Journal(journal_path, journal_path.stem).append("resume_refused", reason=reason)
            raise UsageError(f"cannot resume {journal_path.stem}: {reason}") from None
        yield url


def demo_target(archive: Path) -> tuple[int, int]:
    """The port and version of the demo for a run into ``archive``.

    A new archive gets version 1 on a free port. Each run into an archive holding demo commits serves the
    other version on the port those used: the pages keep their URLs and the new commit shows what changed.
    """
    from nitpicker_core.archive import open_archive

    if not archive.is_file():
        return 0, 1
    try:
        with open_archive(archive) as reader:
            info = reader.info()
            roots = list(info.get("roots") or (info.get("options") or {}).get("roots") or [])
            complete = sum(1 for commit in reader.commits() if commit["status"] == "complete")
    except Exception:  # not an archive, or broken: the crawl's own checks say so
        return 0, 1
    from nitpicker_demo import PREFIX

    others = [
        u for u in roots if urlsplit(u).hostname != "localhost" or not urlsplit(u).path.startswith(PREFIX)
    ]
    if others:  # a demo commit in another site's archive would show every page of that site as removed
        raise UsageError(
            f"{archive.name} holds a crawl of {others[0]}, not of the demo shop: give that URL to "
            "crawl it again, or write the demo to another archive with -o"
        )
    return (urlsplit(roots[0]).port or 0) if roots else 0, 1 + complete % 2


def pipeline_options(f: Any) -> Any:
    opts = [
        click.option(
            "--plugin",
            "plugins",
            multiple=True,
            metavar="NAME",
            shell_complete=complete_analyzers,
            help="Analyzer to run (repeatable; default: the default analyzers, all but opt-in ones such "
            "as lighthouse, as in `nitpicker analyze`).",
        ),
        click.option(
            "--all",
            "all_",
            is_flag=True,
            help="Run every analyzer, lighthouse and other opt-in ones included.",
        ),
        click.option("--no-analyze", is_flag=True, help="Stop after the crawl."),
        click.option(
            "--full",
            is_flag=True,
            help="Render every page again: no conditional requests, even when ARCHIVE already holds a "
            "complete crawl of the site (by default such a run asks each page whether it changed and takes "
            "unchanged pages over without rendering, as crawl --update).",
        ),
        click.option("--to", "to", metavar="NAME", help=TO_HELP),
        click.option(
            "--sheet", metavar="URL", help="Report to this Google spreadsheet (--to google-sheets)."
        ),
        click.option(
            "--xlsx", type=click.Path(path_type=Path), metavar="FILE", help="Report to an XLSX file."
        ),
        click.option(
            "--csv",
            "csv_dir",
            type=click.Path(path_type=Path),
            metavar="DIR",
            help="Report as CSV files in DIR.",
        ),
        click.option(
            "--credentials",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Google credentials for --sheet (default: ./credentials.json).",
        ),
        click.option("--only", multiple=True, metavar="SHEET", help="Report only this sheet (repeatable)."),
        click.option(
            "--dedupe-resources", is_flag=True, help="Group the Resources sheet by URL/status/type."
        ),
        click.option(
            "--compare",
            metavar="COMMIT",
            help="Commit the report compares with, for every destination (default: the previous complete "
            "commit; --html-compare/--pdf-compare win).",
        ),
        click.option(
            "--lang",
            metavar="LANG",
            help="Language of the html/pdf report: en or ja (--html-lang/--pdf-lang win).",
        ),
        click.option(
            "--fail-on",
            multiple=True,
            metavar="CHECK",
            help="Stop the run when CHECK holds after analyze, e.g. violations>0, broken-links>10, "
            "violations:markup>=5, analyzer-errors>0, crawl-errors>0 (repeatable).",
        ),
        click.option(
            "--junit",
            type=click.Path(path_type=Path, dir_okay=False),
            metavar="FILE",
            help="After the run, write its commit's issues as JUnit XML (a test case per check; findings "
            "matching --fail-on fail it, without --fail-on those of priority high or worse).",
        ),
        click.option(
            "--sarif",
            type=click.Path(path_type=Path, dir_okay=False),
            metavar="FILE",
            help="After the run, write its commit's findings as SARIF 2.1.0.",
        ),
        click.option(
            "--journal-dir",
            type=click.Path(path_type=Path),
            metavar="DIR",
            help="Where run journals go (default: ARCHIVE.runs/ next to the archive).",
        ),
        click.option(
            "--resume",
            metavar="RUN",
            help="Resume a run: its journal file, its id, or an archive (its latest run).",
        ),
        click.option(
            "--heartbeat",
            type=FiniteFloatRange(0.1),
            metavar="SECONDS",
            default=5.0,
            show_default=True,
            help="Seconds between progress events in the journal.",
        ),
        click.option("--dashboard", is_flag=True, help="Also serve the monitoring dashboard during the run."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _plain(key: str, value: Any) -> Any:
    if key in _paths() and value is not None:
        return str(Path(value).absolute())
    if key == "url" and value:
        return split_credentials(value)[0]  # basic auth is used, never stored: give the URL again on resume
    return list(value) if isinstance(value, tuple) else value


def _params(kw: dict[str, Any], settings: dict[str, Any], url: str | None) -> dict[str, Any]:
    """The invocation as plain data for the journal (no credentials, no header values)."""
    data = {k: _plain(k, v) for k, v in kw.items() if k not in _RUNTIME}
    data["url"] = _plain("url", url)
    data["settings"] = {k: _plain(k, v) for k, v in settings.items() if v is not None}
    data["header_names"] = sorted({h.partition(":")[0].strip() for h in kw.get("headers") or ()})
    return data


def _merge_resumed(
    stored: dict[str, Any], kw: dict[str, Any], settings: dict[str, Any], url: str | None
) -> tuple:
    """The stored invocation, overridden by what was given on the command line this time."""
    ctx = click.get_current_context()
    explicit = {
        name
        for name in ctx.params
        if ctx.get_parameter_source(name)
        in (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    }
    report_flags = _report_flags()
    if explicit & report_flags:  # a destination given now replaces the stored one
        explicit |= report_flags
    merged = dict(kw)
    for key, value in stored.items():
        if key in merged and key not in explicit and key not in _RUNTIME:
            merged[key] = (
                Path(value)
                if key in _paths() and value
                else tuple(value)
                if isinstance(value, list)
                else value
            )
    new_settings = {**(stored.get("settings") or {}), **{k: v for k, v in settings.items() if v is not None}}
    return merged, new_settings, url or stored.get("url")


def _report(pm: NitpickerPluginManager, kw: dict[str, Any]) -> dict[str, Any] | None:
    """The report stage's declaration from --to NAME or a shorthand (None without a destination).

    Everything but the paths is checked here, before any stage; the paths in ``_check_destinations``.
    """
    from nitpicker_core.report import (
        apply_compare,
        describe_target,
        local_target,
        prepare_destination,
        with_report_options,
    )

    chosen = select_destination(kw)
    if chosen is None:
        return None
    name, values, shown = chosen
    compare = kw.get("compare")
    values = with_report_options(pm, name, values, compare=compare, lang=kw.get("lang"))
    destination, options = prepare_destination(pm, name, values, check_paths=False, shown=shown)
    apply_compare(options, compare)
    options = absolute_paths(destination, options)
    if kw.get("dedupe_resources"):
        options["dedupe_resources"] = True
    return {
        "destination": name,
        "options": options,
        "sheets": list(kw.get("only") or ()),
        "target": describe_target(destination, options),
        "local_target": local_target(destination, options),
        "shown": shown,
    }


def _check_compare(archive: Path, compare: Any) -> None:
    """The report's compare commit is one the archive holds already: one line before the crawl otherwise."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.report import check_compare

    if compare in (None, ""):
        return
    if not archive.is_file():
        raise UsageError(f"cannot compare with commit {compare}: {archive.name} does not exist yet")
    with open_archive(archive) as reader:
        check_compare(reader, compare)


def _declaration(
    pm: NitpickerPluginManager,
    url: str,
    archive: Path,
    kw: dict[str, Any],
    options: Any,
    params: dict[str, Any],
    demo: bool,
) -> dict[str, Any]:
    from nitpicker_core.pipeline import verdict

    specs = [verdict.parse(check) for check in kw.get("fail_on") or ()]  # bad specs fail before anything runs
    if any(isinstance(spec, verdict.IssueSpec) and spec.check for spec in specs):
        verdict.check_known(specs, verdict.known_checks(pm))  # a misspelt check id too, not after the crawl
    report = _report(pm, kw)
    if report is not None:
        _check_compare(archive, report["options"].get("compare"))
    stages = ["crawl"] + ([] if kw.get("no_analyze") else ["analyze"]) + (["report"] if report else [])
    return {
        "url": split_credentials(url)[0],
        "demo": demo,
        "archive": str(archive.absolute()),
        "stages": stages,
        "crawl": options.for_storage(),
        "analyze": {"plugins": list(kw.get("plugins") or ())},
        "report": report,
        "fail_on": list(kw.get("fail_on") or ()),
        "full": bool(kw.get("full")),
        "params": params,
    }


def _summary(result: dict[str, Any], decl: dict[str, Any], journal: Path) -> dict[str, Any]:
    """The run's JSON summary: one entry per stage (crawl stats, analyze summary, report), plus the run."""
    stages = result["stages"]
    out: dict[str, Any] = {
        "archive": Path(decl["archive"]).name,
        "run": result["run"],
        "journal": journal.name,
        "stages": {k: v.get("state") for k, v in stages.items()},
    }
    failed = next((n for n, s in stages.items() if s.get("state") == "failed"), None)
    for name in ("crawl", "analyze", "report"):
        stage = stages.get(name)
        if stage is None:
            why = (
                "--no-analyze"
                if name == "analyze" and "analyze" not in decl["stages"]
                else "no report destination"
                if name == "report" and "report" not in decl["stages"]
                else f"{failed} failed"
                if failed
                else "stopped by --fail-on"
            )
            out[name] = {"skipped": why}
        elif stage.get("state") == "failed":
            out[name] = {k: stage[k] for k in ("reason", "class", "message")}
        elif name == "crawl":
            out[name] = {
                k: v
                for k, v in stage.items()
                if k not in ("state", "declaration", "mode", "seconds", "identity")
            }
            if "pages" in out[name]:  # the crawler's "pages" are the URLs it recorded, not the pages counted
                out[name]["urls_recorded"] = out[name].pop("pages")
        elif name == "analyze":
            out[name] = stage.get("summary") or {"skipped": stage.get("skipped")}
        else:
            out[name] = {
                "destination": stage.get("destination"),
                "target": stage.get("target"),
                "result": stage.get("result"),
            }
    if "verdict" in result:
        out["verdict"] = result["verdict"]
    return out


def _tell(
    app: Any, result: dict[str, Any], decl: dict[str, Any], journal: Path, output: Path, human: bool
) -> None:
    """The run's summary: a few lines for people on a terminal, the JSON summary otherwise."""
    import shlex

    from nitpicker_cli import summary

    out = _summary(result, decl, journal)
    crawl = result["stages"].get("crawl") or {}
    facts = (
        summary.gather(app.pm, output, crawl.get("commit"))
        if crawl.get("state") in ("done", "reused") and crawl.get("commit") and output.exists()
        else None
    )
    analyzed = (result["stages"].get("analyze") or {}).get("state") in ("done", "reused")
    again = "nitpicker pipeline" + ("" if str(output) == DEMO_ARCHIVE else f" -o {shlex.quote(str(output))}")
    commands = summary.next_commands(output, analyzed) + (
        [f"{again}   # again: the shop's next version, and what changed"] if decl.get("demo") else []
    )
    if not human:
        if facts is not None:
            if isinstance(out.get("crawl"), dict) and "urls_recorded" in out["crawl"]:
                out["crawl"]["pages"] = facts["pages"]
            out.update(
                totals=facts["totals"],
                crawlers=facts["crawlers"],
                findings=facts["findings"],
                changed=facts["changed"],
                next=commands,
            )
        emit_json(out, pretty=True)
        return
    if facts is None:  # the crawl failed: the errors below say why
        return
    lines = summary.crawl_lines(crawl, facts)
    if isinstance(out.get("analyze"), dict) and out["analyze"].get("analyzers"):
        lines += summary.analyze_lines(out["analyze"])
    lines += summary.findings_lines(facts["findings"], output) + summary.changed_lines(facts["changed"])
    report = out.get("report") or {}
    if report.get("target"):
        lines.append(f"Report: {report['target']}")
    lines += [
        f"Archive: {output} (commit {facts['commit']}) · journal: {journal.name}",
        "Next:",
        *(f"  {command}" for command in commands),
    ]
    summary.print_lines(lines)


def _check_destinations(
    pm: NitpickerPluginManager, archive: Path, journal: Path, report: dict[str, Any] | None
) -> None:
    """Every place the run writes to (archive, journal, local report) is writable, before any stage starts."""
    from nitpicker_core.report import check_destination_paths, destination_registry
    from nitpicker_core.writable import check_directory_destination, check_file_destination

    check_file_destination(archive, archive.name)
    if not journal.is_file():  # a resumed run appends to its journal; a new one creates it
        check_directory_destination(journal.parent, journal.parent.name)
    if report is not None:
        destination = destination_registry(pm)[report["destination"]]
        check_destination_paths(destination, report["options"], report.get("shown"))


def _resume(journal: Path, executor: Any, options: Any) -> str:
    """The command that resumes the run of ``journal``: on the same ``--executor``, which is not stored."""
    from nitpicker_core.crawler.stopping import given_secrets, resume_hint

    return resume_hint(
        journal,
        # the journal keeps where a login comes from (--cookies, --storage-state, the config file)
        needs_secrets=given_secrets(options, login_kept=True),
        executor=str(executor) if executor.distributed else None,
        command="pipeline",
    )


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("pipeline", cls=DestinationHelp, epilog=exit_codes.epilog())
    @destination_options(pm, "pipeline")
    @click.argument("url", required=False)
    @crawl_options
    @pipeline_options
    @json_option
    @setting_options(pm)
    def pipeline(url: str | None, **kw: Any) -> None:
        """Crawl URL (default: the bundled demo shop), analyze the new commit, report it when asked to.

        Without URL the demo shop is served on 127.0.0.1 and written to nitpicker-demo.nitpicker (or -o);
        run it again into the same archive to crawl the shop's next version and see what changed.

        Every run is journaled (JSON lines in ARCHIVE.runs/ or --journal-dir); `--resume RUN` reuses each
        stage output that is still valid and reruns the rest. Ends with a short summary on a terminal, JSON
        with --json or when piped. Exit code: the crawl's (0, 1, or 2 when only external links failed), 1
        when a stage failed, 3 when a --fail-on check holds, 130 when interrupted.
        """
        from nitpicker_cli.progress import PipelineProgress
        from nitpicker_core.crawler.options import default_output
        from nitpicker_core.executors import executor_client, parse_executor
        from nitpicker_core.pipeline import (
            Context,
            Journal,
            Pipeline,
            find_journal,
            new_run_id,
            replay,
            runs_dir_for,
        )

        app = get_app()
        app.adopt_verbosity(kw["verbose_here"], kw["silent_here"])
        executor = parse_executor(kw["executor"])  # a bad value is one line, before anything starts
        settings = list_flags(setting_flags(kw, app.pm))
        previous = journal_path = None
        if kw["resume"]:
            dirs = [
                d
                for d in (kw["journal_dir"], kw["output"] and runs_dir_for(Path(kw["output"])), Path("."))
                if d
            ]
            journal_path = find_journal(kw["resume"], [Path(d) for d in dirs])
            previous = replay(journal_path)
            if not previous.declaration.get("params"):
                raise UsageError(f"{journal_path.name} does not start with a run declaration")
            kw, settings, url = _merge_resumed(previous.declaration["params"], kw, settings, url)
        config = app.config(settings)
        if kw["all_"] and not kw["plugins"]:  # stored as names, so a resumed run selects the same analyzers
            from nitpicker_core.analyze import analyzer_registry

            kw["plugins"] = tuple(analyzer_registry(app.pm).names())
        if not kw["no_analyze"]:  # unknown analyzers and bad settings are refused before the crawl
            check_settings(app.pm, config, list(kw["plugins"] or ()) or None)
        with contextlib.ExitStack() as stack:
            demo = url is None
            demo_version = 0
            if (
                url is None
            ):  # a resumed demo run asks for the port and version it had, so its declaration matches
                if previous and previous.declaration.get("demo") and journal_path is not None:
                    port = urlsplit(previous.declaration.get("url") or "").port or 0
                    demo_version = int(previous.declaration.get("demo_version") or 1)
                    url = stack.enter_context(_resumed_demo(journal_path, port, demo_version))
                else:
                    port, demo_version = demo_target(Path(kw["output"] or DEMO_ARCHIVE))
                    url = stack.enter_context(demo_site(port, demo_version))
            options, _ = build_options((url,), {**kw, "list_urls": (), "list_file": None})
            output = Path(kw["output"] or (DEMO_ARCHIVE if demo else default_output(url)))
            if output.suffix != ".nitpicker":
                output = output.with_name(output.name + ".nitpicker")
            if not demo and previous is None:  # other roots into an existing archive: refused, as by `crawl`
                check_same_roots(output, options.roots)
            params = _params(kw, settings, None if demo else url)
            params["output"] = str(output.absolute())
            decl = _declaration(app.pm, url, output, kw, options, params, demo)
            if demo:
                decl["demo_version"] = demo_version
            if journal_path is None:
                run_id = new_run_id()
                journal_path = Path(kw["journal_dir"] or runs_dir_for(output)) / f"{run_id}.jsonl"
            _check_destinations(app.pm, output, journal_path, decl["report"])
            ci_files = {fmt: kw[fmt] for fmt in ("junit", "sarif") if kw.get(fmt)}
            for path in ci_files.values():
                check_file_destination(path, path.name)
            journal = Journal(journal_path, journal_path.stem)
            if kw["dashboard"]:
                from nitpicker_cli.commands.dashboard import start_dashboard

                server, address = start_dashboard([journal_path.parent], "127.0.0.1", 8766)
                stack.callback(server.shutdown)
                app.info(f"dashboard: {address}")
            # this line first, then the live display: stages are shown in the order they run, never interleaved
            app.info(
                f"pipeline: run {journal.run_id}: {' → '.join(decl['stages'])} of {decl['url']} → {output.name}"
            )
            client = stack.enter_context(executor_client(executor, app.info))  # one cluster for every stage
            progress = stack.enter_context(PipelineProgress(options.parallels, silent=app.silent))
            stack.enter_context(progress.errors_counted(app.pm))
            ctx = Context(
                app.pm,
                config,
                decl,
                options,
                on_crawl_progress=progress.update,
                previous=previous,
                silent=app.silent,
                executor=client,
            )
            progress.watch_run(ctx)
            runner = Pipeline(ctx, journal, heartbeat=kw["heartbeat"])
            runner.start(resumed=previous is not None)
            code, result = runner.run()
        analysis = result["stages"].get("analyze") or {}
        human = for_people(kw["as_json"])
        if (
            analysis.get("state") == "done" and not human
        ):  # a reused analysis was summarized by the run that made it
            for line in summary_lines((analysis.get("summary") or {}).get("analyzers") or {}):
                app.info(line)
        _tell(app, result, decl, journal_path, output, human)
        crawled = result["stages"].get("crawl") or {}
        if ci_files and crawled.get("state") in ("done", "reused") and code != exit_codes.INTERRUPTED:
            ci_formats.write_reports(
                app.pm, output, crawled["commit"], ci_files, decl["fail_on"], result.get("verdict")
            )
        elif ci_files:
            app.warn(f"no commit to report: {', '.join(str(p) for p in ci_files.values())} not written")
        if analysis.get("failed"):
            app.warn(f"{', '.join(analysis['failed'])} failed on every page")
        if crawled.get("internal_errors") or crawled.get("state") == "failed":
            for line in unreachable_roots(output, options.roots):  # why the site could not be crawled
                click.echo(f"nitpicker: error: {line}", err=True)
        for name, stage in result["stages"].items():
            if stage.get("state") == "failed" and stage.get("reason") == "interrupted":
                # as `crawl` says it, after the live display: why (a Dask cluster gone…), then how to go on
                click.echo(f"nitpicker: {stage['message']}", err=True)
                click.echo(
                    f"nitpicker: interrupted; resume with: {_resume(journal_path, executor, options)}",
                    err=True,
                )
            elif stage.get("state") == "failed":
                click.echo(
                    f"nitpicker: error: {name} failed ({stage['reason']}, {stage['class']}): "
                    f"{stage['message']}",
                    err=True,
                )
        if result.get("verdict") and not result["verdict"]["passed"]:
            failed = ", ".join(
                c["check"] + (f" ({', '.join(c['failing'])})" if c.get("failing") else "")
                for c in result["verdict"]["checks"]
                if c["failed"]
            )
            click.echo(f"nitpicker: quality gate failed: {failed}", err=True)
        sys.exit(code)
