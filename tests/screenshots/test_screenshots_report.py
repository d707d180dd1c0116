"""The HTML report's screenshots section from a real `crawl --screenshots` of test_server's /shots/ pages: the
thumbnails of the pages with the most severe findings, embedded, captioned with the URL and the findings'
count; left out when the crawl took none."""

from __future__ import annotations

import base64
import re
from html import unescape

import pytest
from support import run_cli
from test_screenshots_crawl import _query

from nitpicker_core import PRIORITIES

pytestmark = pytest.mark.browser

FIGURE = re.compile(
    r'<figure class="shot"><img src="data:image/jpeg;base64,([^"]+)" width="(\d+)" height="(\d+)" '
    r'alt="([^"]*)"><figcaption><a href="([^"]+)">[^<]*</a><br><span class="badge p-(\w+)">[^<]*</span> '
    r"(\d+) finding\(s\)</figcaption></figure>"
)


def _findings_by_page(archive) -> dict[str, tuple[int, int]]:
    """URL → (its worst finding's priority index, its findings' count), from `issues` and `issue-urls`."""
    pages: dict[str, tuple[int, int]] = {}
    for row in _query(archive, "issues")["items"]:
        if not row.get("findings"):
            continue
        level = PRIORITIES.index(row["priority"])
        for item in _query(archive, "issue-urls", check=row["id"], limit=1000)["items"]:
            worst, count = pages.get(item["url"], (level, 0))
            pages[item["url"]] = (min(worst, level), count + 1)
    return pages


def _report(archive, tmp_path, *args):
    out = tmp_path / "report.html"
    done = run_cli("report", str(archive), "--to", "html", "--html-file", str(out), *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def test_the_pages_with_the_most_severe_findings_are_shown(shots, site, tmp_path):
    archive = shots["with"]
    document = _report(archive, tmp_path)
    assert '<section class="report-section" id="screenshots"' in document
    assert '<a href="#screenshots">Screenshots</a>' in document  # in the table of contents
    figures = FIGURE.findall(document)
    pages = _findings_by_page(archive)
    shown = {u for u in pages if _query(archive, "page-detail", url=u)["screenshot"]}
    assert shown, pages  # the section's pages have findings and screenshots
    assert len(figures) == min(6, len(shown))
    ranked = sorted(shown, key=lambda u: (pages[u][0], -pages[u][1], u))
    assert [unescape(f[4]) for f in figures] == ranked[:6]
    for data, width, height, alt, url, priority, count in figures:
        url = unescape(url)
        assert (PRIORITIES.index(priority), int(count)) == pages[url]
        assert unescape(alt) == f"Screenshot of {url}"
        thumb = _query(archive, "page-detail", url=url)["screenshot"]["thumbnail"]
        image = _query(archive, "screenshot", sha256=thumb["sha256"])
        assert base64.b64decode(data) == base64.b64decode(image["data"])
        assert (int(width), int(height)) == (thumb["width"], thumb["height"]) == (320, 240)
    assert not re.search(r'src="https?:', document)  # nothing is fetched: the images are in the file
    ja = _report(archive, tmp_path, "--lang", "ja")
    assert "スクリーンショット" in ja and ja.count('<figure class="shot">') == len(figures)


def test_without_screenshots_the_section_is_left_out(shots, tmp_path):
    document = _report(shots["without"], tmp_path)
    assert 'id="screenshots"' not in document and "<figure" not in document
    assert 'id="appendix"' in document  # the rest of the report is there
