"""A small archive where the crawl, axe and markup find the same defects: one image without alt, one page
without a language, a second h1, a page without an h1; and a link to a 404 with its anchor's text and line:col.

Commit 1 is only crawled; commit 2 is crawled again and analysed by axe and markup.
"""

from __future__ import annotations

from pathlib import Path

from archives import SITE, build_archive

from nitpicker_core import Anchor, Heading, Image, ScrapeResult, Violation
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.indexing import index_analysis
from nitpicker_core.plugins import make_plugin_manager

IMG = '<img src="img/no-alt.png" class="hero">'


def _page(
    path: str,
    status: int = 200,
    lang: str = "en",
    h1: tuple[str, ...] = ("Title",),
    anchors: list[Anchor] | None = None,
    images: list[Image] | None = None,
) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": f"Page {path}", "lang": lang},
        html=f"<html><head><title>Page {path}</title></head><body></body></html>",
        headings=[*(Heading(1, text) for text in h1), Heading(2, "Part")],
        anchors=anchors or [],
        images=images or [],
    )


def _pages() -> list[ScrapeResult]:
    links = [
        Anchor(SITE + "/missing", "Gone page", raw_href="/missing", line=9, col=5),
        Anchor(SITE + "/missing", "again", raw_href="missing", line=12, col=1),
        Anchor(SITE + "/two", "Two", raw_href="/two", line=10, col=5),
        Anchor(SITE + "/none", "None", raw_href="/none", line=11, col=5),
    ]
    image = Image(src="img/no-alt.png", current_src=SITE + "/img/no-alt.png", alt=None, width=10, height=10)
    return [
        _page("/", lang="", anchors=links, images=[image]),
        _page("/two", h1=("First", "Second")),
        _page("/none", h1=()),
        _page("/missing", 404, h1=()),
        _page("/unlinked", 410, h1=()),
    ]


def _analyse(target, commit: int, analyzer: str, found: dict[str, list[Violation]]) -> None:
    writer = ArchiveWriter.open(target)
    writer.begin_analysis(commit, analyzer, "1", {})
    for path, violations in found.items():
        writer.put_analysis(commit, analyzer, SITE + path, {}, violations)
    writer.finish_analysis(commit, analyzer, "complete")
    index_analysis(writer, commit, analyzer, make_plugin_manager())  # what `nitpicker analyze` does next
    writer.write()
    writer.close()


def build_defects_archive(target: Path) -> Path:
    build_archive(target, _pages())
    build_archive(target, _pages())
    _analyse(
        target,
        2,
        "axe",
        {
            "/": [
                Violation("image-alt", "no alt", "critical", snippet=IMG),
                Violation("html-has-lang", "no lang", "serious", snippet="<html>"),
            ],
            "/none": [Violation("page-has-heading-one", "no h1", "moderate", snippet="<html>")],
        },
    )
    _analyse(
        target,
        2,
        "markup",
        {
            "/": [
                Violation(
                    "img-alt-missing",
                    "<img> has no alt attribute",
                    "error",
                    snippet='<img class="hero" src="img/no-alt.png">',
                ),
                Violation("html-lang", "no lang", "error", snippet="<html>"),
            ],
            "/two": [Violation("multiple-h1", "h1 number 2 of 2", "warning", snippet="<h1>")],
        },
    )
    return target
