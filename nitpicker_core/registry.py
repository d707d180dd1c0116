"""The ``register`` callbacks handed to ``register_*`` hooks: validation, duplicates, attribution, order."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import pluggy

from nitpicker_core.errors import RegistrationError

if TYPE_CHECKING:
    from flask import Blueprint

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: names users type as identifiers (``--plugin axe``, ``query NAME``, ``--to NAME``): lower-case kebab-case
KEBAB_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TITLE_RE = re.compile(r"^\S(.*\S)?$")  # human titles such as sheet names ("Page List")


class Register(Protocol[T_contra]):
    """The ``register`` callback of ``register_analyzers``, ``register_checks``, ``register_queries``,
    ``register_sheets`` and ``register_report_destinations``: ``register(item)``, optionally with an
    ``order`` that overrides the item's own. ``Register[Analyzer]``, ``Register[Query]``…"""

    def __call__(self, item: T_contra, /, *, order: int | None = None) -> None: ...


class RegisterSetting(Protocol):
    """The ``register`` callback of ``register_settings``: one call per setting the plugin declares."""

    def __call__(
        self,
        key: str,
        type: str = "str",
        default: Any = None,
        help: str = "",
        flag: str = "",
        split: bool = True,
    ) -> None: ...


class RegisterBlueprint(Protocol):
    """The ``register`` callback of ``register_viewer_blueprints``: a Flask blueprint and where it mounts."""

    def __call__(self, blueprint: Blueprint, url_prefix: str | None = None) -> None: ...


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    item: T
    plugin: str
    order: int


class Registry(Generic[T]):
    """Collects named contributions of one kind from every plugin that implements a register hook.

    ``expected`` (a class) makes registering anything else an error of the registering plugin.
    """

    def __init__(
        self,
        kind: str,
        name_of: Callable[[T], str] = lambda item: item.name,  # type: ignore[attr-defined]
        name_re: re.Pattern[str] = NAME_RE,
        expected: type | None = None,
    ) -> None:
        self.kind = kind
        self._name_of = name_of
        self._name_re = name_re
        self._expected = expected
        self._entries: dict[str, Entry[T]] = {}

    def add(self, item: T, plugin: str, order: int | None = None) -> None:
        if self._expected is not None and not isinstance(item, self._expected):
            raise RegistrationError(
                f"plugin {plugin!r} registered a {self.kind} that is a {type(item).__name__}, "
                f"not a nitpicker_core.{self._expected.__name__}"
            )
        name = self._name_of(item)
        if not isinstance(name, str) or not self._name_re.match(name):
            rule = " (lower-case kebab-case)" if self._name_re is KEBAB_RE else ""
            raise RegistrationError(
                f"plugin {plugin!r} registered a {self.kind} with an invalid name {name!r}{rule}"
            )
        if name in self._entries:
            other = self._entries[name].plugin
            raise RegistrationError(f"{self.kind} {name!r} is registered twice (by {other!r} and {plugin!r})")
        if order is None:
            order = getattr(item, "order", 100)
        if isinstance(order, bool) or not isinstance(order, int):
            raise RegistrationError(
                f"plugin {plugin!r} registered {self.kind} {name!r} with an order that is "
                f"no whole number: {order!r}"
            )
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


def collect(
    pm: pluggy.PluginManager, hook_name: str, registry: Registry[Any], make: Callable[..., Any] | None = None
) -> Registry[Any]:
    """Call ``hook_name`` on each plugin separately, so every contribution is attributed to its plugin.

    ``make`` turns the arguments given to ``register`` into the item (default: the first argument).
    Each call goes through pluggy (``NitpickerPluginManager.call_each``), so tracing and other plugins'
    wrappers see it. A plugin whose hook fails (any exception, an invalid or duplicate name included) is
    unavailable with the reason and what it registered is dropped; the others' contributions stay.
    Built-ins go first, so a third party can never take a name a built-in registers.
    """

    def arguments(plugin: str) -> dict[str, Any]:
        def register(*args: Any, **kwargs: Any) -> None:
            order = kwargs.pop("order", None) if make is None else None
            item = make(plugin, *args, **kwargs) if make else args[0]
            registry.add(item, plugin, order)

        return {"register": register}

    def settle(plugin: str, ok: bool) -> None:
        if not ok:
            registry.drop(plugin)

    call_each = getattr(pm, "call_each", None)
    if call_each is not None:
        call_each(hook_name, arguments, settle)
    else:  # a bare pluggy manager: one plain call, failures propagate and nothing is attributed
        getattr(pm.hook, hook_name)(register=arguments("")["register"])
    return registry
