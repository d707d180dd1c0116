"""A body that is no text, served as text/html, is recorded as such: no HTML, source, links or findings kept
(issue 33: two 1 MB binary pages served as HTML gave 255,078 violations and grew the archive 32×)."""

from __future__ import annotations

import pytest

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

BLOBS = ("/binary-body/blob.html", "/binary-body/blob-utf8.html")
TEXTS = {"/binary-body/latin1.html": "Latin Un", "/binary-body/utf16.html": "Seize"}


@pytest.mark.parametrize("render", ["always", "never"])
def test_a_binary_body_is_no_page_and_text_in_any_encoding_is(crawl, site, render):
    c = crawl(f"{site}/binary-body/", "--no-image", "--render", render, name=render)
    with open_archive(c.archive) as reader:
        for path in BLOBS:
            url = site + path
            row = c.page(url)
            assert (row["status"], row["content_type"]) == (200, "text/html"), path
            assert row["extra"]["unrendered"] == "a binary body served as text/html: not read as a page", path
            assert (reader.html(url), reader.source(url), c.anchors[url], row["title"]) == (
                None,
                None,
                [],
                "",
            ), path
        for path, title in TEXTS.items():
            row = c.page(site + path)
            assert row["title"] == title and "unrendered" not in row["extra"] or render == "never", path
            assert [a["href"] for a in c.anchors[site + path]] == [f"{site}/binary-body/"], path
    # the archive keeps nothing of the 512 KiB sent: the same crawl without the blobs is 410 KiB
    assert c.archive.stat().st_size < 480 * 1024
