"""Custom search: ``--search-contains NAME=PATTERN`` / ``--search-missing NAME=PATTERN`` become checks.

Each named pattern (text or /regex/flags, parsed as the keyword counter parses keywords) is a check
``custom-search/NAME`` of the priority ``--search-priority NAME=PRIORITY`` gives (medium by default): a
``contains`` check finds the pages whose text has the pattern, a ``missing`` one the pages whose text lacks it,
in the page's ``scope`` or the selector ``--search-within NAME=SELECTOR`` names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .keywords import Keyword, parse_keyword

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # a check id's second part
PRIORITIES = ("critical", "high", "medium", "low", "info")
DEFAULT_PRIORITY = "medium"
RESERVED = frozenset({"other", "skipped", "timeout"})  # the checks this analyzer has anyway


@dataclass(frozen=True)
class Search:
    """One named search: the pattern, whether a page is at fault when it ``contains`` it or misses it."""

    name: str
    mode: str  # "contains" or "missing"
    keyword: Keyword
    priority: str = DEFAULT_PRIORITY
    within: str = ""  # a CSS selector, "" for the search analyzer's scope
    selector: Any = None


def _pairs(items: Any, what: str) -> list[tuple[str, str]]:
    out = []
    for item in items or ():
        name, sep, value = str(item).partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise ValueError(f"{what} {item!r}: expected NAME=VALUE")
        out.append((name, value.strip() if what != "pattern" else value))
    return out


def parse_searches(settings: Mapping[str, Any]) -> list[Search]:
    """The named searches of the settings, in order; a one-line ``ValueError`` naming the search otherwise."""
    from lxml.cssselect import CSSSelector, SelectorError

    found: dict[str, tuple[str, Keyword]] = {}
    for mode in ("contains", "missing"):
        for name, pattern in _pairs(settings.get(mode), f"search-{mode}"):
            if not NAME.match(name) or name in RESERVED:
                raise ValueError(f"search {name!r}: a name is lower-case letters, digits and single hyphens")
            if name in found:
                raise ValueError(f"search {name!r}: named twice")
            try:
                found[name] = (mode, parse_keyword(pattern))
            except ValueError as exc:
                raise ValueError(f"search {name!r}: {exc}") from None
    priorities = dict(_pairs(settings.get("priority"), "search-priority"))
    within = dict(_pairs(settings.get("within"), "search-within"))
    for option, names in (("priority", priorities), ("within", within)):
        unknown = sorted(set(names) - set(found))
        if unknown:
            raise ValueError(f"search {unknown[0]!r}: --search-{option} names no --search-contains/-missing")
    out = []
    for name, (mode, keyword) in found.items():
        priority = priorities.get(name, DEFAULT_PRIORITY).lower()
        if priority not in PRIORITIES:
            raise ValueError(f"search {name!r}: priority {priority!r} is not one of {', '.join(PRIORITIES)}")
        scope, selector = within.get(name, ""), None
        if scope:
            try:
                selector = CSSSelector(scope)
            except (SelectorError, ValueError, SyntaxError) as exc:
                raise ValueError(f"search {name!r}: invalid selector {scope!r}: {exc}") from None
        out.append(Search(name, mode, keyword, priority, scope, selector))
    return out
