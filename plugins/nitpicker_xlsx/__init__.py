"""The xlsx report destination: one workbook, a worksheet per sheet (the writer is in `workbook`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nitpicker_core import Destination, DestinationOption, Register, Sheet, hookimpl


def write_xlsx(
    sheets: Iterable[tuple[Sheet, Iterable[list[Any]]]], options: dict[str, Any]
) -> dict[str, Any]:
    # imported on use: openpyxl costs every nitpicker command ~0.1 s at start, and only a report needs it
    from .workbook import write_xlsx as write

    return write(sheets, options)


@hookimpl
def register_report_destinations(register: Register[Destination]) -> None:
    register(
        Destination(
            "xlsx",
            write_xlsx,
            "one .xlsx workbook (--xlsx FILE)",
            options=(
                DestinationOption(
                    "file", "output-file", "The workbook to write (replaced if it exists).", required=True
                ),
            ),
        )
    )
