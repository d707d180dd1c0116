"""Click options derived from plugin settings: one declaration gives the config key and the flag.

``setting_options(pm)`` adds a flag per declared setting to a command (``analyze`` and ``pipeline`` use
it); ``setting_flags`` pops them back out of the command's keyword arguments and ``list_flags`` turns
the repeated list flags into lists, ready for ``App.config``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from nitpicker_core.registries import setting_registry
from nitpicker_core.types import Setting

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager

#: the plugins whose settings the crawl checks read (``Check.settings``): their flags are ``crawl``'s and
#: ``issues``' too, which index and show those checks' findings
CHECK_SETTING_PLUGINS = ("checks",)
#: and the settings that make analyzer checks (their ids and priorities): ``issues`` gates on those too
ISSUES_SETTINGS = (
    *CHECK_SETTING_PLUGINS,
    "custom-search.contains",
    "custom-search.missing",
    "custom-search.priority",
    "custom-search.within",
)


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` that refuses ``nan`` and ``inf``: NaN passes every comparison of a range check."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


_CLICK_TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "list": str,
}  # finite: config.py checks


def _help(setting: Setting, suffix: str = "") -> str:
    help_text = (setting.help or f"setting {setting.config_key}") + suffix
    if setting.default not in (None, "", [], ()):  # an empty default means "not set": nothing to show
        shown = ", ".join(setting.default) if isinstance(setting.default, list) else setting.default
        help_text += f" (default: {shown})"
    return help_text


def _metavar(setting: Setting) -> str:
    """What the value is, from the setting's name (``--axe-lang LANG``), never its type name (``STR``)."""
    return setting.key.upper().replace("-", "_")


def setting_option(setting: Setting) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The flag of one setting: ``--x/--no-x`` for a bool, repeatable for a list, typed otherwise."""
    if setting.type == "bool":
        negative = setting.flag.replace("--", "--no-", 1)
        return click.option(f"{setting.flag}/{negative}", setting.dest, default=None, help=_help(setting))
    if setting.type == "list" and not setting.split:
        # each occurrence whole (a selector or regex holds commas); a list, which ``list_flags`` leaves as is
        return click.option(
            setting.flag,
            setting.dest,
            multiple=True,
            metavar=_metavar(setting),
            callback=lambda _ctx, _param, value: list(value) if value else None,
            help=_help(setting, "; repeatable"),
        )
    if setting.type == "list":
        return click.option(
            setting.flag,
            setting.dest,
            multiple=True,
            metavar=_metavar(setting),
            help=_help(setting, "; repeatable, or comma-separated"),
        )
    return click.option(
        setting.flag,
        setting.dest,
        type=_CLICK_TYPES[setting.type],
        default=None,
        help=_help(setting),
        metavar=_metavar(setting),
    )


def setting_options(pm: NitpickerPluginManager, plugins: Iterable[str] | None = None) -> Callable[[Any], Any]:
    """Decorate a command with a flag for every declared setting (of ``plugins``, or of all plugins).

    An entry of ``plugins`` is a plugin's name (all its settings) or ``plugin.key`` (that one setting).

    List settings repeat (``--search-keywords a --search-keywords b``), and each occurrence may hold
    commas; read them back with ``list_flags(setting_flags(kwargs, pm))``.
    """
    settings = list(setting_registry(pm))
    if plugins is not None:
        wanted = set(plugins)
        settings = [s for s in settings if s.plugin in wanted or f"{s.plugin}.{s.key}" in wanted]

    def decorate(func: Any) -> Any:
        for setting in reversed(settings):
            func = setting_option(setting)(func)
        return func

    return decorate


plugin_setting_options = setting_options  # the earlier name


def setting_flags(kwargs: dict[str, Any], pm: NitpickerPluginManager) -> dict[str, Any]:
    """Pop the setting flags out of a command's kwargs, so the command keeps only its own."""
    dests = {s.dest for s in setting_registry(pm)}
    return {key: kwargs.pop(key) for key in list(kwargs) if key in dests}


def list_flags(flags: dict[str, Any]) -> dict[str, Any]:
    """Repeated list flags → one list (each occurrence may hold commas); none given → None (not set)."""
    out = {}
    for key, value in flags.items():
        if isinstance(value, tuple):
            parts = [part.strip() for item in value for part in item.split(",") if part.strip()]
            value = parts if value else None
        out[key] = value
    return out


def choose_from_menu(
    entries: list[tuple[str, str]], question: str, defaults: list[str], empty: str = "the default ones"
) -> list[str]:
    """A numbered menu on stderr: ``entries`` are (name, description); an empty answer gives ``defaults``."""
    for i, (name, description) in enumerate(entries, 1):
        click.echo(f"  {i}. {name} — {description}", err=True)

    def names(answer: str) -> list[str]:
        if not answer.strip():
            return defaults
        chosen = []
        for part in answer.split(","):
            part = part.strip()
            if not part.isdigit() or not 1 <= int(part) <= len(entries):
                # click shows the message and asks again, rather than ending the command on a typo
                raise click.UsageError(f"not a number from the list: {part!r}")
            chosen.append(entries[int(part) - 1][0])
        return chosen

    return click.prompt(
        f"{question} (numbers, comma-separated; empty for {empty})",
        default="",
        show_default=False,
        err=True,
        value_proc=names,
    )
