"""CSV report destination: one UTF-8 CSV file per sheet in an output directory."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nitpicker_core import Destination, Sheet, UsageError, hookimpl


def _file_name(sheet: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", sheet).strip("-").lower() + ".csv"


def write_csv(sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]) -> list[str]:
    out = options.get("output_dir")
    if not out:
        raise UsageError("the csv destination needs an output directory")
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for sheet, rows in sheets:
        path = directory / _file_name(sheet.name)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(sheet.columns)
            writer.writerows(rows)
        written.append(path.name)
    return written


@hookimpl
def register_report_destinations(register: Any) -> None:
    register(Destination("csv", write_csv, "one CSV file per sheet in a directory"))
