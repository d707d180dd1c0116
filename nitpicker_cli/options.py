"""Click options derived from plugin settings: one declaration gives the config key and the flag."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click

from nitpicker_core.config import collect_settings
from nitpicker_core.types import Setting

_CLICK_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "list": str}


def setting_option(setting: Setting) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    help_text = setting.help or f"setting {setting.config_key}"
    if setting.default is not None:
        help_text += f" (default: {setting.default!r})"
    if setting.type == "bool":
        negative = setting.flag.replace("--", "--no-", 1)
        return click.option(f"{setting.flag}/{negative}", setting.dest, default=None, help=help_text)
    if setting.type == "list":
        help_text += "; comma-separated"
    return click.option(setting.flag, setting.dest, type=_CLICK_TYPES[setting.type], default=None,
                        help=help_text, metavar=setting.type.upper())


def plugin_setting_options(pm: Any, plugins: Iterable[str] | None = None) -> Callable[[Any], Any]:
    """Decorate a command with a flag for every declared setting (of ``plugins``, or of all plugins)."""
    settings = list(collect_settings(pm))
    if plugins is not None:
        wanted = set(plugins)
        settings = [s for s in settings if s.plugin in wanted]

    def decorate(func: Any) -> Any:
        for setting in reversed(settings):
            func = setting_option(setting)(func)
        return func

    return decorate


def setting_flags(kwargs: dict[str, Any], pm: Any) -> dict[str, Any]:
    """Pop the setting flags out of a command's kwargs, so the command keeps only its own."""
    dests = {s.dest for s in collect_settings(pm)}
    return {key: kwargs.pop(key) for key in list(kwargs) if key in dests}
