"""`nitpicker plugins`: every plugin found, with its version, hooks and status, as JSON."""

from __future__ import annotations

from typing import Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("plugins")
    @click.option("--pretty/--compact", default=True, help="Indent the JSON (default) or not.")
    def plugins(pretty: bool) -> None:
        """List plugins as JSON: name, version, hooks, status (enabled / disabled / unavailable: reason)."""
        app = get_app()
        app.config()  # runs configure, so plugins that decline show up as unavailable with their reason
        data: list[dict[str, Any]] = [info.as_dict() for info in app.pm.plugin_infos()]
        emit_json(data, pretty)
