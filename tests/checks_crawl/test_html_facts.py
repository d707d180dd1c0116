"""The crawl checks read each page's stored HTML in one pass for every reader: a reader that fails fails its own
checks only, and each reader sees every content page with stored HTML."""

from __future__ import annotations

from pathlib import Path

import pytest
from nitpicker_checks import common

from nitpicker_core.archive import open_archive
from nitpicker_core.check_context import CheckContext
from nitpicker_testing.archives import archive_builder, page

SITE = "https://facts.test"


def test_a_failing_html_reader_fails_only_its_own_facts(tmp_path: Path) -> None:
    path = tmp_path / "facts.nitpicker"
    with archive_builder(path, roots=[SITE + "/"]) as build:
        for i in range(3):
            build.page(page(f"{SITE}/p{i}", title=f"Page {i}"))

    def boom(url: str, html: str) -> None:
        if url.endswith("/p1"):
            raise RuntimeError("reader failed")

    common.html_reader("test-boom")(boom)
    common.html_reader("test-sizes")(lambda url, html: len(html))
    try:
        with open_archive(path) as reader:
            ctx = CheckContext(reader, reader.resolve())
            sizes = common.html_facts(ctx, "test-sizes")
            with pytest.raises(RuntimeError, match="reader failed"):
                common.html_facts(ctx, "test-boom")
            assert common.html_facts(ctx, "nofollow_links") == {url: [] for url in sizes}
    finally:
        del common._HTML_READERS["test-boom"], common._HTML_READERS["test-sizes"]
    assert set(sizes) == {f"{SITE}/p{i}" for i in range(3)} and all(sizes.values())
