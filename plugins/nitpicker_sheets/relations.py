"""Relational sheets (who links to what, which page loads which resource) and Discrepancies."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from nitpicker_core import Cell, Sheet

from .cells import NO_TEXT

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

STATUS = "not_between"
_SPACE = re.compile(r"\s+")


def _text(value: str | None) -> str:
    return _SPACE.sub(" ", value or "").strip()


def referrer_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for r in report.stream("report-referrers"):
        to = Cell(r["page"], f"[REDIRECTED FROM] {r['through']}") if r["through"] else r["page"]
        source = r["source"] + (f"#{r['fragment']}" if r["fragment"] else "")
        yield [
            to,
            source,
            _text(r["text"]) or NO_TEXT,
            r["status"],
            r["status_text"] or "",
            r["content_type"] or "",
        ]


def resource_referrer_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for r in report.stream("report-resource-referrers"):
        yield [
            r["page"],
            r["resource"],
            r["status"],
            r["status_text"] or "",
            r["content_type"] or "",
            r["content_length"],
        ]


_MISMATCH_TYPES = {
    "canonical": "Canonical vs URL",
    "og_title": "og:title vs Title",
    "og_description": "og:description vs Description",
}


def discrepancy_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for r in report.stream("report-link-texts"):
        text, title = _text(r["text"]), _text(r["title"])
        if text.casefold() not in title.casefold() and title.casefold() not in text.casefold():
            yield ["Link Text vs Page Title", r["source"], text, title, r["target"], ""]
    for m in report.stream("mismatches"):
        right_url = m["declared_value"] if m["kind"] == "canonical" else ""
        yield [
            _MISMATCH_TYPES.get(m["kind"], m["kind"]),
            m["url"],
            m["page_value"] or "",
            m["declared_value"] or "",
            right_url,
            "",
        ]


def _status(column: str) -> dict[str, Any]:
    return {"columns": (column,), "when": STATUS, "values": (200, 399)}


SHEETS = (
    Sheet(
        "Discrepancies",
        ("Type", "Left URL", "Left", "Right", "Right URL", "Note"),
        discrepancy_rows,
        order=30,
        uses_report=True,
        freeze=(1, 1),
        links=("Left URL", "Right URL"),
        description="link texts that differ from the linked page's title; canonical and og: mismatches",
        widths={"Type": 180, "Left URL": 300, "Left": 240, "Right": 240, "Right URL": 300},
    ),
    Sheet(
        "Referrers Relational Table",
        (
            "Link (To)",
            "Referrer (From)",
            "Referrer Content",
            "Link Status Code",
            "Link Status Text",
            "Link Content Type",
        ),
        referrer_rows,
        order=60,
        uses_report=True,
        freeze=(1, 2),
        links=("Link (To)", "Referrer (From)"),
        formats=(_status("Link Status Code"),),
        description="one row per page and anchor pointing at it",
        widths={"Link (To)": 320, "Referrer (From)": 320, "Referrer Content": 240},
    ),
    Sheet(
        "Resources Relational Table",
        (
            "Referred Page (From)",
            "Resource (To)",
            "Resource Status Code",
            "Resource Status Text",
            "Resource Content Type",
            "Resource Size",
        ),
        resource_referrer_rows,
        order=70,
        uses_report=True,
        freeze=(1, 2),
        links=("Referred Page (From)",),
        formats=(_status("Resource Status Code"),),
        description="one row per page and resource it loaded",
        widths={"Referred Page (From)": 320, "Resource (To)": 320},
    ),
)
