"""The crawl checks read each page's stored HTML in one pass for every reader: a reader that fails fails its own
checks only, and each reader sees every content page with stored HTML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from nitpicker_checks import common

from nitpicker_core import Finding, derive_html_facts, read
from nitpicker_core.archive import open_archive
from nitpicker_core.check_context import CheckContext
from nitpicker_core.indexing import evaluate
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry
from nitpicker_core.registries import check_registry
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


# Pages whose HTML the canonical and nofollow checks read: canonicals in and out of <head>, in the HTML as sent
# only, links with rel=nofollow (relative, against <base>, external, ugc alone)
FACT_PAGES = {
    "/": (
        '<html><head><link rel="canonical" href="/a"></head><body><a rel="nofollow" href="/b">b</a>'
        '<a rel="nofollow ugc" href="https://elsewhere.test/">x</a><a rel="ugc" href="/c">c</a></body></html>',
        None,
    ),
    "/a": (
        '<html><head><title>A</title></head><body><p>text</p><link rel="Canonical" href="/a"></body></html>',
        '<html><head><link rel="canonical" href="/a"></head><body><link rel="canonical" href="/x"></body></html>',
    ),
    "/b": (
        '<html><head><base href="/sub/"></head><body><a rel="NoFollow" href="page">p</a>'
        '<area rel="nofollow" href="/a"></body></html>',
        '<html><head></head><body><a rel="nofollow" href="/">home</a></body></html>',
    ),
    "/c": ("<html><head><title>C</title></head><body>plain</body></html>", ""),
}


def _facts_archive(path: Path, stored: bool, facts_of: dict[str, str | None] | None = None) -> None:
    with archive_builder(path, roots=[SITE + "/"]) as build:
        for suffix, (html, source) in FACT_PAGES.items():
            url = SITE + suffix
            facts = derive_html_facts(url, html, source) if stored else None
            if facts_of and suffix in facts_of:
                facts = facts_of[suffix]
            build.page(page(url, html, source=source, links=["/a", "/b", "/c"], html_facts=facts))


def _findings(path: Path) -> dict[str, set[Finding]]:
    pm = make_plugin_manager()
    with open_archive(path) as reader:
        ctx = CheckContext(reader, reader.resolve(), query_registry(pm))
        return {c.id: evaluate(c, ctx)[0] for c in check_registry(pm) if not c.analyzer}


def test_the_facts_stored_by_the_crawl_find_what_the_stored_html_finds(tmp_path: Path) -> None:
    # An archive whose pages carry the facts (a crawl of format 7) and one without (written before): the
    # same findings, the first without reading any page's HTML
    _facts_archive(tmp_path / "stored.nitpicker", stored=True)
    _facts_archive(tmp_path / "read.nitpicker", stored=False)
    with open_archive(tmp_path / "stored.nitpicker") as reader:
        stored = dict(
            reader.tuples("SELECT u.url, ps.html_facts FROM page_state ps JOIN url u ON u.id = ps.url_id")
        )
    # an empty HTML as sent: nothing to compare with the rendered page either
    assert (
        stored[SITE + "/c"] == '{"canonicals":[[],[]],"nofollow_links":[],"canonicals_sent":null,"js":null}'
    )
    with_facts, from_html = _findings(tmp_path / "stored.nitpicker"), _findings(tmp_path / "read.nitpicker")
    assert with_facts == from_html
    assert with_facts["nofollow-internal-link"] == {
        Finding(SITE + "/", SITE + "/b"),
        Finding(SITE + "/b", SITE + "/sub/page"),
        Finding(SITE + "/b", SITE + "/a"),
    }
    assert with_facts["canonical-outside-head"]


def test_the_stored_facts_stand_for_the_html_page_by_page(tmp_path: Path) -> None:
    # Facts that say something the HTML does not are what the checks report (so they are read), and a page
    # stored without them is still read from its HTML
    path = tmp_path / "mixed.nitpicker"
    told = '{"canonicals":[[],[]],"nofollow_links":["https://facts.test/c"]}'
    _facts_archive(path, stored=True, facts_of={"/": told, "/b": None})
    found = _findings(path)["nofollow-internal-link"]
    assert found == {
        Finding(SITE + "/", SITE + "/c"),
        Finding(SITE + "/b", SITE + "/sub/page"),
        Finding(SITE + "/b", SITE + "/a"),
    }


# Pages for title-missing and description-missing: each field present, empty, missing, or in a body's SVG only
ABSENCE_PAGES = {
    "/full": '<html><head><title>Full</title><meta name="description" content="About"></head><body></body></html>',
    "/empty": '<html><head><title> </title><meta name="Description" content=""></head><body></body></html>',
    "/bare": "<html><head></head><body><svg><title>icon</title></svg></body></html>",
}


def _metadata(html: str) -> dict[str, str]:
    """The title and description as the scrape stores them ("" for a missing or an empty one)."""
    return {
        "title": "Full" if "<title>Full" in html else "",
        "description": "About" if 'content="About"' in html else "",
    }


def test_the_crawl_stores_whether_an_empty_title_or_description_is_missing_only_where_one_is_empty() -> None:
    facts = {
        suffix: json.loads(derive_html_facts(SITE + suffix, html, html, metadata=_metadata(html)) or "{}")
        for suffix, html in ABSENCE_PAGES.items()
    }
    assert "absent" not in facts["/full"]  # a page with both (most pages) costs nothing more
    assert facts["/empty"]["absent"] == {"title": "empty", "description": "empty"}
    assert facts["/bare"]["absent"] == {"title": "missing", "description": "missing"}
    # without the page's metadata (a caller of before), nothing is said
    assert "absent" not in json.loads(derive_html_facts(SITE + "/bare", ABSENCE_PAGES["/bare"], None) or "{}")


def _absence_archive(path: Path, facts_of: dict[str, str | None]) -> None:
    with archive_builder(path, roots=[SITE + "/"]) as build:
        for suffix, html in ABSENCE_PAGES.items():
            url, metadata = SITE + suffix, _metadata(html)
            facts = (
                derive_html_facts(url, html, None, metadata=metadata)
                if suffix not in facts_of
                else facts_of[suffix]
            )
            build.page(page(url, html, metadata=metadata, html_facts=facts))


def _absence_findings(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, set[Finding]], set[str]]:
    """The two checks' findings, and the URLs whose HTML they read."""
    asked: set[str] = set()
    page_html = read.page_html

    def reading(reader: Any, commit: int, sent: bool = False, only: Any = None) -> Any:
        asked.update(only or ())
        return page_html(reader, commit, sent, only=only)

    pm = make_plugin_manager()
    with open_archive(path) as reader, monkeypatch.context() as patch:
        patch.setattr(read, "page_html", reading)
        ctx = CheckContext(reader, reader.resolve(), query_registry(pm))
        checks = [c for c in check_registry(pm) if c.id in ("title-missing", "description-missing")]
        return {c.id: evaluate(c, ctx)[0] for c in checks}, asked


def test_title_and_description_missing_read_what_the_crawl_stored_instead_of_the_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored, read_too = tmp_path / "stored.nitpicker", tmp_path / "read.nitpicker"
    _absence_archive(stored, {})
    _absence_archive(read_too, {suffix: None for suffix in ABSENCE_PAGES})  # stored before the facts were
    with_facts, asked = _absence_findings(stored, monkeypatch)
    from_html, asked_before = _absence_findings(read_too, monkeypatch)
    assert (
        with_facts
        == from_html
        == {
            "title-missing": {Finding(SITE + "/empty", "empty"), Finding(SITE + "/bare", "missing")},
            "description-missing": {Finding(SITE + "/empty", "empty"), Finding(SITE + "/bare", "missing")},
        }
    )
    assert asked == set() and asked_before == {SITE + "/empty", SITE + "/bare"}


def test_a_page_stored_without_the_absence_fact_is_read_from_its_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a fact that says what the HTML does not is what the checks report (so it is read); a page whose facts
    # lack it (the canonical ones only) is read from its HTML
    path = tmp_path / "mixed.nitpicker"
    told = '{"canonicals":[[],[]],"nofollow_links":[],"absent":{"title":"empty","description":"empty"}}'
    _absence_archive(path, {"/bare": told, "/empty": '{"canonicals":[[],[]],"nofollow_links":[]}'})
    found, asked = _absence_findings(path, monkeypatch)
    assert found["title-missing"] == {Finding(SITE + "/empty", "empty"), Finding(SITE + "/bare", "empty")}
    assert asked == {SITE + "/empty"}
