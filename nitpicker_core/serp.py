"""How wide a title or description is in a search result: pixels of Arial at the size results set them.

Search engines cut a title or snippet by its width, not its length in characters: "WWW" takes twice the room
of "iii". Titles are set in 20 px Arial and descriptions in 14 px (Google's desktop results); the widths of
Latin, Greek and Cyrillic characters come from Liberation Sans, metric-compatible with Arial
(``data/serp_widths.json``, made by ``bin/make_serp_widths.py``). Wide East Asian characters (kana, kanji,
hangul, full-width forms) take a full em, as the fallback fonts set them; other characters the width of an
average lower-case letter.
"""

from __future__ import annotations

import json
import unicodedata
from functools import cache
from importlib import resources

__all__ = ["DESCRIPTION_PX", "TITLE_PX", "pixel_width"]

TITLE_PX = 20  # font size of a result's title
DESCRIPTION_PX = 14  # font size of its snippet
_AVERAGE = 556  # thousandths of an em: Arial's lower-case "a", "e", "n"…


@cache
def _widths() -> dict[int, int]:
    data = json.loads(resources.files("nitpicker_core").joinpath("data/serp_widths.json").read_text())
    return {int(code, 16): width for code, width in data["widths"].items()}


@cache
def _width(char: str) -> int:
    found = _widths().get(ord(char))
    if found is not None:
        return found
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf", "Cc"):
        return 0
    return 1000 if unicodedata.east_asian_width(char) in ("W", "F") else _AVERAGE


def pixel_width(text: str | None, size: int) -> int | None:
    """Width of ``text`` in pixels at ``size`` px (white space runs as one space, as browsers show it)."""
    if text is None:
        return None
    shown = " ".join(text.split())
    return round(sum(_width(c) for c in shown) * size / 1000)
