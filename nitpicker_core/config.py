"""Configuration: one file found by walking up from the working directory, plugin settings, CLI overrides."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nitpicker_core.errors import UsageError
from nitpicker_core.registry import Registry, collect
from nitpicker_core.types import SETTING_TYPES, Setting

CONFIG_FILES = ("nitpicker.toml", ".nitpickerrc.json", "pyproject.toml")
TOP_LEVEL_KEYS = frozenset({"plugins", "crawl"})
# The [crawl] table: crawl options a site's config file may fix; the CLI flag of the same name wins.
# key → smallest allowed value (both are whole numbers; "max-pages" is accepted for "max_pages").
CRAWL_KEYS: dict[str, int] = {"max_pages": 1, "max_depth": 0}


def find_config_file(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The first config file walking up from ``start`` (default: the working directory), parsed."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in CONFIG_FILES:
            path = directory / name
            if not path.is_file():
                continue
            data = _parse(path)
            if data is not None:
                return path, data
    return None


def _parse(path: Path) -> dict[str, Any] | None:
    try:
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
        else:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise UsageError(f"cannot read config file {path.name}: {exc}") from None
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("nitpicker")  # a pyproject without the table is not ours
    if not isinstance(data, dict):
        raise UsageError(f"config file {path.name} must hold a table/object at the top level")
    return data


def coerce(setting: Setting, value: Any) -> Any:
    """Convert a file or flag value to the setting's declared type, or raise a one-line UsageError."""
    kind = SETTING_TYPES[setting.type]
    if value is None or isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    if kind is list and isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if kind is bool and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
    elif kind in (int, float) and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            return kind(value)
        except ValueError:
            pass
    raise UsageError(f"{setting.config_key}: expected {setting.type}, got {value!r}")


@dataclass
class Config:
    """Resolved settings of every plugin plus where they came from.

    ``warnings`` lists unknown keys found in the file; the CLI prints them, one line each.
    """

    settings: Registry[Setting]
    values: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    crawl: dict[str, int] = field(default_factory=dict)  # the file's [crawl] table, checked (CRAWL_KEYS)

    def get(self, plugin: str, key: str) -> Any:
        return self.values.get(f"plugins.{plugin}.{key}", self.settings[f"{plugin}.{key}"].default)

    def settings_for(self, plugin: str) -> dict[str, Any]:
        """Every setting of ``plugin`` (declared ones with defaults filled in)."""
        return {s.key: self.get(plugin, s.key) for s in self.settings if s.plugin == plugin}

    def override(self, flags: Mapping[str, Any]) -> Config:
        """A copy with CLI flag values (keyed by ``Setting.dest``) applied; None means "not given"."""
        values = dict(self.values)
        for setting in self.settings:
            if flags.get(setting.dest) is not None:
                values[setting.config_key] = coerce(setting, flags[setting.dest])
        return Config(self.settings, values, self.path, list(self.warnings), dict(self.crawl))


def collect_settings(pm: Any) -> Registry[Setting]:
    def make(plugin: str, key: str, type: str = "str", default: Any = None, help: str = "") -> Setting:
        return Setting(plugin, key, type, default, help)

    return collect(pm, "register_settings", Registry("setting", lambda s: f"{s.plugin}.{s.key}"), make)


def load_config(pm: Any, start: Path | None = None, data: Mapping[str, Any] | None = None,
                path: Path | None = None) -> Config:
    """Collect declared settings and read the config file (or ``data``), reporting unknown keys."""
    settings = collect_settings(pm)
    if data is None:
        found = find_config_file(start)
        path, data = found if found else (None, {})
    config = Config(settings, {}, path)
    where = path.name if path else "config"
    known_plugins = set(getattr(pm, "infos", {})) | {s.plugin for s in settings}
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            config.warnings.append(f"{where}: unknown key {key!r}")
    config.crawl = _crawl_table(data.get("crawl", {}), where, config.warnings)
    plugins = data.get("plugins", {})
    if not isinstance(plugins, dict):
        raise UsageError(f"{where}: 'plugins' must be a table")
    for plugin, table in plugins.items():
        if plugin not in known_plugins:
            config.warnings.append(f"{where}: unknown plugin {plugin!r}")
            continue
        if not isinstance(table, dict):
            raise UsageError(f"{where}: plugins.{plugin} must be a table")
        for key, value in table.items():
            name = f"{plugin}.{key}"
            if name not in settings:
                config.warnings.append(f"{where}: unknown key 'plugins.{name}'")
                continue
            config.values[f"plugins.{name}"] = coerce(settings[name], value)
    return config


def _crawl_table(table: Any, where: str, warnings: list[str]) -> dict[str, int]:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: 'crawl' must be a table")
    values = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in CRAWL_KEYS:
            warnings.append(f"{where}: unknown key 'crawl.{key}'")
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < CRAWL_KEYS[name]:
            raise UsageError(f"{where}: crawl.{key} must be a whole number of at least {CRAWL_KEYS[name]}, "
                             f"got {value!r}")
        values[name] = value
    return values


def settings_of(settings: Iterable[Setting], plugins: Iterable[str]) -> list[Setting]:
    wanted = set(plugins)
    return [s for s in settings if s.plugin in wanted]
