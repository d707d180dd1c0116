"""The query registry: one definition feeds `nitpicker query`, the MCP tools and the viewer's JSON API."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import UsageError
from nitpicker_core.registries import query_registry as query_registry  # re-exported
from nitpicker_core.registry import Registry
from nitpicker_core.types import Query

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


# SQLite stores integers in 64 signed bits; a bigger Python int overflows when it is bound to a statement.
SQL_INT_MIN, SQL_INT_MAX = -(2**63), 2**63 - 1
# The longest string parameter (a URL, a filter, a pattern): longer than any URL a server accepts, and its
# UTF-8 stays under SQLite's GLOB/LIKE pattern limit of 50,000 bytes.
MAX_TEXT = 8192
_SHOWN = 60  # characters of a bad value repeated in an error message


def shown(value: Any) -> str:
    """``repr(value)``, cut to a length an error message can carry on one line."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def check_text(name: str, value: str) -> str:
    """A string parameter a query can use: no NUL byte (C and SQLite APIs cut there), at most ``MAX_TEXT``."""
    if "\0" in value:
        raise UsageError(f"parameter {name!r} must not contain a NUL byte")
    if len(value) > MAX_TEXT:
        raise UsageError(f"parameter {name!r} is too long ({len(value)} characters; at most {MAX_TEXT})")
    return value


def check_glob(name: str, pattern: str) -> str:
    """A GLOB pattern whose every ``[`` set is closed (SQLite silently matches nothing otherwise)."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":  # a ] first in a set is a literal ]
                j += 1
            end = pattern.find("]", j)
            if end < 0:
                raise UsageError(
                    f"parameter {name!r}: the [ at character {i + 1} of the pattern is never closed "
                    "(write [[] for a literal [)"
                )
            i = end
        i += 1
    return pattern


def check_regex(name: str, pattern: str) -> str:
    """A Python regular expression that compiles."""
    import re
    import warnings

    try:
        with warnings.catch_warnings():  # "possible nested set" and the like are not the user's concern here
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UsageError(f"parameter {name!r} is not a valid regular expression: {exc}") from None
    return pattern


_FORMATS = {"glob": check_glob, "regex": check_regex}


def check_commit(value: Any) -> int | str | None:
    """``None``, ``"HEAD"`` or a commit id (a positive integer SQLite can hold); UsageError otherwise."""
    if value is None:
        return None
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        if text.upper() == "HEAD":
            return "HEAD"
        number = int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= SQL_INT_MAX:
        return number
    raise UsageError(
        f"parameter 'commit' must be a commit id (a positive integer) or \"HEAD\", got {shown(value)}"
    )


def _coerce(name: str, schema: Mapping[str, Any], value: Any) -> Any:
    kind = schema.get("type", "string")
    if isinstance(value, str) and kind != "string":
        text = value.strip()
        try:
            if kind == "integer":
                value = int(text)
            elif kind == "number":
                value = float(text)
            elif kind == "boolean":
                if text.lower() not in {"true", "false", "1", "0", "yes", "no"}:
                    raise ValueError(text)
                value = text.lower() in {"true", "1", "yes"}
            elif kind == "array":
                value = [part.strip() for part in text.split(",") if part.strip()]
        except ValueError:
            raise UsageError(f"parameter {name!r} must be {kind}, got {shown(value)}") from None
    expected = _JSON_TYPES.get(kind)
    if expected and (not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool))):
        raise UsageError(f"parameter {name!r} must be {kind}, got {shown(value)}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(map(str, schema["enum"]))
        raise UsageError(f"parameter {name!r} must be one of {choices}, got {shown(value)}")
    if "minimum" in schema and value < schema["minimum"]:
        raise UsageError(f"parameter {name!r} must be at least {schema['minimum']}, got {shown(value)}")
    if "maximum" in schema and value > schema["maximum"]:
        raise UsageError(f"parameter {name!r} must be at most {schema['maximum']}, got {shown(value)}")
    _check_value(name, schema, kind, value)
    return value


def _check_value(name: str, schema: Mapping[str, Any], kind: str, value: Any) -> None:
    """What every query can rely on, whatever its schema says: SQLite-sized numbers and clean strings."""
    if kind == "integer" and not SQL_INT_MIN <= value <= SQL_INT_MAX:
        raise UsageError(f"parameter {name!r} is out of range (a 64-bit integer), got {shown(value)}")
    if kind == "number" and isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"parameter {name!r} must be a finite number, got {shown(value)}")
    if kind == "number" and isinstance(value, int) and not SQL_INT_MIN <= value <= SQL_INT_MAX:
        raise UsageError(f"parameter {name!r} is out of range, got {shown(value)}")
    texts = (
        [item for item in value if isinstance(item, str)]
        if kind == "array"
        else [value]
        if kind == "string"
        else []
    )
    for item in texts:
        check_text(name, item)
        if schema.get("format") in _FORMATS:
            _FORMATS[schema["format"]](name, item)


def validate_params(query: Query, given: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``given`` against the query's schema: unknown names, types, enums, required, defaults.

    Whatever the schema says, integers fit SQLite, numbers are finite, strings hold no NUL byte and at most
    ``MAX_TEXT`` characters, and a string with ``"format": "glob"`` or ``"regex"`` is a valid pattern.
    Every failure is a ``UsageError`` (one line: the CLI's error, the MCP's tool error, the viewer's 400).
    """
    unknown = sorted(set(given) - set(query.params))
    if unknown:
        known = ", ".join(sorted(query.params)) or "none"
        raise UsageError(f"query {query.name!r} has no parameter {unknown[0]!r} (parameters: {known})")
    params: dict[str, Any] = {}
    for name, schema in query.params.items():
        if name in given and given[name] is not None:
            params[name] = _coerce(name, schema, given[name])
        elif name in query.required:
            raise UsageError(f"query {query.name!r} needs parameter {name!r}")
        elif "default" in schema:
            params[name] = schema["default"]
    return params


def run_query(
    registry: Registry[Query], archive: ArchiveReader, name: str, given: Mapping[str, Any], commit: Any = None
) -> Any:
    """Validate the parameters and run one query against ``commit`` (HEAD by default) of ``archive``."""
    query = registry[name]
    params = validate_params(query, given)
    resolved = archive.resolve(check_commit(commit))
    return query.func(archive, resolved, **params)


def describe(registry: Registry[Query]) -> list[dict[str, Any]]:
    """Every query with its description and JSON Schema, in registry order (for `query --list`, MCP)."""
    return [
        {
            "name": q.name,
            "description": q.description,
            "schema": q.schema(),
            "plugin": registry.plugin_of(q.name),
        }
        for q in registry
    ]
