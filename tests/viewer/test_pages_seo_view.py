"""The pages table's SEO column set on a real crawl of /seo-site/, driven in a real browser, checked with axe."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support import run_cli

S = "/seo-site/"


@pytest.fixture(scope="module")
def app(site: str, tmp_path_factory: pytest.TempPathFactory, viewer_over: Any) -> Iterator[Any]:
    workdir = tmp_path_factory.mktemp("seo-view")
    archive = workdir / "seo.nitpicker"
    result = run_cli("crawl", "-o", str(archive), "--parallels", "2", f"{site}{S}", cwd=workdir, timeout=300)
    assert result.returncode == 2, result.stderr  # the one external link fails
    with viewer_over(archive) as viewer:
        yield viewer


def _table(page: Any) -> list[dict[str, str]]:
    heads = [h.strip().rstrip("▲▼") for h in page.locator("table#pages thead th").all_inner_texts()]
    rows = page.locator("table#pages tbody tr")
    return [
        dict(zip(heads, (c.strip() for c in rows.nth(i).locator("td").all_inner_texts()), strict=True))
        for i in range(rows.count())
    ]


def _path(row: dict[str, str], site: str) -> str:
    return row["URL"].removeprefix(site)


@pytest.mark.browser
def test_the_seo_set_shows_sorts_and_filters_what_search_engines_see(
    app: Any, serving: Any, browser: Any, site: str
) -> None:
    with serving(app) as base:
        page = browser.new_page(locale="en-US")
        try:
            page.goto(f"{base}/pages")
            page.get_by_role("link", name="SEO", exact=True).click()
            page.wait_for_url("**/pages?set=seo*")
            rows = {_path(r, site): r for r in _table(page)}
            home, alpha = rows[S], rows[f"{S}a"]
            assert (home["Indexability"], home["Depth"], home["Inlinks"], home["Words"]) == (
                "Indexable",
                "0",
                "7",
                "22",
            )
            assert (alpha["First H1"], alpha["H1s"], alpha["Title px"], alpha["Unique inlinks"]) == (
                "Alpha",
                "2",
                "13",
                "1",
            )
            assert rows[f"{S}meta-noindex"]["Indexability"] == "Non-indexable"
            assert rows[f"{S}meta-noindex"]["Why not indexable"] == "noindex"

            page.get_by_label("Indexability", exact=True).select_option("false")
            page.get_by_role("button", name="Apply").click()
            page.wait_for_url("**indexable=false*")
            blocked = {_path(r, site): r["Why not indexable"] for r in _table(page)}
            assert blocked == {
                f"{S}broken": "500",
                f"{S}canonicalised": f"canonicalised to {site}{S}a",
                f"{S}header-noindex": "noindex (X-Robots-Tag)",
                f"{S}meta-noindex": "noindex",
                f"{S}missing": "404",
            }

            page.goto(f"{base}/pages?set=seo")
            page.get_by_label("Depth at least").fill("2")
            page.get_by_role("button", name="Apply").click()
            page.wait_for_url("**min_depth=2*")
            assert [_path(r, site) for r in _table(page)] == [f"{S}deep"]

            page.goto(f"{base}/pages?set=seo&sort=inlinks&order=desc")
            assert [_path(r, site) for r in _table(page)][:2] == [S, f"{S}a"]
        finally:
            page.close()


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_seo_set_has_no_serious_axe_findings(
    app: Any, serving: Any, browser: Any, axe_serious: Any, theme: str
) -> None:
    paths = [
        "/pages?set=seo",
        "/pages?set=seo&indexable=false&min_depth=1",
        "/pages?set=content&min_main_words=1",  # the duplicate checks' columns (docs/duplicates.md)
    ]
    with serving(app) as base:
        assert axe_serious(browser, base, paths, theme) == {}


def test_the_standard_set_stays_the_default(app: Any) -> None:
    html = app.test_client().get("/pages").get_data(as_text=True)
    assert 'aria-current="page">Standard</a>' in html and "Why not indexable" not in html
