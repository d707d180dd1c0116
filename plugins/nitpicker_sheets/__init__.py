"""The built-in report sheets (the Cover, then Issues) and the keyset queries they stream from."""

from __future__ import annotations

from typing import Any

from nitpicker_core import hookimpl

from . import cover, issues, pages, queries, relations, resources

SHEETS = (*cover.SHEETS, *issues.SHEETS, *pages.SHEETS, *relations.SHEETS, *resources.SHEETS)


@hookimpl
def register_sheets(register: Any) -> None:
    for sheet in SHEETS:
        register(sheet)


@hookimpl
def register_queries(register: Any) -> None:
    for query in queries.QUERIES:
        register(query)
