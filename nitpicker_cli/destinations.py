"""``--to NAME`` and the options each report destination declares, as real click options grouped in --help.

A destination's option ``key`` becomes ``--<destination>-<key>`` (``--xlsx-file``, ``--csv-dir``); the
shorthands ``--sheet``, ``--xlsx`` and ``--csv`` select a destination and set its main option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nitpicker_core.errors import UsageError
from nitpicker_core.report import destination_from_flags, destination_registry
from nitpicker_core.types import OUTPUT_TYPES, Destination, DestinationOption

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

TO_HELP = (
    "Write the report to this destination, by name (see the Destination sections below and "
    "`nitpicker plugins`); --sheet, --xlsx and --csv are shorthands."
)
_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float}
_PATH_TYPES = ("file", *OUTPUT_TYPES)


class DestinationFlag(click.Option):
    """A generated option of one destination: --help lists it under that destination."""

    def __init__(self, *args: Any, destination: str, key: str, path: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.destination, self.key, self.path = destination, key, path


class DestinationHelp(click.Command):
    """A command whose --help shows each destination's options in a section of their own."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        plain: list[tuple[str, str]] = []
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None or isinstance(param, click.Argument):
                continue
            if isinstance(param, DestinationFlag):
                groups.setdefault(param.destination, []).append(record)
            else:
                plain.append(record)
        if plain:
            with formatter.section("Options"):
                formatter.write_dl(plain)
        for name, records in groups.items():
            with formatter.section(f"Destination {name} (--to {name})"):
                formatter.write_dl(records)


def _flag(destination: Destination, option: DestinationOption) -> DestinationFlag:
    flag, dest = destination.flag(option.key), destination.dest(option.key)
    text = option.help or f"option {option.key} of destination {destination.name}"
    if option.required:
        text += f" Required with --to {destination.name}."
    if option.default is not None:
        text += f" Default: {option.default}."
    tags: dict[str, Any] = {"destination": destination.name, "key": option.key, "help": text, "default": None}
    if option.type == "bool":
        return DestinationFlag([f"{flag}/{flag.replace('--', '--no-', 1)}", dest], **tags)
    if option.type in _PATH_TYPES:
        metavar = "DIR" if option.type == "output-dir" else "FILE"
        return DestinationFlag([flag, dest], type=click.Path(), metavar=metavar, path=True, **tags)
    metavar = "TEXT" if option.type == "str" else option.type.upper()
    return DestinationFlag([flag, dest], type=_TYPES[option.type], metavar=metavar, **tags)


def destination_options(pm: NitpickerPluginManager, command: str) -> Callable[[Any], Any]:
    """Add every registered destination's declared options to ``command`` (put it above its other options).

    A destination option whose flag or name another option of the command already has makes its plugin
    unavailable with the reason, rather than shadow an option silently.
    """

    def decorate(func: Any) -> Any:
        existing = getattr(func, "__click_params__", [])
        taken = {o: "nitpicker" for p in existing for o in (*p.opts, *p.secondary_opts, p.name) if o}
        targets = destination_registry(pm)
        is_builtin = getattr(pm, "is_builtin", lambda name: True)
        entries = sorted(targets.entries(), key=lambda e: (not is_builtin(e.plugin), e.order, e.name))
        made: list[DestinationFlag] = []
        for entry in entries:
            flags = [_flag(entry.item, option) for option in entry.item.options]
            names = [(n, f) for f in flags for n in (*f.opts, *f.secondary_opts, f.name)]
            clash = next(((n, taken[n]) for n, _ in names if n in taken), None)
            if clash is not None:  # built-ins come first, so a built-in can only clash with the command
                owner = "an option" if clash[1] == "nitpicker" else f"an option of plugin {clash[1]}"
                pm.decline(
                    entry.plugin,
                    f"destination {entry.name}: {clash[0]} is already {owner} of `nitpicker {command}`",
                )
                continue
            taken.update({n: entry.plugin for n, _ in names})
            made.extend(flags)
        # click reverses __click_params__: inserted first, the generated options come after the command's own
        func.__click_params__ = [*reversed(made), *existing]
        return func

    return decorate


def destination_values(kw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The generated options given on this command line: destination → {option key: value}."""
    given: dict[str, dict[str, Any]] = {}
    for param in click.get_current_context().command.params:
        if isinstance(param, DestinationFlag) and kw.get(param.name) is not None:
            given.setdefault(param.destination, {})[param.key] = kw[param.name]
    return given


def path_params() -> set[str]:
    """The parameter names of the generated path options (stored absolute by `nitpicker pipeline`)."""
    return {
        p.name
        for p in click.get_current_context().command.params
        if isinstance(p, DestinationFlag) and p.path and p.name
    }


def _typed_flag(destination: str, key: str) -> str:
    for param in click.get_current_context().command.params:
        if isinstance(param, DestinationFlag) and (param.destination, param.key) == (destination, key):
            return param.opts[0]
    return key


def select_destination(kw: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, str]] | None:
    """(destination, option values, flags as typed) from ``--to`` or one shorthand; None when neither is given.

    One line and exit 1 for two destinations at once, or an option given for a destination not chosen.
    """
    given = destination_values(kw)
    shorthands = {"sheet": kw.get("sheet"), "xlsx": kw.get("xlsx"), "csv": kw.get("csv_dir")}
    to = kw.get("to")
    name: str | None = to
    values: dict[str, Any] = {}
    shown: dict[str, str] = {}
    if any(shorthands.values()):
        short_name, values = destination_from_flags(
            **{k: str(v) if v else None for k, v in shorthands.items()}
        )
        flag = next(f"--{k}" for k, v in shorthands.items() if v)
        if to:
            raise UsageError(f"give one destination, not --to and {flag}")
        name = short_name
        shown = {key: flag for key in values}
        if name == "google-sheets":
            shown["credentials"] = "--credentials"  # its shorthand, even when the default is used
            if kw.get("credentials"):
                values["credentials"] = str(kw["credentials"])
        both = sorted(set(values) & set(given.get(name, {})))
        if both:
            raise UsageError(f"give {shown[both[0]]} or {_typed_flag(name, both[0])}, not both")
    elif to == "google-sheets" and kw.get("credentials"):
        values["credentials"], shown["credentials"] = str(kw["credentials"]), "--credentials"
    for other, options in given.items():
        if other != name:
            flag = _typed_flag(other, next(iter(options)))
            raise UsageError(
                f"{flag} is an option of destination {other}: give --to {other}"
                if name is None
                else f"{flag} is an option of destination {other}, not of {name}"
            )
    if name is None:
        return None
    return name, {**values, **given.get(name, {})}, shown


def absolute_paths(destination: Destination, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with each path option made absolute (a resumed run may start from another directory)."""
    paths = {o.key for o in destination.options if o.type in _PATH_TYPES}
    return {k: str(Path(v).absolute()) if k in paths and v else v for k, v in options.items()}
