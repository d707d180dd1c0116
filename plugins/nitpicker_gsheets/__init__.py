"""Google Sheets report destination (gspread): one worksheet per sheet, rows streamed in chunks."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nitpicker_core import Cell, Destination, DestinationOption, NitpickerError, Register, Sheet, hookimpl

CHUNK = 2500  # rows per appendCells request
CELL_CHARS = 49_999  # the API refuses cells over 50,000 characters
NOTE_CHARS = 5_000
ERROR_FORMAT = {
    "backgroundColor": {"red": 0.9, "green": 0.0, "blue": 0.0},
    "textFormat": {"foregroundColor": {"red": 1.0, "green": 1.0, "blue": 1.0}},
}
# Sheet.row_style → (background, text colour), as the XLSX destination colours them
ROW_COLOURS = {
    "critical": ((0.69, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "high": ((0.9, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "medium": ((0.957, 0.694, 0.514), (0.0, 0.0, 0.0)),
    "low": ((1.0, 0.902, 0.6), (0.0, 0.0, 0.0)),
}
ROW_FIELDS = (
    "userEnteredValue,note,userEnteredFormat.backgroundColor,userEnteredFormat.textFormat.foregroundColor"
)
NUMBER_FORMATS = {"percent": {"type": "PERCENT", "pattern": "0.0%"}}  # Sheet.number_formats → the API's
_NUMBER = {
    "eq": "NUMBER_EQ",
    "ne": "NUMBER_NOT_EQ",
    "lt": "NUMBER_LESS",
    "gt": "NUMBER_GREATER",
    "lte": "NUMBER_LESS_THAN_EQ",
    "gte": "NUMBER_GREATER_THAN_EQ",
    "between": "NUMBER_BETWEEN",
    "not_between": "NUMBER_NOT_BETWEEN",
}


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def cell_data(value: Any, link: bool = False) -> dict[str, Any]:
    """One CellData: typed value (text stays text even when it starts with "="), hyperlink, note."""
    note = ""
    if isinstance(value, Cell):
        value, note = value.value, value.note
    data: dict[str, Any] = {}
    if isinstance(value, bool):
        data["userEnteredValue"] = {"boolValue": value}
    elif isinstance(value, int | float):
        data["userEnteredValue"] = {"numberValue": value}
    elif value is not None:
        text = str(value)[:CELL_CHARS]
        if link and text and len(text) * 2 + 20 <= CELL_CHARS:
            data["userEnteredValue"] = {"formulaValue": f"=HYPERLINK({_quote(text)}, {_quote(text)})"}
        else:
            data["userEnteredValue"] = {"stringValue": text}
    if note:
        data["note"] = note[:NOTE_CHARS]
    return data


def _rgb(colour: tuple[float, float, float]) -> dict[str, float]:
    return dict(zip(("red", "green", "blue"), colour, strict=True))


def row_format(style: str | None) -> dict[str, Any] | None:
    """The userEnteredFormat of every cell of a row coloured ``style`` (a ``Sheet.row_style``), or None."""
    if style not in ROW_COLOURS:
        return None
    background, text = ROW_COLOURS[style]
    return {"backgroundColor": _rgb(background), "textFormat": {"foregroundColor": _rgb(text)}}


def _row_data(sheet: Sheet, row: list[Any], links: list[bool]) -> dict[str, Any]:
    values = [cell_data(v, links[i] if i < len(links) else False) for i, v in enumerate(row)]
    colour = row_format(sheet.row_style(row)) if sheet.row_style else None
    if colour is not None:
        values = [{**value, "userEnteredFormat": colour} for value in values]
    return {"values": values}


def _letter(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _condition(fmt: Mapping[str, Any], first: str) -> dict[str, Any]:
    when = fmt["when"]
    values = list(fmt.get("values", ()))
    if when == "blank":
        return {"type": "BLANK"}
    if when == "text":
        tests = [f"LEFT(LOWER({first}),{len(s)})={_quote(s.lower())}" for s in fmt.get("starts", ())]
        tests += [f"RIGHT(LOWER({first}),{len(s)})={_quote(s.lower())}" for s in fmt.get("ends", ())]
        tests += [f"ISNUMBER(SEARCH({_quote(s)},{first}))" for s in fmt.get("contains", ())]
        return {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": f"=OR({','.join(tests)})"}]}
    if when in ("eq", "ne") and values and isinstance(values[0], str):
        return {
            "type": "TEXT_EQ" if when == "eq" else "CUSTOM_FORMULA",
            "values": [{"userEnteredValue": values[0] if when == "eq" else f"={first}<>{_quote(values[0])}"}],
        }
    return {"type": _NUMBER[when], "values": [{"userEnteredValue": str(v)} for v in values]}


def setup_requests(sheet: Sheet, sheet_id: int) -> list[dict[str, Any]]:
    """Header row (bold), column widths and conditional formats of a freshly added worksheet."""
    header = [
        {"userEnteredValue": {"stringValue": c}, "userEnteredFormat": {"textFormat": {"bold": True}}}
        for c in sheet.columns
    ]
    requests: list[dict[str, Any]] = [
        {
            "appendCells": {
                "sheetId": sheet_id,
                "rows": [{"values": header}],
                "fields": "userEnteredValue,userEnteredFormat.textFormat.bold",
            }
        }
    ]
    for i, column in enumerate(sheet.columns):
        if column in sheet.widths:
            requests.append(
                {
                    "updateDimensionProperties": {
                        "range": {
                            "sheetId": sheet_id,
                            "dimension": "COLUMNS",
                            "startIndex": i,
                            "endIndex": i + 1,
                        },
                        "properties": {"pixelSize": sheet.widths[column]},
                        "fields": "pixelSize",
                    }
                }
            )
    for fmt in sheet.formats:
        for column in fmt["columns"]:
            if column not in sheet.columns:
                continue
            i = sheet.columns.index(column)
            rule = {
                "ranges": [
                    {"sheetId": sheet_id, "startRowIndex": 1, "startColumnIndex": i, "endColumnIndex": i + 1}
                ],
                "booleanRule": {"condition": _condition(fmt, f"{_letter(i)}2"), "format": ERROR_FORMAT},
            }
            requests.append({"addConditionalFormatRule": {"rule": rule, "index": 0}})
    return requests


def finish_requests(sheet: Sheet, sheet_id: int) -> list[dict[str, Any]]:
    """Once the rows are in: number formats down their columns, and the filter over the whole table."""
    requests: list[dict[str, Any]] = []
    for i, column in enumerate(sheet.columns):
        if column in sheet.number_formats:
            requests.append(
                {
                    "repeatCell": {
                        "range": {
                            "sheetId": sheet_id,
                            "startRowIndex": 1,
                            "startColumnIndex": i,
                            "endColumnIndex": i + 1,
                        },
                        "cell": {
                            "userEnteredFormat": {
                                "numberFormat": NUMBER_FORMATS[sheet.number_formats[column]]
                            }
                        },
                        "fields": "userEnteredFormat.numberFormat",
                    }
                }
            )
    requests.append(
        {
            "setBasicFilter": {
                "filter": {
                    "range": {
                        "sheetId": sheet_id,
                        "startRowIndex": 0,
                        "startColumnIndex": 0,
                        "endColumnIndex": max(1, len(sheet.columns)),
                    }
                }
            }
        }
    )
    return requests


class _Progress:
    def __init__(self, total: int, silent: bool) -> None:
        self.total, self.silent, self.live = total, silent, sys.stderr.isatty()

    def update(self, k: int, name: str, rows: int, done: bool = False) -> None:
        if self.silent or (not done and not self.live):
            return
        text = f"google-sheets: [{k}/{self.total}] {name}: {rows:,} rows" + ("" if done else "…")
        print(("\r" if self.live else "") + text, end="\n" if done else "", file=sys.stderr, flush=True)


def _write_sheet(
    sh: Any, sheet: Sheet, rows: Iterable[list[Any]], show: Any, previous: str | None = None
) -> int:
    from .api import call

    """Write one worksheet: in place of the one it replaces, else right after ``previous`` (else first tab).

    So a new report leads with its sheets in report order (Issues first), and a worksheet the user moved
    stays where they put it.
    """
    temp = f"{sheet.name} (writing)"
    tabs = {ws.title: ws for ws in call(sh.worksheets)}
    if temp in tabs:  # left over from an interrupted run
        call(sh.batch_update, {"requests": [{"deleteSheet": {"sheetId": tabs[temp].id}}]})
        tabs = {ws.title: ws for ws in call(sh.worksheets)}
    replacing = sheet.name in tabs
    if replacing:
        position = tabs[sheet.name].index  # inserted before the old one, which is then deleted
    else:
        position = tabs[previous].index + 1 if previous in tabs else 0
    frozen_rows, frozen_cols = sheet.freeze
    grid = {
        "rowCount": 2,
        "columnCount": max(1, len(sheet.columns)),
        "frozenRowCount": frozen_rows,
        "frozenColumnCount": min(frozen_cols, max(0, len(sheet.columns) - 1)),
    }
    reply = call(
        sh.batch_update,
        {
            "requests": [
                {
                    "addSheet": {
                        "properties": {
                            "title": temp if replacing else sheet.name,
                            "index": position,
                            "gridProperties": grid,
                        }
                    }
                }
            ]
        },
    )
    sheet_id = reply["replies"][0]["addSheet"]["properties"]["sheetId"]
    call(sh.batch_update, {"requests": setup_requests(sheet, sheet_id)})
    links = [c in sheet.links for c in sheet.columns]
    fields = ROW_FIELDS if sheet.row_style else "userEnteredValue,note"
    count, chunk = 0, []
    for row in rows:
        chunk.append(_row_data(sheet, row, links))
        count += 1
        if len(chunk) >= CHUNK:
            call(
                sh.batch_update,
                {
                    "requests": [
                        {
                            "appendCells": {
                                "sheetId": sheet_id,
                                "rows": chunk,
                                "fields": fields,
                            }
                        }
                    ]
                },
            )
            chunk = []
            show(count)
    if chunk:
        call(
            sh.batch_update,
            {"requests": [{"appendCells": {"sheetId": sheet_id, "rows": chunk, "fields": fields}}]},
        )
    call(sh.batch_update, {"requests": finish_requests(sheet, sheet_id)})
    if replacing:  # swap only now, so an interrupted run leaves the previous worksheet intact
        call(
            sh.batch_update,
            {
                "requests": [
                    {"deleteSheet": {"sheetId": tabs[sheet.name].id}},
                    {
                        "updateSheetProperties": {
                            "properties": {"sheetId": sheet_id, "title": sheet.name},
                            "fields": "title",
                        }
                    },
                ]
            },
        )
    return count


def _spreadsheet(options: Mapping[str, Any]) -> str:
    # .api (requests) is imported on use, like gspread: every nitpicker command starts without it
    from .api import spreadsheet_id

    # sheet_url / spreadsheet: the keys callers of run_report used before options were declared
    return spreadsheet_id(options.get("url") or options.get("sheet_url") or options.get("spreadsheet") or "")


def _check(options: dict[str, Any]) -> None:
    _spreadsheet(options)  # a malformed URL is refused before any work


def _target(options: Mapping[str, Any]) -> str:
    return _spreadsheet(options)  # the spreadsheet's id names it in a run summary; credentials never do


def write_gsheets(
    sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]
) -> dict[str, Any]:
    import gspread

    from .api import call, client
    from .auth import load_credentials

    key = _spreadsheet(options)
    creds = load_credentials(
        Path(options.get("credentials") or "credentials.json"), interactive=bool(options.get("interactive"))
    )
    gc = client(creds)
    try:
        sh = call(gc.open_by_key, key)
    except gspread.exceptions.SpreadsheetNotFound:
        raise NitpickerError("spreadsheet not found, or not shared with these credentials") from None
    todo = list(sheets)  # sheets only: each one's rows stay a lazy stream
    progress = _Progress(len(todo), bool(options.get("silent")))
    written: dict[str, int] = {}
    previous = None
    for k, (sheet, rows) in enumerate(todo, 1):
        count = _write_sheet(
            sh, sheet, rows, lambda n, k=k, name=sheet.name: progress.update(k, name, n), previous
        )
        previous = sheet.name
        progress.update(k, sheet.name, count, done=True)
        written[sheet.name] = count
    return {"destination": "google-sheets", "spreadsheet": key, "sheets": written}


@hookimpl
def register_report_destinations(register: Register[Destination]) -> None:
    register(
        Destination(
            "google-sheets",
            write_gsheets,
            "a Google spreadsheet (--sheet URL, --credentials FILE)",
            options=(
                DestinationOption(
                    "url",
                    help="The spreadsheet's URL (https://docs.google.com/spreadsheets/d/ID/…).",
                    required=True,
                ),
                DestinationOption(
                    "credentials",
                    "file",
                    "Service account key, authorized-user file or OAuth client.",
                    default="credentials.json",
                ),
            ),
            check=_check,
            target=_target,
        )
    )
