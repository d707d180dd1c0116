"""XLSX report destination: one workbook, one worksheet per sheet, written row by row (openpyxl write-only)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.cell.cell import Cell as OpenpyxlCell
from openpyxl.comments import Comment
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from nitpicker_core import (
    Cell,
    NitpickerError,
    Sheet,
    UsageError,
    check_file_destination,
)

MAX_ROWS = 1_048_576  # Excel's row limit: longer sheets continue in "Name (2)", "Name (3)", …
MAX_TEXT = 32_767
NOTE_LIMIT = (
    2_000  # openpyxl holds comments until the workbook is saved (~14 KB each while saving): cap per worksheet
)
NOTE_CHARS = 5_000
LINK_CHARS = 255  # HYPERLINK() takes at most 255 characters in Excel
ERROR_FILL = PatternFill(bgColor="E60000", fill_type="solid")
ERROR_FONT = Font(color="FFFFFF")
HEADER_FONT = Font(bold=True)
# Sheet.row_style → (background, text colour): critical and high red, medium orange, low yellow
ROW_COLOURS = {
    "critical": ("B00000", "FFFFFF"),
    "high": ("E60000", "FFFFFF"),
    "medium": ("F4B183", "000000"),
    "low": ("FFE699", "000000"),
}
ROW_STYLES = {
    name: (PatternFill(fgColor=fill, bgColor=fill, fill_type="solid"), Font(color=text))
    for name, (fill, text) in ROW_COLOURS.items()
}
NUMBER_FORMATS = {"percent": "0.0%"}  # Sheet.number_formats → Excel's number format codes
_OPERATORS = {
    "eq": "equal",
    "ne": "notEqual",
    "lt": "lessThan",
    "gt": "greaterThan",
    "lte": "lessThanOrEqual",
    "gte": "greaterThanOrEqual",
    "between": "between",
    "not_between": "notBetween",
}


def _title(name: str, part: int) -> str:
    base = re.sub(r"[\[\]:*?/\\]", "-", name)
    suffix = f" ({part})" if part > 1 else ""
    return base[: 31 - len(suffix)] + suffix


def _literal(value: Any) -> str:
    return str(value) if isinstance(value, int | float) else '"' + str(value).replace('"', '""') + '"'


def _rule(fmt: Mapping[str, Any], first: str) -> Any:
    when = fmt["when"]
    style = {"fill": ERROR_FILL, "font": ERROR_FONT}
    if when in _OPERATORS:
        return CellIsRule(operator=_OPERATORS[when], formula=[_literal(v) for v in fmt["values"]], **style)
    if when == "blank":
        return FormulaRule(formula=[f"LEN(TRIM({first}))=0"], **style)
    if when == "text":
        tests = [f"LEFT(LOWER({first}),{len(s)})={_literal(s.lower())}" for s in fmt.get("starts", ())]
        tests += [f"RIGHT(LOWER({first}),{len(s)})={_literal(s.lower())}" for s in fmt.get("ends", ())]
        tests += [f"ISNUMBER(SEARCH({_literal(s)},{first}))" for s in fmt.get("contains", ())]
        return FormulaRule(formula=[f"OR({','.join(tests)})"], **style)
    raise ValueError(f"unknown conditional format {when!r}")


class _Writer:
    """One worksheet (or one continuation of it) with header, widths, freeze and conditional formats."""

    def __init__(self, wb: Workbook, sheet: Sheet, part: int) -> None:
        self.ws = wb.create_sheet(_title(sheet.name, part))
        self.sheet = sheet
        self.rows = 0
        self.notes = 0
        self.links = {i for i, c in enumerate(sheet.columns) if c in sheet.links}
        self.number_formats = {
            i: NUMBER_FORMATS[sheet.number_formats[c]]
            for i, c in enumerate(sheet.columns)
            if c in sheet.number_formats
        }
        for i, column in enumerate(sheet.columns, 1):
            width = sheet.widths.get(column)
            self.ws.column_dimensions[get_column_letter(i)].width = (
                width or max(80, 8 * len(column) + 24)
            ) / 7
        rows, cols = sheet.freeze
        if rows or cols:
            self.ws.freeze_panes = f"{get_column_letter(cols + 1)}{rows + 1}"
        for fmt in sheet.formats:
            for column in fmt["columns"]:
                if column in sheet.columns:
                    letter = get_column_letter(sheet.columns.index(column) + 1)
                    self.ws.conditional_formatting.add(
                        f"{letter}2:{letter}{MAX_ROWS}", _rule(fmt, f"{letter}2")
                    )
        _print_setup(self.ws)
        header = []
        for column in sheet.columns:
            cell = WriteOnlyCell(self.ws, value=column)
            cell.font = HEADER_FONT
            header.append(cell)
        self.ws.append(header)

    def finish(self) -> None:
        """The autofilter over the header and every row written (Excel wants at least one row under it)."""
        last = get_column_letter(max(1, len(self.sheet.columns)))
        self.ws.auto_filter.ref = f"A1:{last}{max(2, self.rows + 1)}"

    def append(self, row: list[Any]) -> None:
        style = ROW_STYLES.get(self.sheet.row_style(row) or "") if self.sheet.row_style else None
        cells = []
        noted = False
        for i, value in enumerate(row):
            # openpyxl's write-only sheet writes a plain value into the cell object it was given last unless
            # that one has a style, note included: a note would reach every value to its right. So the
            # value after a noted cell gets a cell object of its own.
            cell = self._cell(i, value, own=noted)
            if style is not None:
                cell = self._styled(cell, style)
            if cell is not None:
                noted = getattr(cell, "comment", None) is not None
            cells.append(cell)
        self.ws.append(cells)
        self.rows += 1

    def _styled(self, cell: Any, style: tuple[PatternFill, Font]) -> Any:
        """The cell (a cell object made for a plain value) coloured as its row."""
        if not isinstance(cell, OpenpyxlCell):
            value = cell
            cell = WriteOnlyCell(self.ws)
            cell.value = value
            if isinstance(value, str):
                cell.data_type = "s"
        cell.fill, cell.font = style
        return cell

    def _cell(self, index: int, value: Any, own: bool = False) -> Any:
        note = ""
        if isinstance(value, Cell):
            value, note = value.value, value.note
        if isinstance(value, str):
            value = ILLEGAL_CHARACTERS_RE.sub("", value)[:MAX_TEXT]
        elif value is not None and not isinstance(value, bool | int | float):
            value = str(value)[:MAX_TEXT]
        plain = not note and index not in self.links and index not in self.number_formats
        if (value is None and not note) or (
            plain and not own and not (isinstance(value, str) and value.startswith("="))
        ):
            return value  # the common case: a plain value (or nothing), no cell object needed
        cell = WriteOnlyCell(self.ws)
        if index in self.number_formats:
            cell.number_format = self.number_formats[index]
        if index in self.links and isinstance(value, str) and value and len(value) <= LINK_CHARS:
            cell.value = f"=HYPERLINK({_literal(value)},{_literal(value)})"
        else:
            cell.value = value
            if isinstance(value, str):
                cell.data_type = "s"  # text that starts with "=" stays text, never a formula
        if note and self.notes < NOTE_LIMIT:
            text = ILLEGAL_CHARACTERS_RE.sub("", note)
            cell.comment = Comment(text[:NOTE_CHARS], "nitpicker", width=320, height=160)
            self.notes += 1
        return cell


def _print_setup(ws: Any) -> None:
    """Printable as a client prints it: landscape, as wide as one page (as many pages down as it takes),
    the header row on every page, gridlines."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.print_options.gridLines = True


def _fill(wb: Workbook, sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], silent: bool) -> dict[str, int]:
    written: dict[str, int] = {}
    for sheet, rows in sheets:
        part = 1
        writer = _Writer(wb, sheet, part)
        total = 0
        for row in rows:
            if writer.rows >= MAX_ROWS - 1:
                writer.finish()
                part += 1
                writer = _Writer(wb, sheet, part)
            writer.append(row)
            total += 1
        writer.finish()
        written[sheet.name] = total
        if not silent:
            print(f"xlsx: {sheet.name}: {total:,} rows", file=sys.stderr, flush=True)
    return written


def _save(wb: Workbook, path: Path, shown: str) -> None:
    partial = path.with_name(path.name + ".partial")
    try:
        wb.save(partial)
        os.replace(partial, path)
    except OSError as exc:  # the directory changed since the check (full disk, permissions taken away)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise NitpickerError(
            f"cannot write {shown}: {(exc.strerror or type(exc).__name__).lower()}"
        ) from None


def _discard(wb: Workbook) -> None:
    """End the XML stream of every unsaved worksheet: left open, each prints tracebacks when collected."""
    for ws in wb.worksheets:
        if not ws.closed:
            with contextlib.suppress(Exception):
                ws.close()


def write_xlsx(
    sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]
) -> dict[str, Any]:
    target = options.get("file") or options.get("path")  # path: the key before options were declared
    if not target:
        raise UsageError("the xlsx destination needs a file name (--xlsx-file FILE)")
    path = Path(target)
    if not path.parent.is_dir():
        raise UsageError(f"no such directory for {path.name}")
    check_file_destination(path, path.name)  # before any sheet is rendered
    wb = Workbook(write_only=True)
    try:
        written = _fill(wb, sheets, bool(options.get("silent")))
        _save(wb, path, path.name)
    except BaseException:
        _discard(wb)
        raise
    return {"destination": "xlsx", "file": path.name, "sheets": written}
