"""The plugin manager: tolerant entry-point loading, allow/deny lists, per-plugin configure, status."""

from __future__ import annotations

import contextlib
import difflib
import importlib.metadata as md
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

import pluggy

from nitpicker_core import hookspecs
from nitpicker_core.errors import NitpickerError, NotConfigured, UsageError
from nitpicker_core.essential import check_disabling

if TYPE_CHECKING:
    from nitpicker_core.config import Config

log = logging.getLogger(__name__)
GROUP = "nitpicker"
LOAD_ENV = "NITPICKER_LOAD_PLUGINS"
DISABLE_ENV = "NITPICKER_DISABLE_PLUGINS"
BUILTIN_DISTRIBUTION = "nitpicker"  # entry points of this distribution are the built-in plugins
UNKNOWN = "unknown: not installed"


class PluginRejected(NitpickerError):
    """A plugin the host refuses as it registers (a hook no spec knows, arguments a spec lacks)."""


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
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": self.hooks,
            "status": self.status,
        }


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
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                previous = signal.getsignal(sig)
                if callable(previous):
                    self._saved[sig] = previous
                    signal.signal(sig, self._noting(previous))
        return self

    def _noting(
        self, previous: Callable[[int, FrameType | None], Any]
    ) -> Callable[[int, FrameType | None], Any]:
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
        self._config: Config | None = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin, refusing one with a hook no spec knows; once the plugins are configured, a
        late plugin is configured too (``configure`` is historic)."""
        try:
            registered = super().register(plugin, name=name)
        except pluggy.PluginValidationError as exc:  # an argument the spec lacks: pluggy's message is 3 lines
            raise PluginRejected(_one_line_validation_error(exc)) from None
        if registered is None:
            return None
        unknown = self._unknown_hooks(plugin)
        if unknown:
            self.unregister(plugin)
            raise PluginRejected("; ".join(unknown))
        if self.configured:
            assert self._config is not None  # configure_plugins kept it
            self._configure_one(registered, self._config)
        return registered

    def _unknown_hooks(self, plugin: object) -> list[str]:
        """``unknown hook NAME (did you mean SPEC?)`` for each of ``plugin``'s hookimpls without a spec.

        pluggy's ``check_pending`` finds them (only functions marked ``@hookimpl``, so a plugin's own
        helpers named ``register_…`` are no hooks); checked after every registration, so whatever it
        finds belongs to ``plugin``. ``@hookimpl(optionalhook=True)`` is how a plugin says it knows.
        """
        try:
            self.check_pending()
        except pluggy.PluginValidationError:
            pass
        else:
            return []
        specs = [n for n, caller in vars(self.hook).items() if not n.startswith("_") and caller.has_spec()]
        found = []
        for caller in self.get_hookcallers(plugin) or []:
            if caller.has_spec() or all(i.optionalhook for i in caller.get_hookimpls() if i.plugin is plugin):
                continue
            close = difflib.get_close_matches(caller.name, specs, n=1)
            found.append(f"unknown hook {caller.name}" + (f" (did you mean {close[0]}?)" if close else ""))
        return sorted(found)

    # -- calling hooks one plugin at a time --------------------------------------------------------
    def call_one(self, hook_name: str, plugin_name: str, kwargs: Mapping[str, Any]) -> Any:
        """Call plugin ``plugin_name``'s ``hook_name`` alone, through pluggy: tracing sees the call and every
        wrapper of the hook wraps it. Exceptions propagate."""
        caller = getattr(self.hook, hook_name)
        chosen = [
            i for i in caller.get_hookimpls() if i.plugin_name == plugin_name or i.wrapper or i.hookwrapper
        ]
        if caller.is_historic():
            # HookCaller refuses a plain call of a historic hook, and call_historic on a subset caller
            # would add one history entry per plugin; the manager's _hookexec is the path every pluggy
            # call (historic ones included) takes, tracing included.
            return self._hookexec(hook_name, chosen, dict(kwargs), False)
        others = [i.plugin for i in caller.get_hookimpls() if i not in chosen]
        return self.subset_hook_caller(hook_name, others)(**kwargs)

    def call_each(
        self,
        hook_name: str,
        kwargs_for: Callable[[str], Mapping[str, Any]],
        settle: Callable[[str, bool], None] | None = None,
    ) -> list[str]:
        """Call ``hook_name`` once per plugin implementing it, each in ``run_plugin_code``; the names that failed.

        Built-ins first, then registration order (never pluggy's LIFO). ``kwargs_for(plugin)`` gives the
        call's arguments (per plugin, so a ``register`` callback knows who registered); ``settle(plugin, ok)``
        runs after each call. When another plugin's wrapper was what failed, that plugin is unavailable
        and this one is called again without it.
        """
        caller = getattr(self.hook, hook_name)
        names = [i.plugin_name for i in caller.get_hookimpls() if not (i.wrapper or i.hookwrapper)]
        names.sort(key=lambda name: not self.is_builtin(name))  # stable: registration order within each
        failed = []
        for name in names:
            for _attempt in range(2):
                if self.get_plugin(name) is None:  # declined meanwhile (its configure, another hook)
                    break
                ok = self.run_plugin_code(name, self.call_one, hook_name, name, kwargs_for(name))
                if settle is not None:
                    settle(name, ok)
                if ok or self.get_plugin(name) is None:
                    break
            if self.get_plugin(name) is None:
                failed.append(name)
        return failed

    def _culprit(self, tb: TracebackType | None, default: str) -> str:
        """The plugin whose hook function raised: the innermost frame that is a plugin's hookimpl.

        A wrapper of another plugin around ``default``'s call is blamed only when it raised itself. Code
        shared by several plugins (instances of one class) never moves the blame away from ``default``.
        """
        owners: dict[Any, set[str]] = {}
        for caller in list(vars(self.hook).values()):
            for impl in caller.get_hookimpls() if isinstance(caller, pluggy.HookCaller) else ():
                code = getattr(impl.function, "__code__", None)
                if code is not None:
                    owners.setdefault(code, set()).add(impl.plugin_name)
        culprit = default
        while tb is not None:
            names = owners.get(tb.tb_frame.f_code, set())
            if default in names:
                culprit = default
            elif len(names) == 1:
                culprit = next(iter(names))
            tb = tb.tb_next
        return culprit

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
            except (NotConfigured, PluginRejected) as exc:
                self.decline(self._culprit(exc.__traceback__, name), str(exc) or "not configured")
            except BaseException as exc:  # noqa: B036 - a plugin's SystemExit or GeneratorExit is its failure
                if interrupts.arrived:
                    raise
                culprit = self._culprit(exc.__traceback__, name)
                self.decline(culprit, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
                log.debug("plugin %s failed", culprit, exc_info=True)
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
        found: list[tuple[str, str, md.EntryPoint]] = []
        for dist in md.distributions():
            entry_points = [ep for ep in dist.entry_points if ep.group == GROUP]
            if entry_points:
                # read once: every `dist.metadata` parses METADATA again, which made up half of a CLI start
                meta = dist.metadata
                found.extend((meta["Name"] or "", meta["Version"] or "", ep) for ep in entry_points)
        found.sort(key=lambda t: (_normalised(t[0]) != BUILTIN_DISTRIBUTION, _normalised(t[0])))
        owners: dict[str, str] = {}
        for dist_name, dist_version, ep in found:
            info = PluginInfo(ep.name, ep.value, dist_name, dist_version)
            if ep.name in owners:
                owner = owners[ep.name]
                if _normalised(owner) != _normalised(
                    dist_name
                ):  # the same distribution twice on sys.path: first wins
                    builtin = _normalised(owner) == BUILTIN_DISTRIBUTION
                    info.status = (
                        f"unavailable: name taken by nitpicker's built-in {ep.name}"
                        if builtin
                        else f"unavailable: name taken by {owner}'s {ep.name}"
                    )
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
        """Register a plugin object directly (tests, embedding) and record it like an entry point.

        Raises ``PluginRejected`` (after recording the status) when the plugin cannot be registered, so a
        misspelled hook in a test's plugin fails the test; a plugin that declines in ``configure`` does not.
        """
        module = getattr(plugin, "__name__", type(plugin).__name__)
        self.infos[name] = PluginInfo(name, module, "", version)
        if not self.run_plugin_code(name, lambda: self.register(plugin, name=name)):
            raise PluginRejected(f"plugin {name} is {self.infos[name].status}")

    # -- configure -------------------------------------------------------------------------------
    @property
    def config(self) -> Config | None:
        """The configuration the plugins were configured with (``configure_plugins``); None before."""
        return self._config

    def configure_plugins(self, config: Config) -> None:
        """Configure every plugin, each on its own: a failure in one plugin's ``configure`` makes just it
        unavailable. Plugins are configured once per manager, by the host (the CLI's ``App``, an analyze
        worker's initializer); plugins registered later are configured as they register."""
        if self._config is not None:
            raise RuntimeError("plugins are configured once per plugin manager")
        self._config = config
        for name in [
            i.plugin_name for i in self.hook.configure.get_hookimpls() if not (i.wrapper or i.hookwrapper)
        ]:
            self._configure_one(name, config)
        self.configured = True

    def _configure_one(self, name: str, config: Config) -> None:
        if self.get_plugin(name) is not None and any(
            i.plugin_name == name for i in self.hook.configure.get_hookimpls()
        ):
            self.run_plugin_code(name, self._configure_impl, name, config)

    def _configure_impl(self, name: str, config: Config) -> None:
        try:
            self.call_one("configure", name, {"config": config})
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

    def unconfigure_plugins(self, config: Config) -> None:
        """Call each plugin's ``unconfigure`` on its own; a failure there is logged, never the command's."""
        if not self.configured:
            return
        self.configured = False
        for impl in list(self.hook.unconfigure.get_hookimpls()):
            if impl.wrapper or impl.hookwrapper:
                continue
            with _Interrupts() as interrupts, contextlib.redirect_stdout(sys.stderr):
                try:
                    self.call_one("unconfigure", impl.plugin_name, {"config": config})
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

    def distributions(self) -> dict[str, str]:
        """Every entry-point plugin, enabled or not, with its ``distribution version`` (the environment
        manifest's ``plugins``): what loading the entry points recorded, no installed METADATA read again."""
        found = {name: f"{i.distribution} {i.version}" for name, i in self.infos.items() if i.distribution}
        return dict(sorted(found.items()))

    def enabled_names(self) -> list[str]:
        return [name for name, info in self.infos.items() if info.status == "enabled"]

    def missing_commands(self) -> list[tuple[str, str]]:
        """(command, why) for each built-in-style command plugin ``cmd-<command>`` that is not enabled."""
        return [
            (name.removeprefix("cmd-"), f"plugin {name} is {info.status}")
            for name, info in sorted(self.infos.items())
            if name.startswith("cmd-") and info.status != "enabled"
        ]

    def why_missing(self, command: str) -> str | None:
        """Why the command ``command`` may be missing: its plugin (``cmd-<command>`` or ``<command>``) is off."""
        for name in (f"cmd-{command}", command):
            info = self.infos.get(name)
            if info is not None and info.status != "enabled":
                return f"its plugin {name} is {info.status}"
        return None


def make_plugin_manager(
    load: bool = True, allow: set[str] | None = None, deny: set[str] | None = None
) -> NitpickerPluginManager:
    """A fresh manager with the hookspecs and, unless ``load`` is False, every allowed entry point."""
    pm = NitpickerPluginManager()
    if os.environ.get("NITPICKER_TRACE_PLUGINS"):  # before loading, so every call is traced
        pm.trace.root.setwriter(lambda msg: log.warning("%s", msg.rstrip()))
        pm.enable_tracing()
    if load:
        pm.load_entrypoints(allow=allow, deny=deny)
    return pm


def _one_line_validation_error(exc: pluggy.PluginValidationError) -> str:
    """pluggy's three-line message about a hookimpl's arguments, as one line naming the hook."""
    text = str(exc)
    hook = re.search(r"for hook '([^']+)'", text)
    detail = text.splitlines()[-1] if text else type(exc).__name__
    return f"hook {hook.group(1)}: {detail}" if hook else " ".join(text.split())
