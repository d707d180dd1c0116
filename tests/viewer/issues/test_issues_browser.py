"""The Issues overview in real Chromium: the base picker changes the counts, a row leads to its URLs, axe-clean."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from archives import SITE

pytestmark = pytest.mark.browser

@pytest.fixture
def page(browser):
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    yield page
    context.close()
    assert problems == []


def cell(page, check: str, column: str) -> str:
    return page.locator(f'tr[data-check="{check}"] td[data-col="{column}"]').inner_text().strip()


def test_base_picker_changes_the_counts_and_a_row_leads_to_its_urls(issues_served, page):
    page.goto(issues_served + "/")
    assert page.get_by_role("heading", level=1).inner_text() == "Issues"
    assert page.get_by_role("heading", name="Links (2)").is_visible()
    assert (cell(page, "broken-link", "new"), cell(page, "broken-link", "persisting")) == ("2 2 regressed", "1")

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
    assert [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())] == [
        [f"{SITE}/", "New", f"{SITE}/new", "broken-link"],
        [f"{SITE}/", "Persisting", f"{SITE}/missing", "broken-link"],
        [f"{SITE}/", "Persisting", f"{SITE}/old", "broken-link"]]

    page.get_by_label("State", exact=True).select_option("new")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**state=new**")
    assert rows.count() == 1 and rows.first.locator("td").nth(2).inner_text() == f"{SITE}/new"
    assert parse_qs(urlsplit(page.url).query)["base"] == ["1"]

    rows.first.get_by_role("link").click()
    page.wait_for_url("**/page?**")
    assert parse_qs(urlsplit(page.url).query)["url"] == [f"{SITE}/"]
    # the page's issues are the tab right after the overview, with their count on it
    tabs = page.get_by_role("tab")
    assert tabs.nth(1).inner_text().startswith("Issues (")
    tabs.nth(1).click()
    assert page.locator("#t-issues section").first.get_by_role("heading", level=2).inner_text().startswith("Issues (")
    assert page.locator("#page-issues tbody tr[data-check=broken-link]").count() == 3


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_issues_views_have_no_serious_axe_violation(browser, issues_served, theme, axe_serious):
    paths = ("/", "/?show=all&commit=1", "/?base=1", "/issue?check=broken-link", "/issue?check=duplicate-id",
             "/violations?priority=high", f"/page?url={quote(SITE + '/', safe='')}")
    found = axe_serious(browser, issues_served, paths, theme)
    assert found == {}, json.dumps(found, indent=1)
