"""Small cell helpers shared by the sheets: notes listing URLs, URL path columns, text conditions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

from nitpicker_core import Cell

PATH_COLUMNS = tuple(f"path{i}" for i in range(1, 11))
NO_TEXT = "__NO_TEXT_CONTENT__"


def listed(lines: Iterable[str], total: int) -> str:
    """Note text: the given lines, and how many more exist than were listed."""
    shown = [line for line in lines if line]
    if total > len(shown):
        shown.append(f"… and {total - len(shown)} more")
    return "\n".join(shown)


def counted(total: int, urls: list[str] | None) -> Cell:
    """A count with the first URLs behind it as the note."""
    return Cell(total, listed(urls or [], total))


def path_cells(url: str) -> list[str]:
    """``path1``…``path10``: decoded segments with a leading ``/``; the query joins the last one."""
    parts = urlsplit(url)
    segments = ["/" + unquote(s) for s in parts.path.split("/")[1:]] or ["/"]
    if len(segments) > len(PATH_COLUMNS):
        segments = [*segments[:9], "".join(segments[9:])]
    if parts.query:
        segments[-1] += "?" + unquote(parts.query)
    return segments + [""] * (len(PATH_COLUMNS) - len(segments))


def flag(value: Any) -> Any:
    return None if value is None else bool(value)


def text_rule(
    columns: tuple[str, ...],
    starts: tuple[str, ...] = (),
    ends: tuple[str, ...] = (),
    contains: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A case-insensitive "starts with / ends with / contains any of" highlight, expressible everywhere."""
    return {"columns": columns, "when": "text", "starts": starts, "ends": ends, "contains": contains}
