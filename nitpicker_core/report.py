"""Reports: collect the registered sheets, render their rows from one commit, hand them to a destination."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nitpicker_core.errors import UsageError
from nitpicker_core.registry import TITLE_RE, Registry, collect
from nitpicker_core.types import Destination, Sheet


def sheet_registry(pm: Any) -> Registry[Sheet]:
    return collect(pm, "register_sheets", Registry("sheet", name_re=TITLE_RE))


def destination_registry(pm: Any) -> Registry[Destination]:
    return collect(pm, "register_report_destinations", Registry("destination"))


def render_sheets(sheets: Iterable[Sheet], reader: Any, commit: int) -> Iterable[tuple[Sheet, Iterable[list[Any]]]]:
    """Each sheet with a lazy iterator of its rows (lists in column order), so large sheets stream."""
    for sheet in sheets:
        yield sheet, (list(row) for row in sheet.rows(reader, commit))


def run_report(pm: Any, reader: Any, destination: str, options: dict[str, Any],
               sheets: list[str] | None = None, commit: Any = None) -> Any:
    """Render the selected sheets (default: all) of ``commit`` and write them to ``destination``."""
    registry = sheet_registry(pm)
    chosen = [registry[name] for name in sheets] if sheets else list(registry)
    if not chosen:
        raise UsageError("no report sheet is registered (see `nitpicker plugins`)")
    target = destination_registry(pm)[destination]
    resolved = reader.resolve(commit)
    return target.write(render_sheets(chosen, reader, resolved), options)
