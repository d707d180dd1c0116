"""Write serp_widths.json: advance widths of Arial's characters, as search results set titles and snippets.

Run it with fontTools installed (``pip install fonttools``); it is not a dependency of nitpicker:

    python bin/make_serp_widths.py [/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf]

Liberation Sans (Debian's fonts-liberation) is metric-compatible with Arial, the font Google's results use:
the same advance width for every character it has. Widths are stored in thousandths of an em, for the
characters of Latin, Greek and Cyrillic scripts and general punctuation; others are measured by the rule
in ``nitpicker_core/serp.py`` (wide East Asian characters a full em).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fontTools.ttLib import TTFont  # type: ignore[import-not-found]

FONT = "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"
RANGES = ((0x20, 0x2FF), (0x370, 0x52F), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x214F))


def main() -> None:
    font = TTFont(sys.argv[1] if len(sys.argv) > 1 else FONT)
    per_em = font["head"].unitsPerEm
    cmap = font.getBestCmap()
    metrics = font["hmtx"].metrics
    widths = {}
    for low, high in RANGES:
        for code in range(low, high + 1):
            glyph = cmap.get(code)
            if glyph is not None:
                widths[f"{code:x}"] = round(metrics[glyph][0] * 1000 / per_em)
    out = Path(__file__).resolve().parents[1] / "nitpicker_core" / "data" / "serp_widths.json"
    data = {"font": "Liberation Sans Regular (Arial metrics)", "units": "1/1000 em", "widths": widths}
    out.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"{len(widths)} widths written to {out}")


if __name__ == "__main__":
    main()
