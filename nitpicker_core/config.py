"""Configuration: one file found by walking up from the working directory, plugin settings, CLI overrides."""

from __future__ import annotations

import difflib
import json
import math
import reprlib
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import UsageError
from nitpicker_core.registries import setting_registry
from nitpicker_core.registry import Registry
from nitpicker_core.types import SETTING_TYPES, Setting

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager

CONFIG_FILES = ("nitpicker.toml", ".nitpickerrc.json", "pyproject.toml")
# Tables holding a command's options (file key = the long flag with "_" for "-"); the CLI says which keys
# each takes (``load_config(commands=…)``) and turns them into the command's defaults; a flag given wins.
COMMAND_TABLES = ("crawl", "analyze", "report", "pipeline")
TOP_LEVEL_KEYS = frozenset({"plugins", "diff", "login", *COMMAND_TABLES})
# The [login] table: a scripted login before the crawl (docs/guide/login.md). ``fields`` maps a field's name
# or CSS selector to its value, written as is or as "env:VAR" / "file:PATH" (read when the crawl starts).
LOGIN_KEYS = ("url", "fields", "submit", "success", "logout", "max_renewals")
# The [crawl] table: crawl options a site's config file may fix; the CLI flag of the same name wins.
# key → smallest allowed value (both are whole numbers; "max-pages" is accepted for "max_pages").
CRAWL_KEYS: dict[str, int] = {"max_pages": 1, "max_depth": 0}
# The [diff] table: how `diff --html` normalises rendered HTML before comparing it (archive/pagediff.py).
# ``normalize``: regular expressions whose matches (or their groups) count as noise; ``builtin_normalize``:
# whether the built-in patterns (nonces, CSRF tokens, cache-busting query strings, timestamps) apply too.
DIFF_DEFAULTS: dict[str, Any] = {"normalize": [], "builtin_normalize": True}
# int settings end up in SQLite, JSON and range(): anything a signed 64-bit integer cannot hold is refused
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
_short = reprlib.Repr()
_short.maxstring = _short.maxother = _short.maxlong = 60
_short.maxlevel = 3


class SettingsError(UsageError):
    """A setting that cannot be used, raised when a command reads the settings of ``plugin``."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin


def shown(value: Any) -> str:
    """A value as a short one-line repr for error messages (huge ints, deep nesting and long text cut)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        digits = str(abs(value)) if value.bit_length() < 10_000 else ""
        return ("-" if value < 0 else "") + (digits[:24] + "…" if digits else "a huge number")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return _short.repr(value)


def closest(name: str, choices: Collection[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to a misspelt ``name``, else ``""``."""
    found = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def find_config_file(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The first config file walking up from ``start`` (default: the working directory), parsed.

    Raises ``UsageError`` (one line, the file's name) for a file that cannot be read or is no table.
    """
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
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except RecursionError:  # both parsers recurse once per level of nesting
        raise UsageError(f"cannot read config file {path.name}: nested too deeply") from None
    except (ValueError, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"cannot read config file {path.name}: {reason}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise UsageError(f"{path.name}: tool must be a table")
        data = tool.get("nitpicker")
        if data is None:
            return None  # a pyproject without the table is not ours
        if not isinstance(data, dict):
            raise UsageError(f"{path.name}: tool.nitpicker must be a table")
    if not isinstance(data, dict):
        raise UsageError(f"config file {path.name} must hold a table/object at the top level")
    return data


def coerce(setting: Setting, value: Any) -> Any:
    """Convert a file or flag value to the setting's declared type, or raise a one-line UsageError."""
    kind = SETTING_TYPES[setting.type]
    if kind is list and not setting.split and isinstance(value, str):
        value = [value]  # one whole item: a selector or a regex holds commas
    converted = _convert(kind, value)
    if converted is _BAD:
        raise UsageError(f"{setting.config_key}: expected {setting.type}, got {shown(value)}")
    if kind is float and converted is not None and not math.isfinite(converted):
        raise UsageError(f"{setting.config_key}: expected float, got {shown(converted)}")
    if kind is int and converted is not None and not INT_MIN <= converted <= INT_MAX:
        raise UsageError(
            f"{setting.config_key}: expected int between -2**63 and 2**63-1, got {shown(converted)}"
        )
    if kind is list and converted is not None:
        for item in converted:
            if not isinstance(item, str):
                raise UsageError(f"{setting.config_key}: expected list of strings, got item {shown(item)}")
    return converted


_BAD = object()


def _convert(kind: type, value: Any) -> Any:
    if value is None or isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool)):
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return _BAD
    if kind is list and isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if kind is bool and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
    elif kind in (int, float) and isinstance(value, str):
        try:
            return kind(value.strip())
        except ValueError:  # also "inf" for an int and digits beyond Python's int-from-str limit
            pass
    return _BAD


@dataclass
class Config:
    """Resolved settings of every plugin plus where they came from.

    ``warnings`` lists unknown keys found in the file; the CLI prints them, one line each. ``errors``
    holds what is wrong, one line each: by plugin name, ``""`` for the whole file (unreadable, not a
    table) and ``"crawl"`` for the ``[crawl]`` table. Loading never fails on them: reading the settings
    of a plugin with an error (``get``, ``settings_for``, ``crawl``) raises ``SettingsError``, so only
    the commands that use that plugin fail.
    """

    settings: Registry[Setting]
    values: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    crawl_table: dict[str, int] = field(
        default_factory=dict
    )  # the file's [crawl] table, checked (CRAWL_KEYS)
    errors: dict[str, str] = field(default_factory=dict)
    diff_table: dict[str, Any] = field(default_factory=lambda: dict(DIFF_DEFAULTS))  # [diff], checked
    # the command tables as written (keys with "_"), unknown keys left out; the CLI checks the values
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    login_table: dict[str, Any] = field(default_factory=dict)  # the file's [login] table, checked

    @property
    def login(self) -> dict[str, Any]:
        """The file's ``[login]`` table (empty without one); ``SettingsError`` when it is malformed."""
        error = self.errors.get("") or self.errors.get("login")
        if error:
            raise SettingsError(error, "login")
        return self.login_table

    def error_of(self, plugin: str) -> str | None:
        """The one-line error that stops ``plugin``'s settings from being used, if any."""
        return self.errors.get("") or self.errors.get(f"plugins.{plugin}")

    def check(self, plugin: str) -> None:
        """Raise ``SettingsError`` when ``plugin``'s settings cannot be used."""
        error = self.error_of(plugin)
        if error:
            raise SettingsError(error, plugin)

    def get(self, plugin: str, key: str) -> Any:
        self.check(plugin)
        return self.values.get(f"plugins.{plugin}.{key}", self.settings[f"{plugin}.{key}"].default)

    def settings_for(self, plugin: str) -> dict[str, Any]:
        """Every setting of ``plugin`` (declared ones with defaults filled in); ``SettingsError`` if bad."""
        self.check(plugin)
        return {s.key: self.get(plugin, s.key) for s in self.settings if s.plugin == plugin}

    @property
    def crawl(self) -> dict[str, int]:
        """The file's ``[crawl]`` table; ``SettingsError`` when the file or the table is malformed."""
        error = self.errors.get("") or self.errors.get("crawl")
        if error:
            raise SettingsError(error, "crawl")
        return self.crawl_table

    @property
    def diff(self) -> dict[str, Any]:
        """The file's ``[diff]`` table with defaults filled in; ``SettingsError`` when it is malformed."""
        error = self.errors.get("") or self.errors.get("diff")
        if error:
            raise SettingsError(error, "diff")
        return self.diff_table

    def override(self, flags: Mapping[str, Any]) -> Config:
        """A copy with CLI flag values (keyed by ``Setting.dest``) applied; None means "not given".

        A malformed flag raises ``UsageError`` at once: the user gave it for this very run.
        """
        values = dict(self.values)
        for setting in self.settings:
            if flags.get(setting.dest) is not None:
                values[setting.config_key] = coerce(setting, flags[setting.dest])
        return Config(
            self.settings,
            values,
            self.path,
            list(self.warnings),
            dict(self.crawl_table),
            dict(self.errors),
            dict(self.diff_table),
            {name: dict(table) for name, table in self.tables.items()},
            dict(self.login_table),
        )


def load_config(
    pm: NitpickerPluginManager,
    start: Path | None = None,
    data: Mapping[str, Any] | None = None,
    path: Path | None = None,
    commands: Mapping[str, Collection[str]] | None = None,
) -> Config:
    """Collect declared settings and read the config file (or ``data``), reporting unknown keys.

    ``commands`` maps a command table to the keys it takes (without it only ``crawl``'s limits are
    known); unknown keys, tables and plugins are reported with the closest known name. Malformed values
    never raise here: they are recorded in ``Config.errors`` (see ``Config``).
    """
    settings = setting_registry(pm)
    config = Config(settings, {}, path)
    if data is None:
        try:
            found = find_config_file(start)
        except UsageError as exc:
            config.errors[""] = str(exc)
            return config
        config.path, data = found if found else (None, {})
    where = config.path.name if config.path else "config"
    known_plugins = set(getattr(pm, "infos", {})) | {s.plugin for s in settings}
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            config.warnings.append(f"{where}: unknown key {shown(key)}{closest(str(key), TOP_LEVEL_KEYS)}")
    known = {name: set(keys) for name, keys in (commands or {}).items()}
    known.setdefault("crawl", set()).update(CRAWL_KEYS)
    try:
        config.crawl_table = _crawl_table(data.get("crawl", {}), where, config.warnings, known["crawl"])
    except UsageError as exc:
        config.errors["crawl"] = str(exc)
    for name in COMMAND_TABLES:
        try:
            config.tables[name] = _command_table(
                name, data.get(name, {}), where, known.get(name, set()), config.warnings
            )
        except UsageError as exc:
            config.errors.setdefault(name, str(exc))
    try:
        config.login_table = _login_table(data.get("login", {}), where, config.warnings)
    except UsageError as exc:
        config.errors["login"] = str(exc)
    try:
        config.diff_table = _diff_table(data.get("diff", {}), where, config.warnings)
    except UsageError as exc:
        config.errors["diff"] = str(exc)
    plugins = data.get("plugins", {})
    if not isinstance(plugins, dict):
        config.errors[""] = f"{where}: 'plugins' must be a table"
        return config
    for plugin, table in plugins.items():
        if plugin not in known_plugins:
            config.warnings.append(f"{where}: unknown plugin {shown(plugin)}{closest(plugin, known_plugins)}")
            continue
        if not isinstance(table, dict):
            config.errors[f"plugins.{plugin}"] = f"{where}: plugins.{plugin} must be a table"
            continue
        for key, value in table.items():
            name = f"{plugin}.{key}"
            if name not in settings:
                keys = {s.key for s in settings if s.plugin == plugin}
                config.warnings.append(f"{where}: unknown key {shown('plugins.' + name)}{closest(key, keys)}")
                continue
            try:
                config.values[f"plugins.{name}"] = coerce(settings[name], value)
            except UsageError as exc:  # the first bad key of a plugin is the one reported
                config.errors.setdefault(f"plugins.{plugin}", f"{where}: {exc}")
    return config


def _command_table(
    name: str, table: Any, where: str, known: Collection[str], warnings: list[str]
) -> dict[str, Any]:
    """A command table's known keys (``-`` read as ``_``), the others reported (``crawl``'s by ``_crawl_table``)."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: {name!r} must be a table")
    values = {}
    for key, value in table.items():
        key_ = key.replace("-", "_")
        if key_ in known:
            values[key_] = value
        elif name != "crawl":
            warnings.append(f"{where}: unknown key {shown(name + '.' + key)}{closest(key_, known)}")
    return values


def _crawl_table(table: Any, where: str, warnings: list[str], known: Collection[str] = ()) -> dict[str, int]:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: 'crawl' must be a table")
    values = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in CRAWL_KEYS:
            if name not in known:
                warnings.append(f"{where}: unknown key {shown('crawl.' + key)}{closest(name, known)}")
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not CRAWL_KEYS[name] <= value <= INT_MAX:
            raise UsageError(
                f"{where}: crawl.{key} must be a whole number of at least {CRAWL_KEYS[name]}, "
                f"got {shown(value)}"
            )
        values[name] = value
    return values


def _login_table(table: Any, where: str, warnings: list[str]) -> dict[str, Any]:
    """The [login] table, its types checked; a value is never quoted (a field value may be a password)."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: 'login' must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in LOGIN_KEYS:
            warnings.append(f"{where}: unknown key {shown('login.' + key)}{closest(key, LOGIN_KEYS)}")
            continue
        if key == "fields":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                raise UsageError(
                    f'{where}: login.fields must be a table of strings (name = "value" or "env:VAR")'
                )
        elif key == "logout":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise UsageError(f"{where}: login.logout must be a list of regular expressions")
            for item in value:
                _check_pattern(f"{where}: login.logout", item)
        elif key == "max_renewals":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
                raise UsageError(f"{where}: login.max_renewals must be a whole number from 0 to 1000")
        elif not isinstance(value, str):
            raise UsageError(f"{where}: login.{key} must be a string")
        values[key] = value
    if values and "url" not in values and values.get("fields"):
        raise UsageError(f"{where}: login.fields needs login.url (the page holding the form)")
    return values


def _diff_table(table: Any, where: str, warnings: list[str]) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: 'diff' must be a table")
    values = dict(DIFF_DEFAULTS)
    for key, value in table.items():
        if key not in DIFF_DEFAULTS:
            warnings.append(f"{where}: unknown key {shown('diff.' + key)}")
        elif key == "builtin_normalize" and not isinstance(value, bool):
            raise UsageError(f"{where}: diff.builtin_normalize must be true or false, got {shown(value)}")
        elif key == "normalize":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise UsageError(f"{where}: diff.normalize must be a list of regular expressions")
            for item in value:
                _check_pattern(f"{where}: diff.normalize", item)
        values[key] = value
    return values


def _check_pattern(where: str, pattern: str) -> None:
    import re

    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UsageError(f"{where}: {shown(pattern)} is not a valid regular expression: {exc}") from None


def config_of(pm: Any) -> Config:
    """The configuration ``pm``'s plugins run with: the one they were configured with, else every default."""
    config = getattr(pm, "config", None)
    return config if isinstance(config, Config) else Config(setting_registry(pm))
