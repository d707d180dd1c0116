"""The sitemap checks: exact findings on a real crawl of /sitemap-site/ (an index, a gzipped child, an orphan)."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings

from nitpicker_core.archive import open_archive

SITEMAP_CHECKS = (
    "sitemap-unreachable",
    "sitemap-invalid",
    "sitemap-over-limit",
    "sitemap-non-indexable-url",
    "sitemap-orphan",
    "page-missing-from-sitemap",
    "sitemap-url-in-several",
    "sitemap-url-out-of-scope",
)
INDEX = "/sitemap-site/sitemap-index.xml"
# What each sitemap check finds on /sitemap-site/ (the site's origin written as "")
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "sitemap-unreachable": {("/sitemap-site/missing.xml", "HTTP 404")},
    "sitemap-invalid": {
        ("/sitemap-site/broken.xml", "XML syntax error: Premature end of data in tag url"),
        (INDEX, f"index loop: lists {INDEX}, itself or an index above it"),
        (
            "/sitemap-site/wrong-ns.xml",
            "wrong namespace: http://www.google.com/schemas/sitemap/0.84 "
            "(expected http://www.sitemaps.org/schemas/sitemap/0.9)",
        ),
    },
    "sitemap-over-limit": {("/sitemap-site/big.xml", "more than 50,000 URLs (the rest was not read)")},
    "sitemap-non-indexable-url": {
        ("/private/page", "blocked by robots.txt"),
        ("/sitemap-site/canonicalised", "canonicalised to /sitemap-site/a"),
        ("/sitemap-site/gone", "404"),
        ("/sitemap-site/noindex", "noindex"),
        ("/sitemap-site/old", "redirects to /sitemap-site/a"),
    },
    "sitemap-orphan": {("/sitemap-site/orphan", "")},  # listed in the gzipped child only
    "page-missing-from-sitemap": {("/sitemap-site/unlisted", "")},
    "sitemap-url-in-several": {
        (
            "/sitemap-site/a",
            "/sitemap-site-root.xml | /sitemap-site/big.xml | /sitemap-site/pages.xml | /sitemap-site/wrong-ns.xml",
        ),
        ("/sitemap-site/b", "/sitemap-site/broken.xml | /sitemap-site/more.xml.gz"),
    },
    "sitemap-url-out-of-scope": {
        ("/outside/page", "/sitemap-site/pages.xml"),
        ("http://example.invalid/page", "/sitemap-site/pages.xml"),
    },
}


def _args(site: str) -> list[str]:
    return [
        "--sitemap",
        f"{site}{INDEX}",
        "--sitemap",
        f"{site}/sitemap-site-root.xml",
        "--scope",
        f"{site}/private/",
        f"{site}/sitemap-site/",
    ]


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("sitemap-crawl")
    _crawl(workdir, "-o", str(workdir / "sitemaps.nitpicker"), *_args(site))
    return workdir / "sitemaps.nitpicker"


@pytest.fixture(scope="module")
def crawled(site: str, archive: Path) -> dict[str, set[tuple[str, str]]]:
    return _findings(archive, site)


@pytest.mark.parametrize("check_id", SITEMAP_CHECKS)
def test_each_sitemap_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]


def test_the_sitemaps_are_stored_with_the_commit_and_seed_the_crawl(site: str, archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve(None)
        rows = reader.execute(
            "SELECT u.url, s.source, s.kind, s.status, s.entries FROM sitemap s JOIN url u ON u.id = s.url_id "
            "WHERE s.commit_id = ? ORDER BY s.id",
            [commit],
        )
        stored = {r[0].replace(site, ""): tuple(r[1:]) for r in rows}
        pages = {p["url"].replace(site, "") for p in reader.pages(commit)}
        options = next(c for c in reader.commits() if c["id"] == commit)["options"]
    assert stored[INDEX] == ("given", "index", 200, 7)
    assert stored["/sitemap-site/more.xml.gz"] == ("index", "urlset", 200, 2)  # gzipped, listed by the index
    assert stored["/sitemap-site/missing.xml"] == ("index", "", 404, 0)
    assert stored["/sitemap-site/big.xml"][3] == 50_000
    # the orphan and the unlinked 404 are crawled because a sitemap lists them; out-of-scope URLs are not
    assert {"/sitemap-site/orphan", "/sitemap-site/gone", "/private/page"} <= pages
    assert "/outside/page" not in pages and "http://example.invalid/page" not in pages
    assert options["sitemaps"] == [f"{site}{INDEX}", f"{site}/sitemap-site-root.xml"]


def test_no_sitemap_seed_reads_the_sitemaps_without_crawling_their_urls(site: str, tmp_path: Path) -> None:
    _crawl(tmp_path, "--no-sitemap-seed", "-o", str(tmp_path / "s.nitpicker"), *_args(site))
    found = _findings(tmp_path / "s.nitpicker", site)
    with open_archive(tmp_path / "s.nitpicker") as reader:
        pages = {p["url"].replace(site, "") for p in reader.pages(reader.resolve(None))}
    assert "/sitemap-site/orphan" not in pages and "/sitemap-site/gone" not in pages
    assert found["sitemap-unreachable"] == EXPECTED["sitemap-unreachable"]
    assert found["sitemap-orphan"] == set()  # an orphan is known only once crawled


def test_the_sitemaps_query_lists_each_sitemap_with_its_problems(site: str, archive: Path) -> None:
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.query import run_query
    from nitpicker_core.registries import query_registry

    with open_archive(archive) as reader:
        result = run_query(
            query_registry(make_plugin_manager()), reader, "sitemaps", {}, reader.resolve(None)
        )
    items = {item["url"].replace(site, ""): item for item in result["items"]}
    assert result["total"] == 8 and list(items)[:2] == [INDEX, "/sitemap-site-root.xml"]
    assert items["/sitemap-site/missing.xml"]["problems"] == [{"kind": "unreachable", "detail": "HTTP 404"}]
    assert items["/sitemap-site/more.xml.gz"]["parent"] == f"{site}{INDEX}"
