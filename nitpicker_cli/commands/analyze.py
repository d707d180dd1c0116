"""`nitpicker analyze ARCHIVE`: run analyzers over a commit and store the results in the archive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.options import plugin_setting_options, setting_flags
from nitpicker_core import hookimpl
from nitpicker_core.analyze import analyzer_registry, run_analyze
from nitpicker_core.archive import open_archive
from nitpicker_core.errors import UsageError


def choose_interactively(names: list[str], labels: dict[str, str]) -> list[str]:
    for i, name in enumerate(names, 1):
        click.echo(f"  {i}. {name} — {labels.get(name, '')}", err=True)
    answer = click.prompt("Analyzers to run (numbers, comma-separated; empty for all)", default="",
                          show_default=False, err=True)
    if not answer.strip():
        return names
    chosen = []
    for part in answer.split(","):
        part = part.strip()
        if not part.isdigit() or not 1 <= int(part) <= len(names):
            raise UsageError(f"not a number from the list: {part!r}")
        chosen.append(names[int(part) - 1])
    return chosen


@hookimpl
def register_commands(cli: click.Group, pm: Any) -> None:
    @cli.command("analyze")
    @click.argument("archive", type=click.Path(path_type=Path))
    @click.option("--all", "all_", is_flag=True, help="Run every analyzer.")
    @click.option("--plugin", "plugins", multiple=True, metavar="NAME",
                  help="Run this analyzer (repeatable). Without --all/--plugin: ask on a TTY, else run all.")
    @click.option("--commit", default=None, help="Commit id to analyze (default: HEAD).")
    @plugin_setting_options(pm)
    def analyze(archive: Path, all_: bool, plugins: tuple[str, ...], commit: str | None, **kwargs: Any) -> None:
        """Run analyzers over ARCHIVE and store tables, violations and errors with the commit."""
        app = get_app()
        config = app.config(setting_flags(kwargs, app.pm))
        open_archive(archive).close()  # a missing or broken archive is reported before anything else
        registry = analyzer_registry(app.pm)
        if not len(registry):
            raise UsageError("no analyzer is enabled (see `nitpicker plugins`)")
        names = list(plugins)
        if not names and not all_ and sys.stdin.isatty():
            names = choose_interactively(registry.names(), {a.name: a.label for a in registry})
        summary = run_analyze(app.pm, config, archive, names or None, commit)
        emit_json(summary)
