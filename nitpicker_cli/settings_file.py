"""Command options in the config file: the `[crawl]`, `[analyze]`, `[report]`, `[pipeline]` tables as click defaults.

A table's key is the option's long flag with ``_`` for ``-`` (``max_pages``, ``no_image``, ``plugin``).
The tables become the invoked command's ``default_map``, so a flag given on the command line still wins and
``ctx.get_parameter_source`` tells a file value (``DEFAULT_MAP``) from a default or a flag. ``pipeline``
takes ``[crawl]``, then the keys of ``[analyze]`` it shares, then ``[pipeline]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from nitpicker_core.config import COMMAND_TABLES, Config
from nitpicker_core.errors import UsageError
from nitpicker_core.registries import setting_registry

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

# About one invocation, never a saved setting (and --header values are secrets: never written anywhere).
PER_RUN = frozenset(
    {
        "help",
        "verbose_here",
        "silent_here",
        "resume",
        "append",
        "update",
        "retry_failed",
        "inventory",
        "list_urls",
        "list_file",
        "commit",
        "headers",
    }
)
# the tables a command's defaults come from, later ones winning
SOURCES = {"pipeline": ("crawl", "analyze", "pipeline")}


def file_key(param: click.Parameter) -> str:
    """The config-file key of an option: its longest flag without dashes (``--max-pages`` → ``max_pages``)."""
    flags = [opt for opt in param.opts if opt.startswith("--")] or [str(param.name)]
    return max(flags, key=len).lstrip("-").replace("-", "_")


def file_options(command: click.Command, pm: NitpickerPluginManager) -> dict[str, click.Parameter]:
    """The options of ``command`` that can live in its table, by file key (plugin settings have their own)."""
    settings = {s.dest for s in setting_registry(pm)}
    return {
        file_key(p): p
        for p in command.params
        if isinstance(p, click.Option) and p.name not in PER_RUN and p.name not in settings
    }


def table_keys(group: click.Group, pm: NitpickerPluginManager) -> dict[str, set[str]]:
    """What each command table takes: its command's options (``[analyze]`` also whatever pipeline shares)."""
    ctx = click.Context(group)
    keys = {}
    for name in COMMAND_TABLES:
        command = group.get_command(ctx, name)
        keys[name] = set(file_options(command, pm)) if command is not None else set()
    return keys


def defaults_for(
    config: Config, command: click.Command, name: str, pm: NitpickerPluginManager, ctx: click.Context
) -> dict[str, Any]:
    """The ``default_map`` of ``name`` from the file's tables; a value its option refuses is a one-line error."""
    if name == "crawl" or name == "pipeline":
        _ = config.crawl  # a malformed [crawl] limit: the error this table has always given
    where = config.path.name if config.path else "config"
    options = file_options(command, pm)
    defaults: dict[str, Any] = {}
    for table in SOURCES.get(name, (name,)):
        error = config.errors.get(table)
        if error:
            raise UsageError(error)
        for key, value in config.tables.get(table, {}).items():
            param = options.get(key)
            if param is None:
                continue  # a key of another table this command does not share (e.g. analyze.timeout)
            if param.multiple and isinstance(value, str):
                value = [value]
            try:
                param.type_cast_value(ctx, value)
            except click.BadParameter as exc:
                raise UsageError(f"{where}: {table}.{key}: {exc.message}") from None
            defaults[str(param.name)] = value
    return defaults


def toml_value(value: Any) -> str:
    """A default as TOML (strings and lists quoted the JSON way, which TOML basic strings share)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)
