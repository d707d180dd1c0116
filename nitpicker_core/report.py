"""Reports: collect the registered sheets, render their rows from one commit, hand them to a destination."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from nitpicker_core.errors import UsageError
from nitpicker_core.query import query_registry, run_query
from nitpicker_core.registry import TITLE_RE, Registry, collect
from nitpicker_core.types import Destination, Sheet

DEFAULT_BATCH = 2000  # rows (or outer entities) read per query call while a sheet streams


def sheet_registry(pm: Any) -> Registry[Sheet]:
    return collect(pm, "register_sheets", Registry("sheet", name_re=TITLE_RE))


def destination_registry(pm: Any) -> Registry[Destination]:
    return collect(pm, "register_report_destinations", Registry("destination"))


class ReportContext:
    """What a sheet with ``uses_report`` receives: registered queries over the report's commit, and options."""

    def __init__(self, pm: Any, reader: Any, commit: int, options: Mapping[str, Any] | None = None) -> None:
        self.reader = reader
        self.commit = commit
        self.options = dict(options or {})
        self.batch = int(self.options.get("batch") or DEFAULT_BATCH)
        self._pm = pm
        self._queries = query_registry(pm)

    def column_labels(self) -> dict[tuple[str, str], str]:
        """(analyzer, column key) → the column's label, for the analyzers installed now."""
        from nitpicker_core.registries import analyzer_registry

        try:
            analyzers = list(analyzer_registry(self._pm))
        except UsageError:
            return {}
        return {(a.name, c.key): c.label for a in analyzers for c in a.columns}

    def query(self, name: str, **params: Any) -> Any:
        """Run one registered query (parameters validated by its schema) on the report's commit."""
        return run_query(self._queries, self.reader, name, params, self.commit)

    def stream(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated query, one call per batch, so memory holds one batch at a time.

        Keyset queries answer ``next_after`` (passed back as ``after``); the others ``next_offset``.
        """
        schema = self._queries[name].params
        limit = min(self.batch, int(schema.get("limit", {}).get("maximum", self.batch)))
        params = {**params, "limit": limit}
        while True:
            page = self.query(name, **params)
            yield from page["items"]
            if page.get("next_after") is not None:
                params["after"] = page["next_after"]
            elif page.get("next_offset") is not None:
                params["offset"] = page["next_offset"]
            else:
                return


def render_sheets(sheets: Iterable[Sheet], reader: Any, commit: int,
                  report: ReportContext | None = None) -> Iterable[tuple[Sheet, Iterable[list[Any]]]]:
    """Each sheet (with its final columns) and a lazy iterator of its rows, so large sheets stream."""
    for sheet in sheets:
        if sheet.extra_columns is not None:
            sheet = dataclasses.replace(sheet, columns=(*sheet.columns, *sheet.extra_columns(reader, commit, report)))
        source = sheet.rows(reader, commit, report) if sheet.uses_report else sheet.rows(reader, commit)
        yield sheet, (list(row) for row in source)


def select_sheets(pm: Any, names: Iterable[str] | None) -> list[Sheet]:
    """The sheets to render: the named ones (case-insensitive) in registry order, or all of them."""
    registry = sheet_registry(pm)
    if not len(registry):
        raise UsageError("no report sheet is registered (see `nitpicker plugins`)")
    wanted = list(names or [])
    if not wanted:
        return list(registry)
    by_key = {s.name.casefold(): s for s in registry}
    unknown = [n for n in wanted if n.casefold() not in by_key]
    if unknown:
        raise UsageError(f"unknown sheet {unknown[0]!r} (sheets: {', '.join(s.name for s in registry)})")
    keys = {n.casefold() for n in wanted}
    return [s for s in registry if s.name.casefold() in keys]


def run_report(pm: Any, reader: Any, destination: str, options: dict[str, Any],
               sheets: list[str] | None = None, commit: Any = None) -> Any:
    """Render the selected sheets (default: all) of ``commit`` and write them to ``destination``.

    ``options`` goes to the destination and to the sheets (``dedupe_resources``, ``batch``).
    """
    chosen = select_sheets(pm, sheets)
    targets = destination_registry(pm)
    if destination not in targets:
        raise UsageError(f"unknown report destination {destination!r} (destinations: {', '.join(targets.names())})")
    target = targets[destination]
    resolved = reader.resolve(commit)
    report = ReportContext(pm, reader, resolved, options)
    return target.write(render_sheets(chosen, reader, resolved, report), options)


def destination_from_flags(sheet: str | None = None, xlsx: str | None = None, csv: str | None = None,
                           credentials: str | None = None, **extra: Any) -> tuple[str, dict[str, Any]]:
    """``--sheet URL`` / ``--xlsx FILE`` / ``--csv DIR`` (exactly one) → (destination name, options).

    ``extra`` (``dedupe_resources``, ``batch``) is copied into the options; ``None`` values are dropped.
    """
    given = [(flag, value) for flag, value in (("--sheet", sheet), ("--xlsx", xlsx), ("--csv", csv)) if value]
    if not given:
        raise UsageError("give a destination: --sheet URL, --xlsx FILE or --csv DIR")
    if len(given) > 1:
        raise UsageError(f"give one destination, not {' and '.join(flag for flag, _ in given)}")
    options = {k: v for k, v in extra.items() if v is not None}
    if sheet:
        if not re.search(r"/spreadsheets/d/[a-zA-Z0-9-_]+", sheet):
            raise UsageError("--sheet must be a Google Sheets URL (https://docs.google.com/spreadsheets/d/ID/…)")
        options.update(sheet_url=sheet, credentials=credentials or "credentials.json")
        return "google-sheets", options
    if xlsx:
        options["path"] = xlsx
        return "xlsx", options
    options["output_dir"] = csv
    return "csv", options
