"""`nitpicker config init|show`: write a commented example config file, print the effective settings."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.settings_file import file_options, toml_value
from nitpicker_core import hookimpl
from nitpicker_core.config import COMMAND_TABLES
from nitpicker_core.errors import UsageError
from nitpicker_core.registries import setting_registry

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

_SOURCES: dict[click.core.ParameterSource | None, str] = {
    click.core.ParameterSource.DEFAULT: "default",
    click.core.ParameterSource.DEFAULT_MAP: "file",
    click.core.ParameterSource.COMMANDLINE: "flag",
    click.core.ParameterSource.ENVIRONMENT: "env",
}


def _commands(ctx: click.Context) -> dict[str, click.Command]:
    root = ctx.find_root().command
    assert isinstance(root, click.Group)
    found = {name: root.get_command(ctx, name) for name in COMMAND_TABLES}
    return {name: command for name, command in found.items() if command is not None}


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, 100, initial_indent="# ", subsequent_indent="# ") if text else []


def example(ctx: click.Context, pm: NitpickerPluginManager) -> str:
    """Every command option and plugin setting, commented out at its default, with its help."""
    lines = [
        "# nitpicker.toml: settings for every run started in this directory or below it.",
        "# Uncomment a line to change it; a flag given on the command line wins over this file.",
        "# `nitpicker config show` prints what is in effect and where each value comes from.",
        "",
    ]
    for name, command in _commands(ctx).items():
        lines.append(f"[{name}]")
        # parsed from nothing and without the group's default_map: the built-in defaults, not the file's
        plain = command.make_context(name, [], resilient_parsing=True)
        for key, param in sorted(file_options(command, pm).items()):
            assert isinstance(param, click.Option)
            lines += _comment(param.help or "")
            default = _default(param, plain)
            lines.append(
                f"# {key} = {toml_value(default)}" if default is not None else f"# {key} = …  (no default)"
            )
        lines.append("")
    for setting in sorted(setting_registry(pm), key=lambda s: (s.plugin, s.key)):
        header = f"[plugins.{setting.plugin}]"
        if header not in lines:
            lines.append(header)
        lines += _comment(setting.help or "")
        lines.append(
            f"# {setting.key} = {toml_value(setting.default)}"
            if setting.default is not None
            else f"# {setting.key} = …  (no default)"
        )
    return "\n".join(lines).rstrip() + "\n"


def _default(param: click.Option, ctx: click.Context) -> Any:
    value = ctx.params.get(str(param.name))
    if param.multiple:
        return list(value or ())
    return False if param.is_flag and value is None else _plain(value)


def effective(
    ctx: click.Context, pm: NitpickerPluginManager, name: str | None, args: list[str]
) -> dict[str, Any]:
    """Per table, each key's value and where it comes from (default, file, flag, env)."""
    app = get_app()
    commands = _commands(ctx)
    if name is not None and name not in commands:
        raise UsageError(f"no settings for {name!r}: choose one of {', '.join(commands)}")
    out: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for table, command in commands.items():
        if name is not None and table != name:
            continue
        root = ctx.find_root()
        root.default_map = app.command_defaults(root, table)
        sub = command.make_context(
            table, list(args) if table == name else [], parent=root, resilient_parsing=True
        )
        options = file_options(command, pm)
        out[table] = {
            key: {
                "value": _plain(sub.params.get(str(p.name))),
                "source": _SOURCES.get(sub.get_parameter_source(str(p.name)), "default"),
            }
            for key, p in sorted(options.items())
        }
        flags.update({k: v for k, v in sub.params.items() if v not in (None, ())})
    config = app.file_config()
    dests = {str(p.name) for table in out for p in commands[table].params}
    for setting in setting_registry(pm):
        if name is not None and setting.dest not in dests:
            continue  # the command has no flag of it: it does not read plugin settings
        flag = flags.get(setting.dest)
        source = "flag" if flag is not None else "file" if setting.config_key in config.values else "default"
        value = flag if flag is not None else config.values.get(setting.config_key, setting.default)
        out.setdefault(f"plugins.{setting.plugin}", {})[setting.key] = {
            "value": _plain(value),
            "source": source,
        }
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Path) else value


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.group("config")
    def config() -> None:
        """The config file (nitpicker.toml): write an example, show the settings in effect."""

    @config.command("init")
    @click.argument("path", type=click.Path(path_type=Path), default=Path("nitpicker.toml"))
    @click.option("--force", is_flag=True, help="Replace an existing file.")
    @click.pass_context
    def init(ctx: click.Context, path: Path, force: bool) -> None:
        """Write PATH (default: ./nitpicker.toml) with every setting commented out at its default."""
        if path.exists() and not force:
            raise UsageError(f"{path.name} exists: give --force to replace it")
        try:
            path.write_text(example(ctx, get_app().pm), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path.name}: {exc.strerror}") from None
        get_app().info(f"wrote {path.name}: uncomment the lines to change; `nitpicker config show` checks it")

    @config.command("show", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.argument("command", required=False)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_context
    def show(ctx: click.Context, command: str | None, as_json: bool) -> None:
        """Print the settings in effect and their source (default, file, flag, env).

        With COMMAND and that command's flags after it (`config show crawl --parallels 8`), the flags are
        read as that command would read them, and nothing runs.
        """
        app = get_app()
        data = effective(ctx, app.pm, command, list(ctx.args))
        for warning in app.file_config().warnings:
            app.warn(warning)
        path = app.file_config().path
        if as_json:
            emit_json({"file": path.name if path else None, "settings": data}, pretty=True)
            return
        click.echo(f"# config file: {path if path else 'none (`nitpicker config init` writes one)'}")
        for table, keys in data.items():
            click.echo(f"\n[{table}]")
            for key, item in keys.items():
                value = "…" if item["value"] is None else toml_value(item["value"])
                click.echo(f"{key} = {value}  # {item['source']}")
