"""Pictures of the client report for the README: the HTML report's first screen and a PDF page.

    .venv/bin/python docs/images/make_report_pictures.py                    # runs the demo pipeline twice first
    .venv/bin/python docs/images/make_report_pictures.py --archive demo.nitpicker --out /tmp/shots

Without --archive the demo pipeline runs twice in a temporary directory (as ``make_screenshots.py`` does), so
the report has a commit to compare with. The HTML report (``nitpicker report --to html``) is opened in
Chromium: ``report-html.png`` is its cover and executive summary at 1280 px; ``report-pdf.png`` is the
executive summary's A4 page of the PDF the ``pdf`` destination prints, drawn by poppler's ``pdftoppm`` (bin/setup
installs it with the test extras). Without pdftoppm the page is imitated: print media emulated, A4 width and
the PDF's margins, one page tall (each section starts a printed page), without the page-number footer. Each PNG is deflated again at level 9 to keep the README light.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "plugins"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_screenshots import run_demo, shrink_png  # noqa: E402

LIMIT = 300_000  # bytes a README image may weigh
HTML_WIDTH, HTML_HEIGHT = 1280, 1100
MM = 96 / 25.4  # CSS px per millimetre
A4 = (210, 297)  # mm
PDF_SECTION = "summary"  # the printed page shown: the executive summary's (the PDF's third page)
from nitpicker_html_report.pdf import MARGIN_MM as MARGIN  # noqa: E402 - mm, as the PDF prints


def write_report(archive: Path, out: Path) -> None:
    """``nitpicker report ARCHIVE --to html --html-file OUT`` through the report API."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import run_report

    with open_archive(archive) as reader:
        run_report(make_plugin_manager(), reader, "html", {"file": str(out), "silent": True})


def _save(png: bytes, target: Path) -> None:
    png = shrink_png(png)
    target.write_bytes(png)
    print(
        f"{target}: {len(png) / 1000:.0f} kB{'  <-- over the limit' if len(png) > LIMIT else ''}", flush=True
    )


def capture(html: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    from nitpicker_core import browser_args, find_browser

    width = round(A4[0] * MM)
    height = round(A4[1] * MM)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=find_browser(), args=browser_args(), headless=True
        )
        try:
            page: Any = browser.new_page(
                viewport={"width": HTML_WIDTH, "height": HTML_HEIGHT},
                color_scheme="light",
                device_scale_factor=1,
            )
            page.goto(html.as_uri(), wait_until="load")
            # from the title's rule, past the contents, to the cover and the executive summary
            top = page.evaluate("document.querySelector('#cover').getBoundingClientRect().top - 24")
            _save(
                page.screenshot(
                    clip={"x": 0, "y": top, "width": HTML_WIDTH, "height": HTML_HEIGHT}, full_page=True
                ),
                out / "report-html.png",
            )
            page.close()
            if printed_page(html, out):
                return
            page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
            page.emulate_media(media="print", color_scheme="light")
            page.goto(html.as_uri(), wait_until="load")
            margins = {side: f"{mm}mm" for side, mm in MARGIN.items()}
            # the page box of the printed PDF: its margins around the content, white like paper; every
            # section starts a printed page, so the summary's page is the summary section alone
            page.add_style_tag(
                content=(
                    f"html{{background:#fff}}body>header,body>nav,section.report-section:not(#{PDF_SECTION})"
                    "{display:none!important}section.report-section>h2:first-child{margin-top:0!important}"
                    f"body{{margin:0!important;padding:{margins['top']} {margins['right']} "
                    f"{margins['bottom']} {margins['left']}!important;box-sizing:border-box}}"
                    # the bottom margin stays blank: what overflows it goes to the next printed page
                    f"body::after{{content:'';position:fixed;left:0;right:0;bottom:0;height:{margins['bottom']};"
                    "background:#fff}"
                )
            )
            _save(
                page.screenshot(clip={"x": 0, "y": 0, "width": width, "height": height}),
                out / "report-pdf.png",
            )
        finally:
            browser.close()


def printed_page(html: Path, out: Path) -> bool:
    """``report-pdf.png``: the executive summary's page of the PDF Chromium printed, drawn by poppler's
    ``pdftoppm`` (page-number footer included); False when pdftoppm is not installed."""
    import shutil
    import subprocess

    from nitpicker_html_report.pdf import print_pdf, section_pages

    if shutil.which("pdftoppm") is None:
        return False
    pdf = html.with_suffix(".pdf")
    print_pdf(html.read_text(encoding="utf-8"), pdf, "a4", "Page")
    number = section_pages(pdf.read_bytes(), [PDF_SECTION])[PDF_SECTION]
    root = pdf.with_name("summary-page")
    subprocess.run(
        [
            "pdftoppm",
            "-f",
            str(number),
            "-l",
            str(number),
            "-r",
            "96",
            "-png",
            "-singlefile",
            str(pdf),
            str(root),
        ],
        check=True,
        timeout=120,
    )
    _save(root.with_suffix(".png").read_bytes(), out / "report-pdf.png")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, help="a demo archive with two commits (default: make one)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where the PNGs go")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nitpicker-report-pictures-") as tmp:
        archive = args.archive or run_demo(Path(tmp))
        html = Path(tmp) / "report.html"
        write_report(archive, html)
        capture(html, args.out)


if __name__ == "__main__":
    main()
