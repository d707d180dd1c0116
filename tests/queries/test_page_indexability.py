"""`page-detail`'s `indexability`: whether search engines may index the URL and why not, by the checks' rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from archives import SITE, build_archive

from nitpicker_core import ScrapeResult
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query


def _page(path: str, status: int | None = 200, **fields) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK" if status else "",
        content_type="text/html" if status else None,
        html="<html><head><title>t</title></head><body><p>x</p></body></html>" if status else None,
        **fields,
    )


# URL path → the indexability page-detail gives it
EXPECTED = {
    "/self": {"indexable": True, "reason": None},  # its canonical is itself
    "/plain": {"indexable": True, "reason": None},  # no canonical, nothing against
    "/meta-noindex": {"indexable": False, "reason": "noindex"},
    "/header-noindex": {"indexable": False, "reason": "noindex (X-Robots-Tag)"},
    "/other-bot": {"indexable": True, "reason": None},  # X-Robots-Tag for one named bot only
    "/copy": {"indexable": False, "reason": f"canonicalised to {SITE}/self"},
    "/gone": {"indexable": False, "reason": "404"},
    "/broken": {"indexable": False, "reason": "500"},
    "/old": {"indexable": False, "reason": f"redirects to {SITE}/new"},
    "/new": {"indexable": True, "reason": None},
    "/down": {"indexable": False, "reason": "failed: timeout"},
    "/private": {"indexable": False, "reason": "blocked by robots.txt"},
    # the pages list's rule on top of the checks': a document that is not HTML is no page to index
    "/report.pdf": {"indexable": False, "reason": "not HTML (application/pdf)"},
    # not judged: a crawl rule kept it from being requested, or it never was
    "/excluded": {"indexable": None, "reason": None},
    "/later": {"indexable": None, "reason": None},
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = [
        _page("/self", metadata={"canonical": SITE + "/self"}),
        _page("/plain"),
        _page("/meta-noindex", metadata={"robots": "noindex", "noindex": True}),
        # header names as the crawler stores them (lower case)
        _page("/header-noindex", headers={"x-robots-tag": "noindex, nofollow"}),
        _page("/other-bot", headers={"x-robots-tag": "otherbot: noindex"}),
        ScrapeResult(url=SITE + "/report.pdf", status=200, content_type="application/pdf"),
        _page("/copy", metadata={"canonical": SITE + "/self"}),
        _page("/gone", 404),
        _page("/broken", 500),
        _page("/old", redirect_chain=[SITE + "/new"]),
        _page("/new"),
        _page("/down", None, extra={"error_kind": "timeout"}),
        _page("/private", None, is_skipped=True, skip_reason="blocked by robots.txt"),
        _page("/excluded", None, is_skipped=True, skip_reason="excluded by --exclude"),
        _page("/later", None, scraped=False),
        ScrapeResult(url="https://elsewhere.test/", status=200, content_type="text/html", is_external=True),
    ]
    return build_archive(tmp_path_factory.mktemp("indexability") / "site.nitpicker", pages)


def _indexability(archive: Path, url: str) -> dict:
    pm = make_plugin_manager()
    with open_archive(archive) as reader:
        return run_query(query_registry(pm), reader, "page-detail", {"url": url}, None)["indexability"]


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_each_url_says_whether_it_can_be_indexed_and_why_not(archive: Path, path: str) -> None:
    assert _indexability(archive, SITE + path) == EXPECTED[path]


def test_an_external_url_is_not_judged(archive: Path) -> None:
    # nitpicker checks an external URL's answer but never reads its directives: no verdict on it
    assert _indexability(archive, "https://elsewhere.test/") == {"indexable": None, "reason": None}


def test_page_detail_says_what_the_pages_list_says(archive: Path) -> None:
    pm = make_plugin_manager()
    with open_archive(archive) as reader:
        rows = run_query(query_registry(pm), reader, "pages", {"every_type": "true", "limit": "100"}, None)
    listed = {
        row["url"]: {"indexable": row["indexable"], "reason": row["indexability_reason"]}
        for row in rows["items"]
    }
    assert {url: _indexability(archive, url) for url in listed} == listed
    assert set(listed) >= {SITE + path for path in EXPECTED}


def test_the_reason_is_the_one_the_checks_give(archive: Path) -> None:
    """One rule everywhere: for HTML pages, page detail says what `sitemaps.indexability` (the rule of every
    SEO family's checks) says."""
    from nitpicker_checks.sitemaps import indexability

    from nitpicker_core import CheckContext

    pm = make_plugin_manager()
    html = {path: want for path, want in EXPECTED.items() if not path.endswith(".pdf")}
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(None), query_registry(pm))
        judged = {path: indexability(ctx, SITE + path) for path in html}
    assert judged == {path: want["reason"] for path, want in html.items()}
