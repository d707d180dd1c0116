"""The plugin manager: tolerant entry-point loading, allow/deny lists, per-plugin configure, status."""

from __future__ import annotations

import importlib.metadata as md
import logging
import os
from dataclasses import dataclass, field
from typing import Any

import pluggy

from nitpicker_core import hookspecs
from nitpicker_core.errors import NotConfigured

log = logging.getLogger(__name__)
GROUP = "nitpicker"
LOAD_ENV = "NITPICKER_LOAD_PLUGINS"
DISABLE_ENV = "NITPICKER_DISABLE_PLUGINS"


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
    value = os.environ.get(var)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


class NitpickerPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers every plugin it saw, including the ones it could not use."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        self.configured = False
        self._config: Any = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin; once configured, a late plugin gets ``configure`` too (the hook is historic)."""
        registered = super().register(plugin, name=name)
        if registered is not None and self.configured:
            self._configure_one(registered, self._config)
        return registered

    # -- loading ---------------------------------------------------------------------------------
    def load_entrypoints(self, allow: set[str] | None = None, deny: set[str] | None = None) -> None:
        """Load every ``nitpicker`` entry point; a plugin that fails to import is recorded, not fatal."""
        allow = _names_from_env(LOAD_ENV) if allow is None else allow
        deny = (_names_from_env(DISABLE_ENV) or set()) if deny is None else deny
        seen: set[str] = set()
        for dist in md.distributions():
            for ep in dist.entry_points:
                if ep.group != GROUP or ep.name in seen:
                    continue
                seen.add(ep.name)
                info = PluginInfo(ep.name, ep.value, dist.metadata["Name"] or "", dist.version or "")
                self.infos[ep.name] = info
                if allow is not None and ep.name not in allow:
                    info.status = f"disabled: not in {LOAD_ENV}"
                    continue
                if ep.name in deny:
                    info.status = f"disabled: listed in {DISABLE_ENV}"
                    continue
                try:
                    module = ep.load()
                    self.register(module, name=ep.name)
                except NotConfigured as exc:
                    info.status = f"unavailable: {exc}"
                except Exception as exc:  # a broken plugin must never stop the others from loading
                    info.status = f"unavailable: {type(exc).__name__}: {exc}"
                    log.debug("plugin %s failed to load", ep.name, exc_info=True)

    def add_plugin(self, plugin: object, name: str, version: str = "") -> None:
        """Register a plugin object directly (tests, embedding) and record it like an entry point."""
        module = getattr(plugin, "__name__", type(plugin).__name__)
        self.infos[name] = PluginInfo(name, module, "", version)
        self.register(plugin, name=name)

    # -- configure -------------------------------------------------------------------------------
    def configure_plugins(self, config: Any) -> None:
        """Call each plugin's ``configure`` on its own; ``NotConfigured`` unregisters just that plugin."""
        self._config = config
        for impl in list(self.hook.configure.get_hookimpls()):
            self._configure_one(impl.plugin_name, config)
        self.configured = True

    def _configure_one(self, name: str, config: Any) -> None:
        for impl in self.hook.configure.get_hookimpls():
            if impl.plugin_name != name:
                continue
            try:
                impl.function(**{arg: config for arg in impl.argnames})
            except NotConfigured as exc:
                self.decline(name, str(exc) or "not configured")

    def decline(self, name: str, reason: str) -> None:
        plugin = self.get_plugin(name)
        if plugin is not None:
            self.unregister(plugin)
        info = self.infos.setdefault(name, PluginInfo(name, name))
        info.status = f"unavailable: {reason}"

    def unconfigure_plugins(self, config: Any) -> None:
        if self.configured:
            self.hook.unconfigure(config=config)
            self.configured = False

    # -- reporting -------------------------------------------------------------------------------
    def plugin_infos(self) -> list[PluginInfo]:
        for name, info in self.infos.items():
            plugin = self.get_plugin(name)
            if plugin is not None:
                info.hooks = sorted(c.name for c in self.get_hookcallers(plugin) or [])
            else:
                info.hooks = []
        return sorted(self.infos.values(), key=lambda i: i.name)

    def enabled_names(self) -> list[str]:
        return [name for name, info in self.infos.items() if info.status == "enabled"]


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
