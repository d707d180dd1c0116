"""Write the catalogue section of docs/reference/checks.md from the registered checks.

Run from the repository root: ``.venv/bin/python docs/reference/make_checks.py``. The catalogue is every
built-in check (the crawl checks and each analyzer's rules) as the check registry holds it: id, priority, type,
category and title. ``tests/test_docs_in_step.py`` fails when the page and the registry differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).with_name("checks.md")
BEGIN = "<!-- catalogue: written by docs/reference/make_checks.py from the check registry; do not edit by hand -->"
END = "<!-- end of catalogue -->"
BUILTIN = ("checks", "analyzer-checks")  # the plugins that register the built-in checks


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def catalogue() -> str:
    """The catalogue section: one table per source (the crawl, then each analyzer by name)."""
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.registries import check_registry

    registry = check_registry(make_plugin_manager())
    checks = [registry[name] for name in registry.names() if registry.plugin_of(name) in BUILTIN]
    sources = sorted({check.analyzer for check in checks})
    parts = [BEGIN]
    for source in sources:
        group = sorted((c for c in checks if c.analyzer == source), key=lambda c: c.id)
        parts.append(f"### {source or 'crawl'} ({len(group)})")
        rows = ["| check | priority | type | category | title |", "| --- | --- | --- | --- | --- |"]
        rows += [f"| `{c.id}` | {c.priority} | {c.type} | {c.category} | {_cell(c.title)} |" for c in group]
        parts.append("\n".join(rows))
    parts.append(END)
    return "\n\n".join(parts)


def current(text: str) -> str:
    """The catalogue section as the page holds it now ("" when the page has none)."""
    if BEGIN not in text or END not in text:
        return ""
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main() -> int:
    text = PAGE.read_text()
    fresh = catalogue()
    old = current(text)
    PAGE.write_text(text.replace(old, fresh) if old else text.rstrip("\n") + "\n\n" + fresh + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
