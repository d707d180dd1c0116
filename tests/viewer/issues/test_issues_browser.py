"""The Issues overview in real Chromium: the base picker changes the counts, a row leads to its URLs, axe-clean."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from archives import SITE

pytestmark = pytest.mark.browser


def cell(page, check: str, column: str) -> str:
    return page.locator(f'tr[data-check="{check}"] td[data-col="{column}"]').inner_text().strip()


def test_base_picker_changes_the_counts_and_a_row_leads_to_its_urls(issues_served, page):
    page.goto(issues_served + "/")
    assert page.get_by_role("heading", level=1).inner_text() == "Issues"
    # broken-link, isolated-page, no-internal-outlinks (the leaf pages link nowhere)
    assert page.get_by_role("heading", name="Links (3)").is_visible()
    assert (cell(page, "broken-link", "new"), cell(page, "broken-link", "persisting")) == (
        "2 2 regressed",
        "1",
    )

    page.get_by_label("Compare with (base)").select_option("1")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**base=1**")
    assert parse_qs(urlsplit(page.url).query)["base"] == ["1"]
    assert (cell(page, "broken-link", "new"), cell(page, "broken-link", "persisting")) == ("1", "2")
    assert cell(page, "axe/color-contrast", "new") == "—"  # axe never ran on commit 1
    page.reload()
    assert page.get_by_label("Compare with (base)").input_value() == "1"
    assert cell(page, "broken-link", "new") == "1"

    page.get_by_role("link", name="Internal links to pages that answer 4xx").click()
    page.wait_for_url("**/issue?**")
    assert parse_qs(urlsplit(page.url).query) == {"check": ["broken-link"], "base": ["1"]}
    assert page.get_by_role("heading", level=1).inner_text() == "Internal links to pages that answer 4xx"
    assert page.get_by_role("heading", name="How to fix").is_visible()
    rows = page.locator("#issue-urls tbody tr")
    # each link where it is: source page, target, anchor text, the target's status, line:col (not recorded here)
    assert page.locator("#issue-urls thead th").all_inner_texts() == [
        "Source page",
        "State",
        "Link target",
        "Anchor text",
        "Status",
        "Line:col",
    ]
    assert [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())] == [
        [f"{SITE}/", "New", f"{SITE}/new", "/new", "404", "—"],
        [f"{SITE}/", "Persisting", f"{SITE}/missing", "/missing", "404", "—"],
        [f"{SITE}/", "Persisting", f"{SITE}/old", "/old", "404", "—"],
    ]

    page.get_by_label("State", exact=True).select_option("new")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**state=new**")
    assert rows.count() == 1 and rows.first.locator("td").nth(2).inner_text() == f"{SITE}/new"
    assert parse_qs(urlsplit(page.url).query)["base"] == ["1"]

    rows.first.get_by_role("link").first.click()  # the source page (the target is a link too)
    page.wait_for_url("**/page?**")
    assert parse_qs(urlsplit(page.url).query)["url"] == [f"{SITE}/"]
    # the page's issues are the tab right after the overview, with their count on it
    tabs = page.get_by_role("tab")
    assert tabs.nth(1).inner_text().startswith("Issues (")
    tabs.nth(1).click()
    assert (
        page.locator("#t-issues section")
        .first.get_by_role("heading", level=2)
        .inner_text()
        .startswith("Issues (")
    )
    assert page.locator("#page-issues tbody tr[data-check=broken-link]").count() == 3


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_issues_views_have_no_serious_axe_violation(browser, issues_served, theme, axe_serious):
    paths = (
        "/",
        "/?show=all&commit=1",
        "/?base=1",
        "/issue?check=broken-link",
        "/issue?check=duplicate-id",
        "/violations?priority=high",
        f"/page?url={quote(SITE + '/', safe='')}",
    )
    found = axe_serious(browser, issues_served, paths, theme)
    assert found == {}, json.dumps(found, indent=1)


@pytest.fixture(scope="module")
def defects_served(tmp_path_factory, viewer_over, serving):
    from defects_archive import build_defects_archive

    archive = build_defects_archive(tmp_path_factory.mktemp("viewer-defects") / "defects.nitpicker")
    with viewer_over(archive) as app, serving(app) as url:
        yield url


def test_one_image_three_sources_is_one_row_on_the_issue_page_and_in_the_pages_tab(defects_served, page):
    page.goto(defects_served + "/issue?check=image-alt")
    # an image is an element of the page: its line:col column (empty: this archive's HTML has no <img>)
    headers = ["Page", "State", "Detail", "Line:col", "In HTML", "Found by"]
    assert page.locator("#issue-urls thead th").all_inner_texts() == headers
    rows = page.locator("#issue-urls tbody tr")
    assert rows.count() == 1
    cells = rows.first.locator("td")
    assert cells.nth(2).inner_text() == f"{SITE}/img/no-alt.png"
    assert cells.nth(3).inner_text().strip() in ("", "—")
    assert cells.nth(5).locator("li").all_inner_texts() == [
        "image-alt-missing",
        "axe/image-alt",
        "markup/img-alt-missing",
    ]
    assert (
        "Found by: image-alt-missing, axe/image-alt, markup/img-alt-missing"
        in page.locator("#issue-facts").inner_text()
    )

    page.goto(defects_served + "/page?url=" + quote(SITE + "/", safe=""))
    tabs = page.get_by_role("tab")
    tabs.nth(1).click()
    issues = page.locator("#page-issues tbody tr")
    # the tab counts defects: the one image, the one missing language, each once whatever found them
    assert tabs.nth(1).inner_text() == f"Issues ({issues.count()})"
    assert page.locator("#page-issues tbody tr[data-check=image-alt]").count() == 1
    image = page.locator("#page-issues tbody tr[data-check=image-alt] td")
    assert image.nth(4).inner_text() == "image-alt-missing, axe/image-alt, markup/img-alt-missing"
    assert page.locator("#page-issues tbody tr[data-check=html-lang]").count() == 1
