"""The SEO family views and page detail's indexability in real Chromium, over a real crawl of the five SEO
sections of test_server: exact counts, counts that lead to their URLs, axe-clean in both themes."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest
from seo_site import FAMILIES, SECTION_FINDINGS, counts

pytestmark = pytest.mark.browser

TITLES = {
    "canonicals": "Canonicals",
    "sitemaps": "Sitemaps",
    "hreflang": "Hreflang",
    "pagination": "Pagination",
    "directives": "Directives",
}
# One check per family whose URL list is followed from its count
FOLLOWED = {
    "canonicals": "canonical-target-not-indexable",
    "sitemaps": "sitemap-invalid",
    "hreflang": "hreflang-missing-return",
    "pagination": "pagination-sequence-error",
    "directives": "nofollow-page",
}


def _cells(page, check: str) -> dict[str, str]:
    row = page.locator(f'tr[data-check="{check}"]')
    return {
        column: row.locator(f'td[data-col="{column}"]').inner_text().strip()
        for column in ("urls", "findings", "new", "fixed", "persisting")
    }


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_view_is_in_the_menu_and_counts_exactly_what_the_crawl_found(seo_served, page, family):
    page.goto(seo_served + "/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name=TITLES[family], exact=True).click()
    page.wait_for_url(f"**/{family}")
    assert page.get_by_role("heading", level=1).inner_text() == TITLES[family]
    listed = page.locator("tr[data-check]")
    ids = [listed.nth(i).get_attribute("data-check") for i in range(listed.count())]
    assert sorted(ids) == sorted(FAMILIES[family])  # every check of the family, those finding nothing too
    for check in FAMILIES[family]:
        urls, findings = counts(check)
        # a first crawl: everything found is new
        assert _cells(page, check) == {
            "urls": str(urls),
            "findings": str(findings),
            "new": str(findings),
            "fixed": "0",
            "persisting": "0",
        }, check
        # priority, type and description are shown with the counts
        row = page.locator(f'tr[data-check="{check}"]')
        assert row.locator(".priority").count() == 1
        assert row.locator('td[data-col="type"]').inner_text().strip()
        assert row.locator('td[data-col="description"]').inner_text().strip()


@pytest.mark.parametrize("family", sorted(FOLLOWED))
def test_a_count_leads_to_the_urls_it_counts(site, seo_served, page, family):
    check = FOLLOWED[family]
    want = SECTION_FINDINGS[check]
    page.goto(f"{seo_served}/{family}")
    link = page.locator(f'tr[data-check="{check}"] td[data-col="urls"] a')
    assert link.inner_text() == str(len({url for url, _ in want}))
    # named by what it counts, described by the check's title
    assert link.get_attribute("aria-label") == f"{link.inner_text()} URLs"
    title = page.locator(f'tr[data-check="{check}"] th[scope="row"] a')
    assert link.get_attribute("aria-describedby") == title.get_attribute("id")
    link.click()
    page.wait_for_url("**/issue?**")
    assert parse_qs(urlsplit(page.url).query) == {"check": [check]}
    rows = page.locator("#issue-urls tbody tr")
    shown = {
        tuple(rows.nth(i).locator("td").nth(n).inner_text().replace(site, "") for n in (0, 2))
        for i in range(rows.count())
    }
    assert shown == want

    # the new count lists the same findings, new ones only
    page.go_back()
    page.locator(f'tr[data-check="{check}"] td[data-col="new"] a').click()
    page.wait_for_url("**state=new**")
    assert rows.count() == len(want)
    assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {"New"}


def test_the_sitemaps_view_lists_the_sitemaps_the_crawl_read(site, seo_served, page):
    page.goto(seo_served + "/sitemaps")
    table = page.get_by_role("table", name="Sitemaps read")
    rows = table.locator("tbody tr")
    found = [
        [cell.replace(site, "") for cell in rows.nth(i).locator("td").all_inner_texts()]
        for i in range(rows.count())
    ]
    index = "/sitemap-site/sitemap-index.xml"
    # reading order: the three given, then the index's children; URL, found through, index, kind, status, URLs
    assert [row[:6] for row in found] == [
        [index, "given", "—", "index", "200", "7"],
        ["/sitemap-site-root.xml", "given", "—", "urlset", "200", "2"],
        ["/hreflang-site/sitemap.xml", "given", "—", "urlset", "200", "4"],
        ["/sitemap-site/pages.xml", "index", index, "urlset", "200", "8"],
        ["/sitemap-site/more.xml.gz", "index", index, "urlset", "200", "2"],
        ["/sitemap-site/missing.xml", "index", index, "—", "404", "0"],
        ["/sitemap-site/broken.xml", "index", index, "urlset", "200", "1"],
        ["/sitemap-site/wrong-ns.xml", "index", index, "urlset", "200", "1"],
        ["/sitemap-site/big.xml", "index", index, "urlset", "200", "50,000"],
    ]
    problems = {row[0]: row[6] for row in found}
    assert problems["/sitemap-site/missing.xml"] == "unreachable: HTTP 404"
    assert problems["/sitemap-site/big.xml"] == "over-limit: more than 50,000 URLs (the rest was not read)"
    assert problems["/sitemap-site/pages.xml"] == "—"


def _indexability(page, base: str, url: str) -> tuple[str | None, str]:
    page.goto(f"{base}/page?url={quote(url, safe='')}")
    row = page.locator("#indexability")
    return row.get_attribute("data-state"), row.locator("td").inner_text().strip()


def test_page_detail_says_whether_the_page_can_be_indexed_and_why_not(site, seo_served, page):
    assert _indexability(page, seo_served, f"{site}/sitemap-site/a") == ("indexable", "Indexable")
    assert _indexability(page, seo_served, f"{site}/sitemap-site/noindex") == (
        "non_indexable",
        "Non-indexable: noindex (meta robots)",
    )
    assert _indexability(page, seo_served, f"{site}/directives-site/conflict") == (
        "non_indexable",
        "Non-indexable: noindex (X-Robots-Tag)",
    )
    assert _indexability(page, seo_served, f"{site}/sitemap-site/gone") == (
        "non_indexable",
        "Non-indexable: answers 404",
    )
    assert _indexability(page, seo_served, f"{site}/private/page") == (
        "non_indexable",
        "Non-indexable: blocked by robots.txt",
    )
    assert _indexability(page, seo_served, f"{site}/sitemap-site/canonicalised") == (
        "non_indexable",
        f"Non-indexable: canonicalised to {site}/sitemap-site/a",
    )
    # the canonical leads to its own page detail
    page.locator("#indexability").get_by_role("link", name=f"{site}/sitemap-site/a").click()
    page.wait_for_url("**/page?**")
    assert parse_qs(urlsplit(page.url).query)["url"] == [f"{site}/sitemap-site/a"]
    assert page.locator("#indexability").get_attribute("data-state") == "indexable"


def test_the_views_and_the_verdict_in_japanese(site, seo_served, page):
    page.goto(f"{seo_served}/lang/ja?next=/canonicals")
    page.wait_for_url("**/canonicals")
    assert page.get_by_role("heading", level=1).inner_text() == "正規URL"
    nav = page.get_by_role("navigation", name="メイン")
    assert [
        nav.get_by_role("link", name=name, exact=True).count() for name in ("サイトマップ", "ディレクティブ")
    ] == [1, 1]
    assert _indexability(page, seo_served, f"{site}/sitemap-site/old") == (
        "non_indexable",
        f"インデックス不可: リダイレクト先 {site}/sitemap-site/a",
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_views_have_no_serious_accessibility_violations(site, seo_served, browser, axe_serious, theme):
    paths = [f"/{family}" for family in sorted(FAMILIES)]
    paths += [f"/page?url={quote(site + '/sitemap-site/canonicalised', safe='')}"]
    assert axe_serious(browser, seo_served, paths, theme) == {}
