"""`nitpicker plugins`: every plugin found, with its version, hooks and status, as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import hookimpl
from nitpicker_core.errors import NitpickerError

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def _collect_all(pm: NitpickerPluginManager) -> None:
    """Ask every plugin for its contributions, so one whose ``register_*`` hook fails is listed so."""
    from nitpicker_core.analyze import analyzer_registry
    from nitpicker_core.query import query_registry
    from nitpicker_core.report import destination_registry, sheet_registry

    for registry in (query_registry, analyzer_registry, sheet_registry, destination_registry):
        try:
            registry(pm)
        except NitpickerError:  # a failing plugin is contained in collect; this is a registry's own check
            pass


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("plugins")
    @click.option("--pretty/--compact", default=True, help="Indent the JSON (default) or not.")
    def plugins(pretty: bool) -> None:
        """List plugins as JSON: name, version, hooks, status (enabled / disabled / unavailable: reason)."""
        app = get_app()
        config = (
            app.config()
        )  # runs configure, so plugins that decline show up as unavailable with their reason
        for error in dict.fromkeys(config.errors.values()):  # what stops the commands using these plugins
            app.warn(error)
        _collect_all(app.pm)
        data: list[dict[str, Any]] = [info.as_dict() for info in app.pm.plugin_infos()]
        emit_json(data, pretty)
