"""Write the generated sections of docs/reference/checks.md and queries.md from the registries.

Run from the repository root after adding or changing a check or a query::

    .venv/bin/python docs/reference/make_reference.py

Each page keeps its hand-written text; only the part between the two markers is written here: the checks
catalogue (every built-in check: id, priority, type, category, title) and the queries catalogue (every
built-in query: description and parameters, as `nitpicker query --list` gives them).
``tests/test_docs_in_step.py`` fails when a page and its registry differ.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
BUILTIN_CHECKS = ("checks", "analyzer-checks")  # the plugins that register the built-in checks
BUILTIN_QUERIES = ("core-queries", "sheets")  # and the built-in queries


def begin(name: str) -> str:
    return (
        f"<!-- {name}: written by docs/reference/make_reference.py from the registry; do not edit by hand -->"
    )


def end(name: str) -> str:
    return f"<!-- end of {name} -->"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _plugin_manager() -> Any:
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager()


def _line(check: Any) -> str:
    """What gives a crawl check's findings their line:col in `issue-urls` (docs/guide/issues.md)."""
    if check.link_target:
        return "anchor"
    return "element" if check.element is not None else "—"


def checks_catalogue() -> str:
    """One table per source (the crawl, then each analyzer by name), checks by id."""
    from nitpicker_core.registries import check_registry

    registry = check_registry(_plugin_manager())
    checks = [registry[name] for name in registry.names() if registry.plugin_of(name) in BUILTIN_CHECKS]
    parts = [begin("checks")]
    for source in sorted({check.analyzer for check in checks}):
        group = sorted((c for c in checks if c.analyzer == source), key=lambda c: c.id)
        parts.append(f"### {source or 'crawl'} ({len(group)})")
        if source:
            rows = ["| check | priority | type | category | title |", "| --- | --- | --- | --- | --- |"]
            rows += [
                f"| `{c.id}` | {c.priority} | {c.type} | {c.category} | {_cell(c.title)} |" for c in group
            ]
        else:  # where issue-urls puts a crawl finding: an anchor's line:col, an element's, or none
            rows = [
                "| check | priority | type | category | line | title |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            rows += [
                f"| `{c.id}` | {c.priority} | {c.type} | {c.category} | {_line(c)} | {_cell(c.title)} |"
                for c in group
            ]
        parts.append("\n".join(rows))
    parts.append(end("checks"))
    return "\n\n".join(parts)


def _schema(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "")
    if kind == "array":
        kind = f"array of {spec.get('items', {}).get('type', 'values')}"
    if "enum" in spec:
        kind += ": " + ", ".join(f"`{value}`" for value in spec["enum"])
    bounds = [f"{word} {spec[key]}" for key, word in (("minimum", "≥"), ("maximum", "≤")) if key in spec]
    return _cell(", ".join([kind, *bounds]))


def queries_catalogue() -> str:
    """An index, then one section per query in registry order: description, then a table of parameters."""
    from nitpicker_core.registries import query_registry

    registry = query_registry(_plugin_manager())
    names = [name for name in registry.names() if registry.plugin_of(name) in BUILTIN_QUERIES]
    parts = [begin("queries"), " · ".join(f"[`{name}`](#{name})" for name in names)]
    for name in names:
        query = registry[name]
        plugin = registry.plugin_of(name)
        source = "" if plugin == "core-queries" else f" *(from the `{plugin}` plugin)*"
        parts.append(f"### {name}")
        parts.append(" ".join(query.description.split()) + source)
        if query.params:
            rows = ["| parameter | type | default | what it does |", "| --- | --- | --- | --- |"]
            for key in sorted(query.params):
                spec = query.params[key]
                label = f"**`{key}`**" if key in query.required else f"`{key}`"
                default = f"`{json.dumps(spec['default'], ensure_ascii=False)}`" if "default" in spec else ""
                rows.append(
                    f"| {label} | {_schema(spec)} | {default} | {_cell(spec.get('description', ''))} |"
                )
            parts.append("\n".join(rows))
    parts.append(end("queries"))
    return "\n\n".join(parts)


PAGES: dict[str, tuple[Path, Callable[[], str]]] = {
    "checks": (HERE / "checks.md", checks_catalogue),
    "queries": (HERE / "queries.md", queries_catalogue),
}


def current(name: str, text: str) -> str:
    """The generated section as the page holds it now ("" when the page has none)."""
    if begin(name) not in text or end(name) not in text:
        return ""
    return text[text.index(begin(name)) : text.index(end(name)) + len(end(name))]


def main() -> int:
    for name, (page, build) in PAGES.items():
        text = page.read_text()
        fresh, old = build(), current(name, text)
        page.write_text(text.replace(old, fresh) if old else text.rstrip("\n") + "\n\n" + fresh + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
