"""The HTML report printed to PDF by Chromium (the browser the crawler runs), through Playwright."""

from __future__ import annotations

import threading
from html import escape
from pathlib import Path
from typing import Any

from nitpicker_core import UsageError, browser_args, find_browser

PAPERS = {"a4": "A4", "letter": "Letter"}
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}
#: printing one self-contained page needs no GPU process and one renderer: fewer Chromium processes, less
#: memory (benchmarks/report_throughput.py --to pdf: peak PSS of the process tree); the user's
#: $NITPICKER_BROWSER_ARGS come after these
PRINT_ARGS = (
    "--disable-gpu",
    "--in-process-gpu",
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


def print_pdf(html: str, path: Path, paper: str, page_label: str, footer: str = "") -> None:
    """Print ``html`` to ``path`` (A4 or Letter) with page numbers; raises UsageError without a Chromium."""
    executable = find_browser()
    if executable is None:
        raise UsageError("no Chromium found to print the PDF (run `playwright install chromium`)")
    failure: list[BaseException] = []

    def run() -> None:  # a thread of its own: the sync API refuses to run inside an asyncio loop
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=executable, args=[*PRINT_ARGS, *browser_args()]
                )
                try:
                    page = browser.new_page()
                    page.set_content(html, wait_until="load")
                    options: dict[str, Any] = {
                        "path": str(path),
                        "format": PAPERS[paper],
                        "print_background": True,
                        "display_header_footer": True,
                        "header_template": "<span></span>",
                        "footer_template": footer_template(page_label, footer),
                        "margin": MARGIN,
                        "outline": True,
                        "tagged": True,
                    }
                    page.pdf(**options)
                finally:
                    browser.close()
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=run, name="nitpicker-pdf")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
