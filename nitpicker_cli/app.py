"""The object every command receives: the plugin manager, verbosity and the resolved configuration."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import click

from nitpicker_core.config import Config, load_config
from nitpicker_core.plugins import NitpickerPluginManager


@dataclass
class App:
    pm: NitpickerPluginManager
    verbose: bool = False
    silent: bool = False
    _config: Config | None = field(default=None, repr=False)
    _file: Config | None = field(default=None, repr=False)

    def file_config(self) -> Config:
        """The config file as read (once), its command tables checked against the commands' options."""
        if self._file is None:
            from nitpicker_cli.settings_file import table_keys

            ctx = click.get_current_context(
                silent=True
            )  # none when used outside a command: only [crawl]'s limits
            root = ctx.find_root().command if ctx is not None else None
            keys = table_keys(root, self.pm) if isinstance(root, click.Group) else None
            self._file = load_config(self.pm, commands=keys)
        return self._file

    def config(self, flags: Mapping[str, Any] | None = None) -> Config:
        """Load the config file once, apply this run's flags, configure the plugins, report unknown keys."""
        if self._config is None:
            base = self.file_config()
            for warning in base.warnings:
                self.warn(warning)
            self._config = base.override(flags or {})
            self.pm.configure_plugins(self._config)
        return self._config

    def command_defaults(self, ctx: click.Context, name: str | None = None) -> dict[str, Any] | None:
        """The group's ``default_map``: the options of the invoked command (or ``name``) from the config file."""
        from nitpicker_cli.settings_file import defaults_for
        from nitpicker_core.config import COMMAND_TABLES

        name = name or ctx.invoked_subcommand
        command = (
            ctx.command.get_command(ctx, name) if name and isinstance(ctx.command, click.Group) else None
        )
        if command is None or name not in COMMAND_TABLES:
            return None
        return {name: defaults_for(self.file_config(), command, name, self.pm, ctx)}

    def adopt_verbosity(self, verbose: bool, silent: bool) -> None:
        """``--verbose``/``--silent`` given after a subcommand mean the same as before it."""
        import logging

        self.verbose = self.verbose or verbose
        self.silent = self.silent or silent
        if verbose:
            logging.getLogger().setLevel(logging.DEBUG)
        elif silent:
            logging.getLogger().setLevel(logging.ERROR)

    def close(self) -> None:
        if self._config is not None:
            self.pm.unconfigure_plugins(self._config)

    def warn(self, message: str) -> None:
        if not self.silent:
            click.echo(f"nitpicker: warning: {message}", err=True)

    def info(self, message: str) -> None:
        if not self.silent:
            click.echo(message, err=True)


def get_app() -> App:
    ctx = click.get_current_context()
    app = ctx.find_object(App)
    if app is None:  # pragma: no cover - only when a command is invoked outside the nitpicker group
        raise click.UsageError("this command must run under `nitpicker`")
    return app


def emit_json(data: Any, pretty: bool = False) -> None:
    import json

    text = json.dumps(data, ensure_ascii=False, indent=2 if pretty else None, default=str, sort_keys=True)
    sys.stdout.write(text + "\n")
