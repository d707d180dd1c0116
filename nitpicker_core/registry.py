"""The ``register`` callbacks handed to ``register_*`` hooks: validation, duplicates, attribution, order."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pluggy

from nitpicker_core.errors import RegistrationError

T = TypeVar("T")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
TITLE_RE = re.compile(r"^\S(.*\S)?$")  # human titles such as sheet names ("Page List")


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    item: T
    plugin: str
    order: int


class Registry(Generic[T]):
    """Collects named contributions of one kind from every plugin that implements a register hook."""

    def __init__(self, kind: str, name_of: Callable[[T], str] = lambda item: item.name,  # type: ignore[attr-defined]
                 name_re: re.Pattern[str] = NAME_RE) -> None:
        self.kind = kind
        self._name_of = name_of
        self._name_re = name_re
        self._entries: dict[str, Entry[T]] = {}

    def add(self, item: T, plugin: str, order: int | None = None) -> None:
        name = self._name_of(item)
        if not isinstance(name, str) or not self._name_re.match(name):
            raise RegistrationError(f"plugin {plugin!r} registered a {self.kind} with an invalid name {name!r}")
        if name in self._entries:
            other = self._entries[name].plugin
            raise RegistrationError(f"{self.kind} {name!r} is registered twice (by {other!r} and {plugin!r})")
        if order is None:
            order = getattr(item, "order", 100)
        self._entries[name] = Entry(name, item, plugin, order)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name].item
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistrationError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Entry[T]]:
        """Entries sorted by their explicit order, then name; never by registration order."""
        return sorted(self._entries.values(), key=lambda e: (e.order, e.name))

    def __iter__(self) -> Iterator[T]:
        return (e.item for e in self.entries())

    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def plugin_of(self, name: str) -> str:
        return self._entries[name].plugin

    def drop(self, plugin: str) -> None:
        """Forget everything ``plugin`` registered (it failed half-way and is unavailable)."""
        self._entries = {name: e for name, e in self._entries.items() if e.plugin != plugin}


def collect(pm: pluggy.PluginManager, hook_name: str, registry: Registry[Any],
            make: Callable[..., Any] | None = None) -> Registry[Any]:
    """Call ``hook_name`` on each plugin separately, so every contribution is attributed to its plugin.

    ``make`` turns the arguments given to ``register`` into the item (default: the first argument).
    A plugin whose hook fails (any exception, an invalid or duplicate name included) is unavailable with
    the reason and what it registered is dropped; the others' contributions stay. Built-ins go first, so
    a third party can never take a name a built-in registers.
    """
    caller = getattr(pm.hook, hook_name)
    impls = list(reversed(caller.get_hookimpls()))  # pluggy keeps LIFO; walk in registration order
    is_builtin = getattr(pm, "is_builtin", None)
    if is_builtin is not None:
        impls.sort(key=lambda impl: not is_builtin(impl.plugin_name))
    run = getattr(pm, "run_plugin_code", None)
    for impl in impls:
        plugin = impl.plugin_name

        def register(*args: Any, _plugin: str = plugin, **kwargs: Any) -> None:
            order = kwargs.pop("order", None) if make is None else None
            item = make(_plugin, *args, **kwargs) if make else args[0]
            registry.add(item, _plugin, order)

        call = functools.partial(impl.function, **{name: register for name in impl.argnames})
        if run is None:  # a bare pluggy manager: no one to tell, so failures propagate
            call()
        elif not run(plugin, call):
            registry.drop(plugin)
    return registry
