"""page_alternates on real archives: markup and Link-header alternates, older shapes and hostile values as data."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from archive_testdata import page
from test_writer import build

from nitpicker_core import Alternate, page_alternates
from nitpicker_core.archive import open_archive


def test_alternates_come_from_the_stored_markup_and_headers(tmp_path: Path) -> None:
    url = "https://example.org/p/1"
    marked = replace(
        page(1, 5),
        extra={
            "hreflang": [
                {"hreflang": "fr", "href": "https://example.org/fr/1"},
                {"hreflang": "", "href": "javascript:x"},
            ],
            "pagination": [{"rel": "next", "href": "https://example.org/p/2"}, {"rel": "bogus", "href": "x"}],
        },
        headers={
            "server": "test",
            "Link": '</p/0>; rel="prev", <https://example.org/de/1>; rel=alternate; hreflang=de',
        },
    )
    # page 0 keeps the shape of the archive test data ({code: url}): read as nothing, never an error
    archive = tmp_path / "a.nitpicker"
    build(archive, [page(0, 5), marked])
    with open_archive(archive) as reader:
        found = page_alternates(reader, reader.resolve(None))
    assert found == [
        Alternate(url, "hreflang", "https://example.org/fr/1", "fr"),
        Alternate(url, "hreflang", "javascript:x", ""),
        Alternate(url, "next", "https://example.org/p/2"),
        Alternate(url, "prev", "https://example.org/p/0", "", "header"),
        Alternate(url, "hreflang", "https://example.org/de/1", "de", "header"),
    ]
