"""HTML and PDF client reports: destinations ``html`` and ``pdf``, built from the registered report sections.

``nitpicker report ARCHIVE --to html --html-file report.html [--html-lang ja] [--html-compare 1]`` writes one
self-contained HTML file; ``--to pdf --pdf-file report.pdf [--pdf-paper letter]`` prints the same HTML with
Chromium. The sections (cover, summary, overview, one per issue, charts, screenshots, appendix) are registered through
``register_report_sections``, so another plugin adds its own the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    ArchiveError,
    Destination,
    DestinationOption,
    Register,
    ReportSection,
    UsageError,
    hookimpl,
)

from .branding import check_branding
from .document import render_document
from .messages import LANGUAGES, text
from .screenshots import SECTION as SCREENSHOTS
from .sections import SECTIONS

if TYPE_CHECKING:
    from nitpicker_core import ReportContext


def _common_options(kind: str) -> tuple[DestinationOption, ...]:
    return (
        DestinationOption("file", "output-file", f"The {kind} file to write.", required=True),
        DestinationOption("lang", "str", "Language of the report: en or ja.", default="en"),
        DestinationOption(
            "compare", "str", "Commit to compare with (default: the previous complete commit)."
        ),
        DestinationOption("examples", "int", "Example URLs listed per issue.", default=10),
        DestinationOption("title", "str", "Title of the report (default: Website audit report)."),
        DestinationOption(
            "logo", "file", "Logo image (PNG, JPEG, GIF, WebP or SVG, at most 2 MB), embedded."
        ),
        DestinationOption("accent", "str", "Accent colour of headings' rules and the header (#rrggbb)."),
        DestinationOption("footer", "str", "A line at the foot of the report (and of every PDF page)."),
    )


def check_options(options: dict[str, Any]) -> None:
    """Values refused before any work: an unknown language or paper size, a count below 1."""
    lang = str(options.get("lang") or "en")
    if lang not in LANGUAGES:
        raise UsageError(f"unknown report language {lang!r} (languages: {', '.join(LANGUAGES)})")
    paper = options.get("paper")
    if paper is not None and str(paper).lower() not in ("a4", "letter"):
        raise UsageError(f"unknown paper size {paper!r} (paper sizes: a4, letter)")
    check_branding(options)
    examples = options.get("examples")
    if examples is not None and int(examples) < 1:
        raise UsageError("the number of example URLs must be at least 1")


def _resolve_compare(report: ReportContext) -> None:
    """A ``compare`` commit that is not in the archive is one line, before anything is written."""
    compare = report.options.get("compare")
    if compare in (None, ""):
        return
    try:
        report.reader.resolve(str(compare))
    except ArchiveError as exc:
        raise UsageError(f"cannot compare with commit {compare}: {exc}") from None


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write(temp)`` into a temporary file beside ``path``, renamed onto it only when complete."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent or Path("."))
    os.close(handle)
    temp = Path(name)
    try:
        write(temp)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        raise


def _html(report: ReportContext, options: dict[str, Any], paged: bool = False) -> str:
    _resolve_compare(report)
    return render_document(
        report,
        str(options.get("lang") or "en"),
        title=options.get("title") or None,
        logo=options.get("logo") or None,
        accent=options.get("accent") or None,
        footer=options.get("footer") or None,
        paged=paged,
    )


def write_html(
    sheets: Iterable[Any], options: dict[str, Any], report: ReportContext | None = None
) -> dict[str, Any]:
    """Write the HTML report of ``report``'s commit to ``options["file"]``."""
    if report is None:
        raise UsageError("the html destination writes from a report run (nitpicker report --to html)")
    path = Path(options["file"])
    document = _html(report, options)
    write_atomically(path, lambda temp: temp.write_text(document, encoding="utf-8"))
    if not options.get("silent"):
        print(f"html: report → {path.name} ({len(document):,} characters)", file=sys.stderr, flush=True)
    return {"file": str(path), "characters": len(document)}


def write_pdf(
    sheets: Iterable[Any], options: dict[str, Any], report: ReportContext | None = None
) -> dict[str, Any]:
    """Print the HTML report of ``report``'s commit to ``options["file"]`` with Chromium."""
    from .pdf import print_pdf

    if report is None:
        raise UsageError("the pdf destination writes from a report run (nitpicker report --to pdf)")
    path = Path(options["file"])
    lang = str(options.get("lang") or "en")
    document = _html(report, options, paged=True)
    paper = str(options.get("paper") or "a4").lower()
    footer = str(options.get("footer") or "")
    write_atomically(path, lambda temp: print_pdf(document, temp, paper, text(lang, "page"), footer))
    size = path.stat().st_size
    if not options.get("silent"):
        print(f"pdf: report → {path.name} ({size:,} bytes)", file=sys.stderr, flush=True)
    return {"file": str(path), "bytes": size}


@hookimpl
def register_report_destinations(register: Register[Destination]) -> None:
    register(
        Destination(
            "html",
            write_html,
            "one self-contained HTML client report (--to html --html-file FILE)",
            options=_common_options("HTML"),
            check=check_options,
            uses_report=True,
        )
    )
    register(
        Destination(
            "pdf",
            write_pdf,
            "the HTML client report printed to PDF by Chromium (--to pdf --pdf-file FILE)",
            options=(
                *_common_options("PDF"),
                DestinationOption("paper", "str", "Paper size: a4 or letter.", default="a4"),
            ),
            check=check_options,
            uses_report=True,
        )
    )


@hookimpl
def register_report_sections(register: Register[ReportSection]) -> None:
    for section in (*SECTIONS, SCREENSHOTS):
        register(section)
