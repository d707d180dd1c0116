"""The plugin manager: tolerant entry-point loading, allow/deny lists, per-plugin configure, status."""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pluggy

from nitpicker_core import hookspecs
from nitpicker_core.errors import NotConfigured, UsageError
from nitpicker_core.essential import check_disabling

log = logging.getLogger(__name__)
GROUP = "nitpicker"
LOAD_ENV = "NITPICKER_LOAD_PLUGINS"
DISABLE_ENV = "NITPICKER_DISABLE_PLUGINS"
BUILTIN_DISTRIBUTION = "nitpicker"  # entry points of this distribution are the built-in plugins
UNKNOWN = "unknown: not installed"


@dataclass
class PluginInfo:
    """What ``nitpicker plugins`` prints for one plugin."""

    name: str
    module: str
    distribution: str = ""
    version: str = ""
    status: str = "enabled"
    hooks: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "module": self.module, "distribution": self.distribution,
                "version": self.version, "hooks": self.hooks, "status": self.status}


def _names_from_env(var: str) -> set[str] | None:
    """The names listed in ``var``; unset, empty or only commas and spaces all mean "not set"."""
    names = {part.strip() for part in os.environ.get(var, "").split(",") if part.strip()}
    return names or None


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Interrupts:
    """Notes whether SIGINT or SIGTERM arrived while plugin code ran.

    A plugin may raise ``KeyboardInterrupt`` itself (contained like any other failure); one that comes
    from the user's Ctrl-C (or SIGTERM, which the CLI maps to it) must still stop the program, even when
    the plugin's code swallowed it.
    """

    def __init__(self) -> None:
        self.arrived = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous = signal.getsignal(sig)
                if callable(previous):
                    self._saved[sig] = previous
                    signal.signal(sig, self._noting(previous))
        return self

    def _noting(self, previous: Callable[[int, FrameType | None], Any]) -> Callable[[int, FrameType | None], Any]:
        def handler(signum: int, frame: FrameType | None) -> Any:
            self.arrived = True
            return previous(signum, frame)

        return handler

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        for sig, previous in self._saved.items():
            signal.signal(sig, previous)
        if self.arrived and exc_type is None:
            raise KeyboardInterrupt


class NitpickerPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers every plugin it saw, including the ones it could not use."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        self.shadowed: list[PluginInfo] = []  # entry points whose name another distribution owns
        self.warnings: list[str] = []  # for the CLI to print, one line each
        self.configured = False
        self._config: Any = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin; once configured, a late plugin gets ``configure`` too (the hook is historic)."""
        registered = super().register(plugin, name=name)
        if registered is not None and self.configured:
            self._configure_one(registered, self._config)
        return registered

    # -- running plugin code ---------------------------------------------------------------------
    def run_plugin_code(self, name: str, func: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Run ``func`` (plugin ``name``'s loading, configure or register code) so it cannot take us down.

        ``print`` goes to stderr, never into JSON output or the MCP stream. Any exception, BaseException
        included, makes the plugin unavailable with the reason and returns False; a Ctrl-C from the user
        still propagates.
        """
        with _Interrupts() as interrupts, contextlib.redirect_stdout(sys.stderr):
            try:
                func(*args, **kwargs)
                return True
            except NotConfigured as exc:
                self.decline(name, str(exc) or "not configured")
            except BaseException as exc:  # noqa: B036 - a plugin's SystemExit or GeneratorExit is its failure
                if interrupts.arrived:
                    raise
                self.decline(name, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
                log.debug("plugin %s failed", name, exc_info=True)
        return False

    def is_builtin(self, name: str) -> bool:
        info = self.infos.get(name)
        return info is not None and _normalised(info.distribution) == BUILTIN_DISTRIBUTION

    # -- loading ---------------------------------------------------------------------------------
    def load_entrypoints(self, allow: set[str] | None = None, deny: set[str] | None = None) -> None:
        """Load every ``nitpicker`` entry point; a plugin that fails to import is recorded, not fatal.

        Built-ins own their names: a third party's entry point of the same name is listed as unavailable.
        Between third parties the distribution first by name wins, whatever order they are found in.
        """
        allow = _names_from_env(LOAD_ENV) if allow is None else allow
        deny = (_names_from_env(DISABLE_ENV) or set()) if deny is None else deny
        check_disabling(deny, DISABLE_ENV)  # an essential built-in off would leave half-done work
        found = [(dist, ep) for dist in md.distributions() for ep in dist.entry_points if ep.group == GROUP]
        found.sort(key=lambda pair: (_normalised(pair[0].metadata["Name"] or "") != BUILTIN_DISTRIBUTION,
                                     _normalised(pair[0].metadata["Name"] or "")))
        owners: dict[str, str] = {}
        for dist, ep in found:
            dist_name = dist.metadata["Name"] or ""
            info = PluginInfo(ep.name, ep.value, dist_name, dist.version or "")
            if ep.name in owners:
                owner = owners[ep.name]
                if _normalised(owner) != _normalised(dist_name):  # the same distribution twice on sys.path: first wins
                    builtin = _normalised(owner) == BUILTIN_DISTRIBUTION
                    info.status = (f"unavailable: name taken by nitpicker's built-in {ep.name}" if builtin
                                   else f"unavailable: name taken by {owner}'s {ep.name}")
                    self.shadowed.append(info)
                continue
            owners[ep.name] = dist_name
            self.infos[ep.name] = info
            if allow is not None and ep.name not in allow:
                info.status = f"disabled: not in {LOAD_ENV}"
            elif ep.name in deny:
                info.status = f"disabled: listed in {DISABLE_ENV}"
            else:
                self.run_plugin_code(ep.name, lambda ep=ep: self.register(ep.load(), name=ep.name))
        for var, names in ((LOAD_ENV, allow), (DISABLE_ENV, deny)):
            unknown = sorted(set(names or ()) - set(owners))
            if unknown:
                self.warnings.append(f"{var} names plugins that are not installed: {', '.join(unknown)}")
        for name in sorted(set(allow or ()) - set(owners)):
            self.infos[name] = PluginInfo(name, "", status=UNKNOWN)

    def add_plugin(self, plugin: object, name: str, version: str = "") -> None:
        """Register a plugin object directly (tests, embedding) and record it like an entry point."""
        module = getattr(plugin, "__name__", type(plugin).__name__)
        self.infos[name] = PluginInfo(name, module, "", version)
        self.register(plugin, name=name)

    # -- configure -------------------------------------------------------------------------------
    def configure_plugins(self, config: Any) -> None:
        """Call each plugin's ``configure`` on its own; any failure there unregisters just that plugin."""
        self._config = config
        for impl in list(self.hook.configure.get_hookimpls()):
            self._configure_one(impl.plugin_name, config)
        self.configured = True

    def _configure_one(self, name: str, config: Any) -> None:
        for impl in self.hook.configure.get_hookimpls():
            if impl.plugin_name == name:
                self.run_plugin_code(name, self._configure_impl, name, impl.function, impl.argnames, config)

    @staticmethod
    def _configure_impl(name: str, function: Callable[..., Any], argnames: tuple[str, ...], config: Any) -> None:
        try:
            function(**{arg: config for arg in argnames})
        except UsageError as exc:
            # a malformed setting of this very plugin: the plugin stays, and the commands that use it
            # fail with the setting's one line when they read its settings (Config.settings_for)
            if getattr(exc, "plugin", None) != name:
                raise
            log.debug("plugin %s: configure skipped: %s", name, exc)

    def decline(self, name: str, reason: str) -> None:
        plugin = self.get_plugin(name)
        if plugin is not None:
            self.unregister(plugin)
        info = self.infos.setdefault(name, PluginInfo(name, name))
        info.status = f"unavailable: {reason}"

    def unconfigure_plugins(self, config: Any) -> None:
        if not self.configured:
            return
        self.configured = False
        for impl in list(self.hook.unconfigure.get_hookimpls()):
            with _Interrupts() as interrupts, contextlib.redirect_stdout(sys.stderr):
                try:
                    impl.function(**{arg: config for arg in impl.argnames})
                except BaseException:  # noqa: B036 - cleaning up after the command must not fail it
                    if interrupts.arrived:
                        raise
                    log.warning("plugin %s failed in unconfigure", impl.plugin_name, exc_info=True)

    # -- reporting -------------------------------------------------------------------------------
    def plugin_infos(self) -> list[PluginInfo]:
        for name, info in self.infos.items():
            plugin = self.get_plugin(name)
            if plugin is not None:
                info.hooks = sorted(c.name for c in self.get_hookcallers(plugin) or [])
            else:
                info.hooks = []
        return sorted([*self.infos.values(), *self.shadowed], key=lambda i: (i.name, i.distribution))

    def enabled_names(self) -> list[str]:
        return [name for name, info in self.infos.items() if info.status == "enabled"]

    def missing_commands(self) -> list[tuple[str, str]]:
        """(command, why) for each built-in-style command plugin ``cmd-<command>`` that is not enabled."""
        return [(name.removeprefix("cmd-"), f"plugin {name} is {info.status}") for name, info in sorted(self.infos.items())
                if name.startswith("cmd-") and info.status != "enabled"]

    def why_missing(self, command: str) -> str | None:
        """Why the command ``command`` may be missing: its plugin (``cmd-<command>`` or ``<command>``) is off."""
        for name in (f"cmd-{command}", command):
            info = self.infos.get(name)
            if info is not None and info.status != "enabled":
                return f"its plugin {name} is {info.status}"
        return None


def make_plugin_manager(load: bool = True, allow: set[str] | None = None,
                        deny: set[str] | None = None) -> NitpickerPluginManager:
    """A fresh manager with the hookspecs and, unless ``load`` is False, every allowed entry point."""
    pm = NitpickerPluginManager()
    if load:
        pm.load_entrypoints(allow=allow, deny=deny)
    if os.environ.get("NITPICKER_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda msg: log.warning("%s", msg.rstrip()))
        pm.enable_tracing()
    return pm
