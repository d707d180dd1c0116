"""CSV report destination: one UTF-8 CSV file per sheet in an output directory, written row by row."""

from __future__ import annotations

import contextlib
import csv
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nitpicker_core import (
    Cell,
    Destination,
    DestinationOption,
    Register,
    Sheet,
    UsageError,
    check_directory_destination,
    hookimpl,
)

# OWASP's CSV-injection rule: a cell starting with one of these is read as a formula by spreadsheet programs.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def file_name(sheet: str) -> str:
    """``Referrers Relational Table`` → ``referrers-relational-table.csv``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", sheet).strip("-").lower() + ".csv"


def neutralise(text: str) -> str:
    """Text a spreadsheet would run as a formula, prefixed with ``'`` so it shows as text; numbers stay."""
    if text.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


def percent(value: float) -> str:
    """``0.6667`` → ``66.67%``: spreadsheet programs read it back as the number 0.6667 shown as a percentage."""
    return f"{value * 100:.2f}".rstrip("0").rstrip(".") + "%"


def _plain(value: Any, number_format: str | None = None) -> Any:
    if isinstance(value, Cell):
        value = value.value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return percent(value) if number_format == "percent" else value
    return neutralise(str(value))


def _write_file(partial: Path, sheet: Sheet, rows: Iterable[list[Any]]) -> int:
    count = 0
    # utf-8-sig: spreadsheet programs then read non-ASCII text (Japanese titles) correctly.
    with partial.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow([neutralise(str(c)) for c in sheet.columns])
        formats = [sheet.number_formats.get(c) for c in sheet.columns]
        for row in rows:
            writer.writerow([_plain(v, formats[i] if i < len(formats) else None) for i, v in enumerate(row)])
            count += 1
    return count


def write_csv(sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]) -> list[str]:
    """Write each sheet into directory ``options["dir"]``; returns the file names written, in sheet order."""
    out = options.get("dir") or options.get("output_dir")  # output_dir: the key before options were declared
    if not out:
        raise UsageError("the csv destination needs an output directory (--csv-dir DIR)")
    directory = Path(out)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory.name} exists and is not a directory")
    check_directory_destination(directory, directory.name)  # before any sheet renders
    directory.mkdir(parents=True, exist_ok=True)
    # All or nothing: every sheet is written beside its file first and the files are replaced only once all of
    # them are, so a report that fails half-way leaves the previous report whole, never old and new mixed.
    written: dict[str, tuple[Path, int]] = {}
    partials: list[Path] = []
    try:
        for sheet, rows in sheets:
            path = directory / file_name(sheet.name)
            partials.append(path.with_name(path.name + ".partial"))
            count = _write_file(partials[-1], sheet, rows)
            written[path.name] = (partials[-1], count)
            if not options.get("silent"):
                print(f"csv: {sheet.name}: {count:,} rows → {path.name}", file=sys.stderr, flush=True)
        for name, (partial, _count) in written.items():
            os.replace(partial, directory / name)
    except BaseException:
        for partial in partials:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
        raise
    return list(written)


@hookimpl
def register_report_destinations(register: Register[Destination]) -> None:
    register(
        Destination(
            "csv",
            write_csv,
            "one CSV file per sheet in a directory (--csv DIR)",
            options=(
                DestinationOption(
                    "dir", "output-dir", "Directory the CSV files go into (made if missing).", required=True
                ),
            ),
        )
    )
