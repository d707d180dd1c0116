"""A three-commit archive with crawl and analyzer findings that change between commits, and the viewer over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from archives import SITE, build_archive

from nitpicker_core import Anchor, ScrapeResult, Violation

# Which internal pages answer 404 in commits 1, 2 and 3; "/" links to all three in every commit, so each
# 404 is a broken-link finding (page "/", detail the target). /missing and /old are fixed in 2 and back in 3
# (regressed against base 2), /new appears in 2.
BROKEN = ({"/missing", "/old"}, {"/new"}, {"/missing", "/old", "/new"})
TARGETS = ("/missing", "/old", "/new")
# axe and markup findings of commits 2 and 3 (commit 1 is never analysed); axe's version changes in 3
AXE = (
    None,
    ("4.9", {"/": [Violation("color-contrast", "low contrast", "serious", snippet='<p class="dim">')]}),
    (
        "4.10",
        {
            "/": [
                Violation("color-contrast", "low contrast", "serious", snippet='<p class="dim">'),
                Violation("region", "content outside landmarks", "moderate", snippet='<div id="x">'),
            ]
        },
    ),
)
MARKUP = (
    None,
    ("1", {"/about": [Violation("duplicate-id", "id 'a' twice", "error", snippet='<b id="a">')]}),
    ("1", {"/about": [Violation("duplicate-id", "id 'a' twice", "error", snippet='<b id="a">')]}),
)


def _page(path: str, status: int, links: tuple[str, ...] = ()) -> ScrapeResult:
    body = "".join(f'<a href="{href}">{href}</a>' for href in links)
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": f"Page {path}", "lang": "en"},
        html=f"<html lang='en'><head><title>Page {path}</title></head><body><h1>x</h1>{body}</body></html>",
        anchors=[Anchor(SITE + href, href) for href in links],
    )


def _analyse(
    target: Path, commit: int, analyzer: str, version: str, found: dict[str, list[Violation]]
) -> None:
    from nitpicker_core.archive.writer import ArchiveWriter
    from nitpicker_core.indexing import index_analysis
    from nitpicker_core.plugins import make_plugin_manager

    writer = ArchiveWriter.open(target)
    writer.begin_analysis(commit, analyzer, version, {})
    for path, violations in found.items():
        writer.put_analysis(commit, analyzer, SITE + path, {}, violations)
    writer.finish_analysis(commit, analyzer, "complete")
    index_analysis(writer, commit, analyzer, make_plugin_manager())  # what `nitpicker analyze` does next
    writer.write()
    writer.close()


@pytest.fixture(scope="session")
def issues_archive(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("viewer-issues") / "issues.nitpicker"
    for broken in BROKEN:
        pages = [_page("/", 200, TARGETS), _page("/about", 200, ("/",))]
        pages += [_page(path, 404 if path in broken else 200) for path in TARGETS]
        build_archive(target, pages)
    for commit in (2, 3):
        for analyzer, runs in (("axe", AXE), ("markup", MARKUP)):
            version, found = runs[commit - 1]
            _analyse(target, commit, analyzer, version, found)
    return target


@pytest.fixture(scope="session")
def issues_app(issues_archive, viewer_over):
    with viewer_over(issues_archive) as app:
        yield app


@pytest.fixture
def issues_client(issues_app):
    return issues_app.test_client()


@pytest.fixture(scope="module")
def issues_served(issues_app, serving):
    with serving(issues_app) as url:
        yield url
