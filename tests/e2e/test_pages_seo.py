"""The SEO columns of the `pages` query, exact on a real crawl of /seo-site/ (test_server/routes/seo_site.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from archive.archive_testdata import downgrade_to_format5

from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import query_registry

S = "/seo-site/"
# url → (indexable, reason, depth, inlinks, unique inlinks, outlinks, unique outlinks, external outlinks)
LINKS: dict[str, tuple[Any, ...]] = {
    S: (True, None, 0, 7, 7, 11, 10, 1),  # A twice; the redirect is a link of its own
    f"{S}a": (True, None, 1, 3, 1, 2, 2, 0),  # twice from home, once through the redirect
    f"{S}b": (True, None, 1, 1, 1, 1, 1, 0),  # googlebot: noindex speaks for Googlebot alone
    f"{S}moved": (False, "redirects to {o}/seo-site/a", 1, 1, 1, 0, 0, 0),
    f"{S}meta-noindex": (False, "noindex", 1, 1, 1, 1, 1, 0),
    f"{S}header-noindex": (False, "noindex (X-Robots-Tag)", 1, 1, 1, 1, 1, 0),
    f"{S}canonicalised": (False, "canonicalised to {o}/seo-site/a", 1, 1, 1, 1, 1, 0),
    f"{S}missing": (False, "404", 1, 1, 1, 0, 0, 0),
    f"{S}broken": (False, "500", 1, 1, 1, 1, 1, 0),
    f"{S}file.pdf": (False, "not HTML (application/pdf)", 1, 1, 1, 0, 0, 0),
    f"{S}ja": (True, None, 1, 1, 1, 0, 0, 0),
    f"{S}deep": (True, None, 2, 1, 1, 1, 1, 0),
}
LINK_COLUMNS = (
    "indexable",
    "indexability_reason",
    "depth",
    "inlinks",
    "unique_inlinks",
    "outlinks",
    "unique_outlinks",
    "external_outlinks",
)


def _rows(archive: Path, **params: Any) -> dict[str, dict[str, Any]]:
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        found = run_query(registry, reader, "pages", {"every_type": True, "limit": 100, **params})
    return {row["url"]: row for row in found["items"]}


@pytest.fixture
def seo(site: str, crawl: Any) -> tuple[Path, str]:
    return crawl(f"{site}{S}", name="seo", ok=(2,), shared=True).archive, site  # 2: the external link fails


def test_indexability_depth_and_link_counts_of_every_url(seo: tuple[Path, str]) -> None:
    archive, site = seo
    rows = _rows(archive, url=f"{site}{S}")
    got = {url[len(site) :]: tuple(row[c] for c in LINK_COLUMNS) for url, row in rows.items()}
    want = {url: (i, r.format(o=site) if r else r, *rest) for url, (i, r, *rest) in LINKS.items()}
    assert got == want


def test_words_headings_title_widths_directives_and_headers(seo: tuple[Path, str]) -> None:
    archive, site = seo
    rows = _rows(archive)
    home, a, b = rows[f"{site}{S}"], rows[f"{site}{S}a"], rows[f"{site}{S}b"]
    # 2 + 2 + 5 words of text and 13 of the link texts
    assert (home["word_count"], home["h1"], home["h1_count"], home["h2"]) == (
        22,
        "Welcome home",
        1,
        "First section",
    )
    assert (a["word_count"], a["h1"], a["h1_count"], a["h2"]) == (10, "Alpha", 2, None)
    # Arial's W is 0.944 em and i 0.222 em: 3 of them at 20 px
    assert (home["title"], home["title_length"], home["title_px"]) == ("WWW", 3, 57)
    assert (a["title"], a["title_length"], a["title_px"]) == ("iii", 3, 13)
    assert (home["description_length"], home["description_px"]) == (0, 0)  # none: nothing to show
    assert home["last_modified"] == "Wed, 21 Oct 2026 07:28:00 GMT"
    assert (b["meta_robots"], b["x_robots_tag"]) == ("max-snippet:20, noarchive", "googlebot: noindex")
    assert b["robots_directives"] == {
        "*": {"index": True, "follow": True, "max-snippet": 20, "noarchive": True, "sources": ["meta"]},
        "googlebot": {
            "index": False,
            "follow": True,
            "max-snippet": 20,
            "noarchive": True,
            "sources": ["header"],
        },
    }
    assert rows[f"{site}{S}header-noindex"]["robots_directives"] == {
        "*": {"index": False, "follow": False, "sources": ["header"]}
    }
    assert rows[f"{site}{S}ja"]["word_count"] == 1  # 東京: one word, though no space delimits it


def test_each_request_is_timed_with_its_protocol(seo: tuple[Path, str]) -> None:
    archive, site = seo
    rows = _rows(archive)
    rendered = [rows[f"{site}{S}{name}"] for name in ("", "a", "deep", "ja")]
    for row in rendered:
        assert row["http_version"] == "http/1.1"  # Werkzeug's server
        assert 0 <= row["response_ms"] <= row["load_ms"]
    pdf = rows[f"{site}{S}file.pdf"]  # fetched, not rendered: no load event
    assert (pdf["http_version"], pdf["load_ms"]) == ("http/1.1", None) and pdf["response_ms"] >= 0


def test_filters_and_sorts_on_the_seo_columns(seo: tuple[Path, str]) -> None:
    archive, site = seo
    inside = {"url": f"{site}{S}"}
    blocked = _rows(archive, indexable=False, **inside)
    assert sorted(url[len(site) :] for url in blocked) == sorted(
        u for u, row in LINKS.items() if row[0] is False
    )
    assert list(_rows(archive, min_depth=2, **inside)) == [f"{site}{S}deep"]
    assert list(_rows(archive, min_word_count=10, max_word_count=10)) == [f"{site}{S}a"]
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        ranked = run_query(registry, reader, "pages", {"sort": "inlinks", "order": "desc", "limit": 2})
    assert [(r["url"][len(site) :], r["inlinks"]) for r in ranked["items"]] == [(S, 7), (f"{S}a", 3)]


def test_inlinks_are_the_inbound_links_page_detail_lists(seo: tuple[Path, str]) -> None:
    archive, site = seo
    registry = query_registry(make_plugin_manager())
    rows = _rows(archive, url=f"{site}{S}")
    with open_archive(archive) as reader:
        for url, row in rows.items():
            inbound = run_query(registry, reader, "page-detail", {"url": url})["inbound"]
            assert (row["unique_inlinks"], row["inlinks"]) == (
                inbound["total"],
                sum(item["anchors"] for item in inbound["items"]),
            ), url


def test_an_archive_of_format_5_reads_without_the_new_columns_and_is_upgraded_by_the_next_crawl(
    site: str, crawl: Any
) -> None:
    archive = crawl(f"{site}{S}", name="seo", ok=(2,), shared=True).archive
    downgrade_to_format5(archive)
    before = _rows(archive)
    home = before[f"{site}{S}"]
    assert (home["word_count"], home["response_ms"], home["http_version"]) == (None, None, None)
    assert (home["depth"], home["inlinks"], home["indexable"]) == (0, 7, True)  # computed, not stored
    assert (
        crawl(f"{site}{S}", name="seo", ok=(2,)).archive == archive
    )  # a second generation in the same archive
    with open_archive(archive) as reader:
        assert reader.format_version == 8
        head = reader.resolve(None)
        diff = reader.diff(head - 1, head)
    assert diff.get("modified", []) == []  # the word count joins the stored state without changing it
    after = _rows(archive)
    assert after[f"{site}{S}"]["word_count"] == 22 and after[f"{site}{S}"]["http_version"] == "http/1.1"


def test_page_too_deep_finds_the_pages_whose_depth_column_is_over_the_limit(site: str, crawl: Any) -> None:
    archive = crawl(f"{site}/directives-site/", name="directives", ok=(0, 2), shared=True).archive
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        issue = run_query(registry, reader, "issue-urls", {"check": "page-too-deep", "limit": 100})
        deep = run_query(registry, reader, "pages", {"min_depth": 5, "strict": True, "limit": 100})
    found = {(item["url"], item["detail"]) for item in issue["items"]}
    assert found == {(row["url"], str(row["depth"])) for row in deep["items"]}
    assert len(found) == 2  # deep-5 and deep-6: the one depth on both screens
