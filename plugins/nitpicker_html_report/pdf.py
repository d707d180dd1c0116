"""The HTML report printed to PDF by Chromium (the browser the crawler runs), over its debugging pipe."""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Callable
from html import escape, unescape
from pathlib import Path
from typing import Any

from nitpicker_core import UsageError, browser_args, find_browser

from .cdp import BrowserError, PipeBrowser
from .document import fill_toc_pages

#: paper sizes in inches, as Chromium's print dialog has them
PAPERS = {"a4": (8.27, 11.69), "letter": (8.5, 11.0)}
MARGIN_MM = {"top": 16, "bottom": 18, "left": 14, "right": 14}
MM_PER_INCH = 25.4
#: printing one self-contained page needs no GPU process and one renderer: fewer Chromium processes, less
#: memory (benchmarks/report_throughput.py --to pdf: peak PSS of the process tree); the user's
#: $NITPICKER_BROWSER_ARGS come after these
PRINT_ARGS = (
    "--disable-gpu",
    "--in-process-gpu",
    # no software GL either (SwiftShader): printing needs none (10-15 MB less PSS at the peak)
    "--disable-software-rasterizer",
    "--renderer-process-limit=1",
    "--disable-features=site-per-process,Translate,OptimizationHints,MediaRouter",
)


def footer_template(label: str, footer: str = "") -> str:
    """Chromium's print footer: the footer line, then ``Page N / M`` (Chromium fills the two spans)."""
    line = f"<span>{escape(footer)}</span>" if footer else "<span></span>"
    return (
        '<div style="font-size:8px;width:100%;padding:0 14mm;display:flex;justify-content:space-between;'
        f'color:#333">{line}<span>{escape(label)} <span class="pageNumber"></span> / '
        '<span class="totalPages"></span></span></div>'
    )


#: prints of the whole report at most, until the table of contents' page numbers agree with the print
TOC_PRINTS = 3
_TOC_SPAN = re.compile(r'<span class="toc-page" data-section="([^"]*)"></span>')


def section_pages(pdf: bytes, names: list[str]) -> dict[str, int]:
    """The page (from 1) each of ``names`` starts on in a PDF Chromium printed: the named destinations it makes
    for the document's link targets (the table of contents links every section)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    destinations = reader.named_destinations
    pages = {}
    for name in names:
        found = destinations.get("/" + name) or destinations.get(name)
        index = reader.get_destination_page_number(found) if found is not None else None
        if index is not None:
            pages[name] = index + 1
    return pages


def paginate(html: str, render: Callable[[str], bytes]) -> bytes:
    """The PDF of ``html`` whose table of contents (``document.render_document(paged=True)``) names the page of
    each section: printed, read back, filled in and printed again, until the pages agree (the numbers have a
    fixed width, so the second print normally agrees)."""
    names = [unescape(name) for name in _TOC_SPAN.findall(html)]
    pdf = render(html)
    if not names:
        return pdf
    pages = section_pages(pdf, names)
    for _ in range(TOC_PRINTS - 1):
        pdf = render(fill_toc_pages(html, pages))
        printed = section_pages(pdf, names)
        if printed == pages:
            break
        pages = printed
    return pdf


def print_pdf(html: str, path: Path, paper: str, page_label: str, footer: str = "") -> None:
    """Print ``html`` to ``path`` (A4 or Letter) with page numbers, and the page of each section in its table
    of contents when it has one; raises UsageError without a Chromium."""
    executable = find_browser()
    if executable is None:
        raise UsageError("no Chromium found to print the PDF (run `playwright install chromium`)")
    width, height = PAPERS[paper]
    options: dict[str, Any] = {
        "paperWidth": width,
        "paperHeight": height,
        **{f"margin{side.title()}": mm / MM_PER_INCH for side, mm in MARGIN_MM.items()},
        "printBackground": True,
        "displayHeaderFooter": True,
        "headerTemplate": "<span></span>",
        "footerTemplate": footer_template(page_label, footer),
        "generateTaggedPDF": True,
        "generateDocumentOutline": True,
    }
    with tempfile.TemporaryDirectory(prefix="nitpicker-report-") as folder:
        page = Path(folder) / "report.html"

        def render(document: str) -> bytes:
            page.write_text(document, encoding="utf-8")
            # a browser per print: the peak memory is one print's, not a renderer's that printed twice
            with PipeBrowser(executable, [*PRINT_ARGS, *browser_args()]) as browser:
                return browser.print_file(page, options)

        try:
            pdf = paginate(html, render)
        except (BrowserError, OSError) as exc:
            raise UsageError(f"Chromium could not print the PDF: {exc}") from None
    path.write_bytes(pdf)
