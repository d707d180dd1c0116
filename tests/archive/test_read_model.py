"""The read model (nitpicker_core.read) on a real archive: fields by name, typed rows, the same as the reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_testdata import page

from nitpicker_core import UsageError, read
from nitpicker_core.archive import ArchiveWriter, open_archive

N = 6


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("read") / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, [page(i, N) for i in range(N)])
    w.finish_commit(c)
    w.write()
    w.close()
    return target


def test_page_rows_give_the_fields_asked_for_as_the_reader_stores_them(archive: Path) -> None:
    with open_archive(archive) as r:
        commit = r.resolve(None)
        rows = list(read.page_rows(r, commit, ("url", "status", "title", "redirect_dest"), ordered=True))
        pages = {p["url"]: p for p in r.pages(commit)}
        assert [row["url"] for row in rows] == sorted(pages)
        for row in rows:
            assert set(row) == {"url", "status", "title", "redirect_dest"}
            assert (row["status"], row["title"], row["redirect_dest"]) == (
                pages[row["url"]]["status"],
                pages[row["url"]]["title"],
                pages[row["url"]]["redirect_dest"],
            )
        # present keeps rows with one of the fields set: the internal pages have a canonical, the link
        # target outside (a placeholder row) has none
        canonical = {row["url"] for row in read.page_rows(r, commit, ("url",), present=("canonical",))}
        assert canonical == {url for url, p in pages.items() if p["canonical"]}
        assert len(canonical) == N < len(pages)
        with pytest.raises(UsageError, match="no page field 'nope'; known: .*error_kind"):
            list(read.page_rows(r, commit, ("url", "nope")))


def test_links_and_children_are_typed_rows_of_the_whole_commit(archive: Path) -> None:
    with open_archive(archive) as r:
        commit = r.resolve(None)
        target = "https://example.org/p/3"
        links = read.links_to(r, commit, [target, "https://nowhere.example/"])
        assert links == sorted(
            read.LinkRow(f"https://example.org/p/{i}", target)
            for i in range(N)
            if any(a["href"] == target for a in r.anchors(f"https://example.org/p/{i}", commit))
        )
        assert links and all(isinstance(link, read.LinkRow) for link in links)
        blocks = list(read.jsonld_rows(r, commit))
        assert len(blocks) == N and {b.types for b in blocks} == {'["WebPage"]'}
        errors = list(read.page_error_rows(r, commit))
        assert errors == [read.PageErrorRow("https://example.org/p/0", "mobile", "timeout")]
        loaded = list(read.page_resource_rows(r, commit))
        assert loaded[:2] == [
            read.PageResourceRow("https://example.org/p/0", "https://example.org/site.css"),
            read.PageResourceRow("https://example.org/p/0", "https://example.org/app.js"),
        ]
        assert len(loaded) == 2 * N
        assert read.analyzer_settings(r, commit) == []
