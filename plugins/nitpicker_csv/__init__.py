"""CSV report destination: one UTF-8 CSV file per sheet in an output directory, written row by row."""

from __future__ import annotations

import csv
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nitpicker_core import Cell, Destination, Sheet, UsageError, hookimpl


def file_name(sheet: str) -> str:
    """``Referrers Relational Table`` → ``referrers-relational-table.csv``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", sheet).strip("-").lower() + ".csv"


def _plain(value: Any) -> Any:
    if isinstance(value, Cell):
        value = value.value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return value


def write_csv(sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]) -> list[str]:
    """Write each sheet to ``options["output_dir"]``; returns the file names written, in sheet order."""
    out = options.get("output_dir")
    if not out:
        raise UsageError("the csv destination needs an output directory (--csv DIR)")
    directory = Path(out)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory.name} exists and is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for sheet, rows in sheets:
        path = directory / file_name(sheet.name)
        partial = path.with_name(path.name + ".partial")
        count = 0
        # utf-8-sig: spreadsheet programs then read non-ASCII text (Japanese titles) correctly.
        with partial.open("w", newline="", encoding="utf-8-sig") as handle:
            writer = csv.writer(handle)
            writer.writerow(sheet.columns)
            for row in rows:
                writer.writerow([_plain(v) for v in row])
                count += 1
        os.replace(partial, path)
        written[path.name] = count
        if not options.get("silent"):
            print(f"csv: {sheet.name}: {count:,} rows → {path.name}", file=sys.stderr, flush=True)
    return list(written)


@hookimpl
def register_report_destinations(register: Any) -> None:
    register(Destination("csv", write_csv, "one CSV file per sheet in a directory (--csv DIR)"))
