"""Filter pickers filled from the archive (analyzers, rules, content types, status codes) instead of free text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nitpicker_viewer.app import has_query, query
from nitpicker_viewer.tables import Filter

PICKER_VALUES = 1000  # values offered in one picker; the query says when there are more


def values(field: str) -> list[Any]:
    """The values the commit has for ``field`` (see the ``filter-values`` query), in order."""
    if not has_query("filter-values"):
        return []
    return [item["value"] for item in query("filter-values", field=field, limit=PICKER_VALUES)["items"]]


def options(field: str) -> Sequence[tuple[str, str]]:
    """``values(field)`` as select options after "any"."""
    return (("", "any"), *((str(value), str(value)) for value in values(field)))


def picker(name: str, label: str, field: str) -> Filter:
    """A select over ``field``'s values in the data, sent to the query as parameter ``name``."""
    return Filter(name, label, "select", options(field))
