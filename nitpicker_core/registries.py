"""Every collector of named contributions in one place: settings, analyzers, queries, sheets, destinations,
viewer blueprints.

Each function calls one ``register_*`` hook on every plugin (``registry.collect``) and checks what comes
back, so a plugin that registers something invalid is unavailable with the reason and every other plugin
and command keeps working. Modules that need a registry import it from here, never from each other (the
analyze engine and its worker pool, reports and the analyze package).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from typing import TYPE_CHECKING, Any

from nitpicker_core.checks import CHECK_ID_RE, Check, validate_check
from nitpicker_core.errors import RegistrationError
from nitpicker_core.registry import KEBAB_RE, NAME_RE, TITLE_RE, Registry, collect
from nitpicker_core.types import SETTING_TYPES, Analyzer, Destination, Query, ReportSection, Setting, Sheet

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "analyzer_registry",
    "blueprint_registry",
    "check_registry",
    "destination_registry",
    "query_registry",
    "section_registry",
    "setting_registry",
    "sheet_registry",
]

#: a setting key becomes part of a config key (``plugins.P.KEY``), a flag and a Python identifier
SETTING_KEY_RE = re.compile(r"^[a-z][a-z0-9_-]*$")


def _setting(
    plugin: str,
    key: str,
    type: str = "str",
    default: Any = None,
    help: str = "",
    flag: str = "",
    split: bool = True,
) -> Setting:
    """What ``register(key, type=..., default=..., help=..., flag=..., split=...)`` in ``register_settings``
    makes, checked. ``flag`` names the flag when ``--<plugin>-<key>`` does not fit (a lower-case name
    without ``--``); ``split=False`` keeps each occurrence of a list flag whole instead of splitting commas."""
    if not isinstance(key, str) or not SETTING_KEY_RE.match(key):
        raise RegistrationError(f"setting {plugin}.{key!r}: a key is lower-case letters, digits, - and _")
    if flag and not (isinstance(flag, str) and KEBAB_RE.match(flag)):
        raise RegistrationError(f"setting {plugin}.{key}: flag {flag!r} is not lower-case kebab-case")
    setting = Setting(plugin, key, type, default, help, flag, bool(split))  # an unknown type: ValueError
    kind = SETTING_TYPES[type]
    fits = (
        default is None
        or (isinstance(default, kind) and not (kind in (int, float) and isinstance(default, bool)))
        or (kind is float and isinstance(default, int) and not isinstance(default, bool))
    )
    if not fits:
        raise RegistrationError(f"setting {plugin}.{key}: default {default!r} is not a {type}")
    return setting


def setting_registry(pm: pluggy.PluginManager) -> Registry[Setting]:
    """Every plugin's declared settings, keyed ``<plugin>.<key>``."""
    return collect(pm, "register_settings", Registry("setting", lambda s: f"{s.plugin}.{s.key}"), _setting)


class _AnalyzerRegistry(Registry[Analyzer]):
    def add(self, item: Analyzer, plugin: str, order: int | None = None) -> None:
        if isinstance(item, Analyzer) and item.each_page is None and item.each_url is None:
            raise RegistrationError(f"analyzer {item.name!r} has neither each_page nor each_url")
        super().add(item, plugin, order)


def analyzer_registry(pm: pluggy.PluginManager) -> Registry[Analyzer]:
    """Registered analyzers; one with neither ``each_page`` nor ``each_url`` makes its plugin unavailable."""
    return collect(
        pm, "register_analyzers", _AnalyzerRegistry("analyzer", name_re=KEBAB_RE, expected=Analyzer)
    )


def _takes_pm(func: Any) -> bool:
    try:
        parameter = inspect.signature(func).parameters.get("pm")
    except (TypeError, ValueError):  # a builtin or a callable inspect cannot read
        return False
    return parameter is not None and parameter.kind in (
        parameter.KEYWORD_ONLY,
        parameter.POSITIONAL_OR_KEYWORD,
    )


def query_registry(pm: pluggy.PluginManager) -> Registry[Query]:
    """Registered queries; a query function with a keyword parameter ``pm`` gets this plugin manager bound
    (queries that read another registry, such as ``issues`` reading the checks)."""

    def make(plugin: str, query: Any, order: int | None = None) -> Any:
        if isinstance(query, Query) and _takes_pm(query.func):
            query = dataclasses.replace(query, func=functools.partial(query.func, pm=pm))
        if order is not None and isinstance(query, Query):
            query = dataclasses.replace(query, order=order)
        return query

    return collect(pm, "register_queries", Registry("query", name_re=KEBAB_RE, expected=Query), make)


def sheet_registry(pm: pluggy.PluginManager) -> Registry[Sheet]:
    return collect(pm, "register_sheets", Registry("sheet", name_re=TITLE_RE, expected=Sheet))


def destination_registry(pm: pluggy.PluginManager) -> Registry[Destination]:
    return collect(
        pm, "register_report_destinations", Registry("destination", name_re=KEBAB_RE, expected=Destination)
    )


def section_registry(pm: pluggy.PluginManager) -> Registry[ReportSection]:
    """The sections of the HTML and PDF reports, by name, in their ``order``."""
    return collect(
        pm, "register_report_sections", Registry("report section", name_re=KEBAB_RE, expected=ReportSection)
    )


def blueprint_registry(pm: pluggy.PluginManager) -> Registry[tuple[Any, str | None]]:
    """Viewer blueprints as ``(blueprint, url_prefix)``, keyed by the blueprint's name."""

    def make(plugin: str, blueprint: Any, url_prefix: str | None = None) -> tuple[Any, str | None]:
        if not isinstance(getattr(blueprint, "name", None), str):
            raise RegistrationError(
                f"plugin {plugin!r} registered a blueprint that is a {type(blueprint).__name__}, "
                "not a flask.Blueprint"
            )
        return blueprint, url_prefix

    return collect(
        pm, "register_viewer_blueprints", Registry("blueprint", lambda item: item[0].name, NAME_RE), make
    )


class _CheckRegistry(Registry[Check]):
    def add(self, item: Check, plugin: str, order: int | None = None) -> None:
        validate_check(item, plugin)
        super().add(item, plugin, order)


def check_registry(pm: pluggy.PluginManager) -> Registry[Check]:
    """Registered checks keyed by id; an invalid priority, category or id makes its plugin unavailable.

    ``register_checks`` also gets the registered analyzers (``analyzers``), whose rule catalogues become
    checks; like ``collect``, one plugin at a time, a failing plugin's checks dropped.
    """
    registry = _CheckRegistry("check", lambda c: c.id, name_re=CHECK_ID_RE, expected=Check)
    analyzers = list(analyzer_registry(pm))

    def arguments(plugin: str) -> dict[str, Any]:
        def register(check: Any, order: int | None = None) -> None:
            registry.add(check, plugin, order)

        return {"register": register, "analyzers": analyzers}

    def settle(plugin: str, ok: bool) -> None:
        if not ok:
            registry.drop(plugin)

    call_each = getattr(pm, "call_each", None)
    if call_each is not None:
        call_each("register_checks", arguments, settle)
    else:  # a bare pluggy manager: one plain call, failures propagate
        pm.hook.register_checks(**arguments(""))
    return registry
