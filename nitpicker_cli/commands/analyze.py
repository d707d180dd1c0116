"""`nitpicker analyze ARCHIVE`: run analyzers over a commit and store the results in the archive."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.options import (
    FiniteFloatRange,
    choose_from_menu,
    list_flags,
    setting_flags,
    setting_options,
)
from nitpicker_cli.summary import for_people, json_option
from nitpicker_core import hookimpl, query_registry, run_query
from nitpicker_core.analyze import analyze as run_analyzers
from nitpicker_core.analyze import analyzer_registry, default_names
from nitpicker_core.analyze.engine import check_settings
from nitpicker_core.archive import open_archive
from nitpicker_core.errors import UsageError
from nitpicker_core.writable import check_file_destination

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def choose_interactively(registry: Any, defaults: list[str]) -> list[str]:
    entries = [(a.name, a.label + ("" if a.name in defaults else " (only when chosen)")) for a in registry]
    return choose_from_menu(entries, "Analyzers to run", defaults)


def complete_analyzers(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of --plugin: the enabled analyzers' names (the CLI's plugin manager is the root object)."""
    app = ctx.find_root().obj
    names = analyzer_registry(app.pm).names() if app is not None else []
    return [name for name in names if name.startswith(incomplete)]


def summary_lines(analyzers: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, s in analyzers.items():
        urls = f" + {s['urls']} URLs" if s["urls"] else ""
        # pages with a check left out (too large, too slow) and pages read rendered for want of the sent HTML
        skipped = f", {s['skipped']} skipped (see its 'skipped' findings)" if s.get("skipped") else ""
        missing = (
            f"; {s['source_missing']} pages read as rendered: the archive did not keep the HTML the "
            "server sent"
            if s.get("source_missing")
            else ""
        )
        lines.append(
            f"{name}: {s['pages']} pages{urls}, {s['cached']} cached, {s['violations']} violations, "
            f"{s['errors']} errors ({s['timeouts']} timeouts){skipped}{missing}"
        )
    return lines


def unavailable(pm: NitpickerPluginManager) -> dict[str, str]:
    return {info.name: info.status for info in pm.infos.values() if info.status.startswith("unavailable")}


def error_lines(pm: NitpickerPluginManager, archive: Path, commit: int, analyzers: list[str]) -> list[str]:
    """Each analyzer error of ``commit`` (analyzer, URL, message, then the traceback indented), through the
    ``analyzer-errors`` query, so the CLI shows what the query, the MCP tool and the viewer show."""
    registry = query_registry(pm)
    if "analyzer-errors" not in registry:
        return ["(the analyzer-errors query is not available: its plugin is disabled)"]
    lines = []
    with open_archive(archive) as reader:
        for analyzer in analyzers:
            offset: int | None = 0
            while offset is not None:
                found = run_query(
                    registry,
                    reader,
                    "analyzer-errors",
                    {"analyzer": analyzer, "limit": 1000, "offset": offset},
                    commit,
                )
                for row in found["items"]:
                    lines.append(f"{row['analyzer']}: {row['url'] or '(no URL)'}: {row['error']}")
                    if row["traceback"]:
                        lines.append(textwrap.indent(row["traceback"].rstrip(), "    "))
                offset = found["next_offset"]
    return lines


def _tell(
    pm: NitpickerPluginManager, archive: Path, commit: int, summary: dict[str, Any], human: bool
) -> None:
    """The run's summary: a few lines for people on a terminal (findings by priority too), JSON otherwise."""
    from nitpicker_cli import summary as said

    if not human:
        emit_json(summary)
        return
    facts = said.gather(pm, archive, commit)
    said.print_lines(
        [
            *said.analyze_lines(summary),
            *said.findings_lines(facts["findings"], archive),
            *said.closing_lines(archive, commit, analyzed=True),
        ]
    )


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("analyze")
    @click.argument("archive", type=click.Path(path_type=Path))
    @click.option(
        "--all", "all_", is_flag=True, help="Run every analyzer, lighthouse and other opt-in ones included."
    )
    @click.option(
        "--plugin",
        "plugins",
        multiple=True,
        metavar="NAME",
        shell_complete=complete_analyzers,
        help="Run this analyzer (repeatable). Without --all/--plugin: ask on a TTY, else run the default ones (all but opt-in analyzers such as lighthouse).",
    )
    @click.option("--commit", default=None, help="Commit id to analyze (default: HEAD).")
    @click.option(
        "--timeout",
        type=FiniteFloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Time limit of one each_page call for every analyzer (default: each analyzer's own, 60 s).",
    )
    @click.option(
        "--executor",
        default="local",
        show_default=True,
        metavar="WHERE",
        help="Where each_page runs: local (this machine's worker processes), dask-local[:N] (a Dask "
        "cluster of N worker processes here, default 2) or dask://HOST:PORT (a Dask scheduler); "
        'Dask needs pip install "nitpicker[dask]".',
    )
    @click.option(
        "--no-cache",
        is_flag=True,
        help="Recompute every page instead of reusing results stored for the same HTML, analyzer "
        "version and settings.",
    )
    @click.option(
        "-v",
        "--verbose",
        "verbose_here",
        is_flag=True,
        help="Same as `nitpicker --verbose`; also print each analyzer error with its traceback.",
    )
    @click.option("-s", "--silent", "silent_here", is_flag=True, help="Same as `nitpicker --silent`.")
    @json_option
    @setting_options(pm)
    def analyze(
        archive: Path,
        all_: bool,
        plugins: tuple[str, ...],
        commit: str | None,
        timeout: float | None,
        executor: str,
        no_cache: bool,
        verbose_here: bool,
        silent_here: bool,
        as_json: bool,
        **kwargs: Any,
    ) -> None:
        """Run analyzers over ARCHIVE and store tables, violations and errors with the commit.

        Ends with a short summary on a terminal, JSON with --json or when piped; exits 1 when an analyzer
        failed on every page it was given. With --verbose, each analyzer error (analyzer, URL, message and
        traceback) is printed to stderr.
        """
        from nitpicker_core.executors import executor_client, parse_executor

        app = get_app()
        app.adopt_verbosity(verbose_here, silent_here)
        where = parse_executor(executor)  # a bad value is one line, before anything starts
        config = app.config(list_flags(setting_flags(kwargs, app.pm)))
        before = unavailable(app.pm)
        registry = analyzer_registry(app.pm)
        # a plugin whose analyzer cannot work (neither each_page nor each_url, …) is left out; the others run
        for name, status in sorted(unavailable(app.pm).items()):
            if name not in before:
                app.warn(f"plugin {name} is {status}")
        names = list(plugins) or (registry.names() if all_ else [])
        interactive = not names and sys.stdin.isatty() and len(registry) > 0
        if not interactive and len(registry):  # unknown names, bad settings: before looking at the archive
            names = check_settings(app.pm, config, names or None)
        # a missing or broken archive, a commit it lacks, a directory the result cannot be written to:
        # each is reported before anything else, and before the working copy (the stub) is made
        with open_archive(archive) as reader:
            reader.resolve(commit)
        check_file_destination(archive, archive.name)
        if not len(registry):
            raise UsageError("no analyzer is enabled (see `nitpicker plugins`)")
        if interactive:
            names = choose_interactively(registry, default_names(registry))
        from nitpicker_cli.progress import AnalyzeProgress
        from nitpicker_core.analyze.dask_pool import ClusterLost

        try:
            with executor_client(where, app.info) as client, AnalyzeProgress(app.silent) as progress:
                run = run_analyzers(
                    app.pm,
                    config,
                    archive,
                    names or None,
                    commit,
                    progress.update,
                    timeout,
                    use_cache=not no_cache,
                    executor=client,
                )
        except ClusterLost as exc:  # interrupted, as on Ctrl-C: what was recorded stays for the next run
            # said as `crawl` says it, once the progress display is gone: why, then how to go on (exit 130)
            click.echo(f"nitpicker: {exc.reason}", err=True)
            click.echo(
                "nitpicker: interrupted; run the same command again to finish (the pages done are kept)",
                err=True,
            )
            sys.exit(130)
        summary = run.summary()
        human = for_people(as_json)
        if not human:
            for line in summary_lines(summary["analyzers"]):
                app.info(line)
        errors = sum(s.errors for s in run.summaries.values())
        if errors and app.verbose:
            for line in error_lines(app.pm, archive, run.commit, run.analyzers):
                click.echo(line, err=True)
        elif errors:
            app.info(
                f"{errors} analyzer errors: see them with `nitpicker analyze --verbose` or "
                f"`nitpicker query {archive.name} analyzer-errors`"
            )
        _tell(app.pm, archive, run.commit, summary, human)
        failed = [name for name, s in run.summaries.items() if s.failed_everywhere]
        if failed:
            app.warn(f"{', '.join(failed)} failed on every page")
            sys.exit(1)
