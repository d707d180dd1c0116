"""The query registry: one definition feeds `nitpicker query`, the MCP tools and the viewer's JSON API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nitpicker_core.errors import UsageError
from nitpicker_core.registry import Registry, collect
from nitpicker_core.types import Query

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
}


def query_registry(pm: Any) -> Registry[Query]:
    return collect(pm, "register_queries", Registry("query"))


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
            raise UsageError(f"parameter {name!r} must be {kind}, got {value!r}") from None
    expected = _JSON_TYPES.get(kind)
    if expected and (not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool))):
        raise UsageError(f"parameter {name!r} must be {kind}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(map(str, schema["enum"]))
        raise UsageError(f"parameter {name!r} must be one of {choices}, got {value!r}")
    if "minimum" in schema and value < schema["minimum"]:
        raise UsageError(f"parameter {name!r} must be at least {schema['minimum']}, got {value!r}")
    if "maximum" in schema and value > schema["maximum"]:
        raise UsageError(f"parameter {name!r} must be at most {schema['maximum']}, got {value!r}")
    return value


def validate_params(query: Query, given: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``given`` against the query's schema: unknown names, types, enums, required, defaults."""
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


def run_query(registry: Registry[Query], archive: Any, name: str, given: Mapping[str, Any],
              commit: Any = None) -> Any:
    """Validate the parameters and run one query against ``commit`` (HEAD by default) of ``archive``."""
    query = registry[name]
    params = validate_params(query, given)
    resolved = archive.resolve(commit)
    return query.func(archive, resolved, **params)


def describe(registry: Registry[Query]) -> list[dict[str, Any]]:
    """Every query with its description and JSON Schema, in registry order (for `query --list`, MCP)."""
    return [{"name": q.name, "description": q.description, "schema": q.schema(),
             "plugin": registry.plugin_of(q.name)} for q in registry]
