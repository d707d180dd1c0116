"""What format 2 keeps: the HTML the server sent, hrefs as written with their position, and headings."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from archive_testdata import downgrade_to_format1, page

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.models import FORMAT_VERSION
from nitpicker_core.archive.prepare import placeholder, prepare_page
from nitpicker_core.records import Anchor, Heading, ScrapeResult

URL = "https://example.org/guide/"
SOURCE = '<html><body>\n<h1>Guide</h1>\n  <a href="whatsnew/changelog.html#id1">log</a>\n</body></html>'


def rich(url: str = URL, *, source: str | None = SOURCE, variant: str = "") -> ScrapeResult:
    """A rendered page with what format 2 adds: its sent HTML, an anchor's raw href and position, headings."""
    return ScrapeResult(
        url=url,
        status=200,
        content_type="text/html",
        scraped=True,
        html=f"<html><head></head><body><h1>Guide</h1><a>log</a>{variant}<a>made by script</a></body></html>",
        source=source,
        anchors=[
            Anchor(
                "https://example.org/guide/whatsnew/changelog.html",
                "log",
                "id1",
                raw_href="whatsnew/changelog.html#id1",
                line=3,
                col=3,
            ),
            Anchor("https://example.org/x", "made by script", raw_href="/x"),
        ],
        headings=[Heading(1, "Guide"), Heading(2, "Install"), Heading(2, "Use")],
        images=[],
    )


def write(target: Path, *pages: ScrapeResult) -> None:
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, list(pages))
    w.finish_commit(c)
    w.write()
    w.close()


def test_sent_html_is_kept_beside_the_rendered_one(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    write(target, rich(), rich("https://example.org/other/", variant="!"))
    with open_archive(target) as r:
        row = r.page(URL)
        assert row["source_sha256"] == hashlib.sha256(SOURCE.encode()).hexdigest() != row["html_sha256"]
        assert r.source(URL) == SOURCE and r.html_by_sha256(row["source_sha256"]) == SOURCE
        assert r.html(URL).startswith("<html><head></head>")
        # two pages sent the same HTML: one blob for it, one per rendered DOM
        assert r.execute("SELECT COUNT(*) FROM blob")[0][0] == 3


def test_sent_html_equal_to_rendered_is_one_blob(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    same = rich()
    same.source = same.html
    write(target, same)
    with open_archive(target) as r:
        row = r.page(URL)
        assert row["source_sha256"] == row["html_sha256"]
        assert r.execute("SELECT COUNT(*) FROM blob")[0][0] == 1


def test_anchor_keeps_href_as_written_and_position(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    write(target, rich())
    with open_archive(target) as r:
        assert r.anchors(URL) == [
            {
                "ordinal": 0,
                "href": "https://example.org/guide/whatsnew/changelog.html",
                "fragment": "id1",
                "text": "log",
                "raw_href": "whatsnew/changelog.html#id1",
                "line": 3,
                "col": 3,
            },
            {
                "ordinal": 1,
                "href": "https://example.org/x",
                "fragment": "",
                "text": "made by script",
                "raw_href": "/x",
                "line": None,
                "col": None,
            },
        ]


def test_headings_in_order(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    write(target, rich())
    with open_archive(target) as r:
        assert r.has_headings
        assert r.headings(URL) == [
            {"ordinal": 0, "level": 1, "text": "Guide"},
            {"ordinal": 1, "level": 2, "text": "Install"},
            {"ordinal": 2, "level": 2, "text": "Use"},
        ]


def test_degraded_scrape_keeps_headings_and_raw_hrefs(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_page(c, rich())
    w.put_page(c, ScrapeResult(url=URL, status=500))  # anchors and headings None: the page was not read
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(target) as r:
        assert [h["text"] for h in r.headings(URL)] == ["Guide", "Install", "Use"]
        assert (
            r.anchors(URL)[0]["raw_href"] == "whatsnew/changelog.html#id1" and r.anchors(URL)[0]["line"] == 3
        )


def test_a_page_without_the_new_data_hashes_as_format_1_did() -> None:
    # Hashes computed with format 1's code for the same records (checked once against it): unchanged pages keep
    # their state. Only sub-resources listed out of canonical order hash anew (state hash version 2: a set).
    sorted_resources = page(3, 20)
    sorted_resources.resources.sort()
    assert prepare_page(sorted_resources).hash == (
        "6da00cf6a8f96d18b54177c50b313d7a247e30b2000fff542a4769b64f9c5c09"
    )
    assert placeholder("https://external.example/", True).hash == (
        "6747a8bbac1c38ea0d9642be839cfbb0120d6885af2b86a806934e90c20727c9"
    )


def test_state_hash_follows_the_new_data_and_only_it() -> None:
    base = prepare_page(rich()).hash
    assert prepare_page(rich()).hash == base  # identical content, identical hash (any crawl)
    assert prepare_page(rich(source=SOURCE + " ")).hash != base
    other = rich()
    other.headings = [Heading(1, "Guide")]
    assert prepare_page(other).hash != base
    moved = rich()
    moved.anchors[0].line = 4
    assert prepare_page(moved).hash != base


def test_gc_keeps_sent_html_blobs(tmp_path: Path) -> None:
    w = ArchiveWriter.open(tmp_path / "site.nitpicker")
    c = w.begin_commit()
    w.put_page(c, rich())
    assert w.gc()["blobs"] == 0
    w.finish_commit(c)
    w.close(remove_stub=True)


@pytest.fixture
def format1(tmp_path: Path) -> Path:
    target = tmp_path / "old.nitpicker"
    write(target, page(1, 3), page(2, 3))
    downgrade_to_format1(target)
    return target


def test_reader_tolerates_format_1(format1: Path) -> None:
    with open_archive(format1) as r:
        assert r.format_version == 1 and not r.has_headings and not r.has_column("anchor", "raw_href")
        url = "https://example.org/p/1"
        assert r.page(url)["source_sha256"] is None and r.source(url) is None
        assert r.headings(url) == []
        first = r.anchors(url)[0]
        assert first["href"] == "https://example.org/p/2" and (
            first["raw_href"],
            first["line"],
            first["col"],
        ) == (None, None, None)


def test_writer_upgrades_format_1_on_open(format1: Path) -> None:
    w = ArchiveWriter.open(format1)
    assert w.info()["format_version"] == FORMAT_VERSION
    c = w.begin_commit()
    w.put_pages(c, [page(1, 3), page(2, 3), rich()])
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(format1) as r:
        assert r.format_version == FORMAT_VERSION and r.has_headings
        assert r.source(URL) == SOURCE and r.anchors(URL)[0]["raw_href"] == "whatsnew/changelog.html#id1"
        # pages unchanged since the format-1 crawl keep their states: nothing shows as modified
        assert r.diff(1, 2)["modified"] == []
        assert r.headings("https://example.org/p/1") == []
        # pages crawled before headings were kept are neither missing an h1 nor fine: they are counted apart
        from nitpicker_core import query_registry, run_query
        from nitpicker_core.plugins import make_plugin_manager

        found = run_query(query_registry(make_plugin_manager()), r, "h1-problems", {}, commit=2)
        assert found["items"] == [] and found["not_recorded"] == 2


def test_headings_queries_read_format_2_and_refuse_format_1(tmp_path: Path, format1: Path) -> None:
    from nitpicker_core import UsageError, query_registry, run_query
    from nitpicker_core.plugins import make_plugin_manager

    registry = query_registry(make_plugin_manager())
    target = tmp_path / "new.nitpicker"
    two = rich("https://example.org/two/")
    two.headings = [Heading(1, "A"), Heading(2, "b"), Heading(1, "C")]
    none = rich("https://example.org/none/")
    none.headings = [Heading(2, "only")]
    write(target, rich(), two, none)
    with open_archive(target) as r:
        assert [h["text"] for h in run_query(registry, r, "headings", {"url": URL})["items"]] == [
            "Guide",
            "Install",
            "Use",
        ]
        assert run_query(registry, r, "headings", {"level": 1})["total"] == 3
        found = run_query(registry, r, "h1-problems", {})
        assert [(p["url"], p["problem"], p["h1_count"], p["h1"]) for p in found["items"]] == [
            ("https://example.org/none/", "missing", 0, []),
            ("https://example.org/two/", "multiple", 2, ["A", "C"]),
        ]
        assert found["not_recorded"] == 0
    with open_archive(format1) as r, pytest.raises(UsageError, match="before headings were kept"):
        run_query(registry, r, "h1-problems", {})
