"""Every table view's whole filtered result as CSV or JSON, streamed chunk by chunk (never one page, never all in memory)."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from flask import Response, stream_with_context

from nitpicker_viewer.app import query_once, viewer_state
from nitpicker_viewer.i18n import translate

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
CHUNK = 5000  # rows per query call; a query whose `limit` allows fewer gets its own maximum
# A spreadsheet runs a cell starting with one of these as a formula: crawled text must never do that.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")

Shape = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def _chunk_size(name: str) -> int:
    limit = viewer_state()["queries"][name].params.get("limit") or {}
    return min(CHUNK, int(limit.get("maximum", CHUNK)))


def _rows(
    name: str, given: Mapping[str, Any], shape: Shape | None, meta: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """Every row of query ``name`` with ``given``, a chunk at a time; ``meta["total"]`` is set by the first."""
    size, offset = _chunk_size(name), 0
    while True:
        data = query_once(name, **given, limit=size, offset=offset)
        meta.setdefault("total", data.get("total"))
        items = data.get("items") or []
        yield from (shape(items) if shape else items)
        offset += len(items)
        total = data.get("total")
        if len(items) < size or (total is not None and offset >= total):
            return


def cell_text(value: Any) -> str:
    """One CSV cell: lists one item a line, structures as JSON, text that a spreadsheet would run made inert."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        text = "\n".join(str(item) for item in value)
    elif isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return "'" + text if isinstance(value, str) and text.startswith(_FORMULA) else text


def _csv(rows: Iterator[dict[str, Any]], columns: Sequence[Any]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow([translate(col.label) for col in columns])
    for n, row in enumerate(rows, 1):
        writer.writerow([cell_text(row.get(col.key)) for col in columns])
        if n % 500 == 0:
            yield flush()
    yield flush()


def _json(
    rows: Iterator[dict[str, Any]], name: str, given: Mapping[str, Any], meta: dict[str, Any]
) -> Iterator[str]:
    head = {"query": name, "params": dict(given), "total": meta.get("total")}
    yield json.dumps(head, ensure_ascii=False)[:-1] + ', "items": ['
    for n, row in enumerate(rows):
        yield ("\n" if n == 0 else ",\n") + json.dumps(row, ensure_ascii=False, default=str)
    yield "\n]}\n"


def export_response(
    fmt: str,
    table_id: str,
    name: str,
    columns: Sequence[Any],
    given: Mapping[str, Any],
    shape: Shape | None = None,
) -> Response:
    """The streamed download of query ``name``'s rows: CSV with the view's columns, or JSON with every field."""
    meta: dict[str, Any] = {}
    rows = _rows(name, given, shape, meta)
    # the first call runs before the response starts: a bad filter is the usual 400 page, not a cut-off file
    first = next(rows, None)
    rows = itertools.chain([first] if first is not None else [], rows)
    body = _csv(rows, columns) if fmt == "csv" else _json(rows, name, given, meta)
    response = Response(stream_with_context(body), content_type=FORMATS[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{table_id}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response
