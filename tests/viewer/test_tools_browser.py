"""Export, search and the status-class filter in real Chromium, and axe-core on the new UI in both themes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from archives import SITE
from export_site import build_export_site

pytestmark = pytest.mark.browser
# the axe-core build the viewer's other axe tests inject (importing it from conftest would find another conftest)
AXE = Path(__import__("axe_playwright_python").__file__).with_name("axe.min.js")

NEW_UI = ("/pages?acol=words:count&status=4xx&external=1", "/summary", "/search?q=item")


@pytest.fixture(scope="module")
def base(tmp_path_factory, viewer_over, serving):
    archive = build_export_site(tmp_path_factory.mktemp("tools-browser") / "site.nitpicker")
    with viewer_over(archive) as app, serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module (downloads allowed); every console error and failed response is kept."""
    context = browser.new_context(locale="en-US", reduced_motion="reduce", accept_downloads=True)
    page = context.new_page()
    page.problems = []
    page.on("console", lambda msg: msg.type == "error" and page.problems.append(msg.text))
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    page.on("response", lambda r: r.status >= 400 and page.problems.append(f"{r.status} {r.url}"))
    yield page
    context.close()


def _download(page, link) -> str:
    with page.expect_download() as info:
        link.click()
    return open(info.value.path(), encoding="utf-8").read()


def test_export_links_download_the_whole_filtered_table(base, page):
    page.goto(base + "/pages?pageSize=5&status=2xx")
    assert page.locator("#pages tbody tr").count() == 5
    expected = page.request.get(base + "/api/pages?status_class=2xx&external=false&limit=1000").json()
    assert expected["total"] > 5
    data = json.loads(
        _download(page, page.get_by_role("link", name=f"Export all {expected['total']} rows as JSON"))
    )
    assert [row["url"] for row in data["items"]] == [row["url"] for row in expected["items"]]
    rows = list(
        csv.reader(
            io.StringIO(
                _download(page, page.get_by_role("link", name=f"Export all {expected['total']} rows as CSV"))
            )
        )
    )
    assert rows[0][0] == "URL" and [row[0] for row in rows[1:]] == [row["url"] for row in expected["items"]]
    assert page.problems == []


def test_status_class_filter_picks_a_class(base, page):
    page.goto(base + "/pages?external=1")
    page.select_option("#f-status", "4xx")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=4xx**")
    statuses = page.locator("#pages tbody td:nth-child(2)").all_inner_texts()
    assert statuses == ["404"]
    assert page.locator("#f-status").input_value() == "4xx"
    page.select_option("#f-status", "failed")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=failed**")
    assert page.locator("#pages tbody td:first-child").all_inner_texts() == [SITE + "/down"]
    assert page.problems == []


def test_search_from_any_page_by_keyboard(base, page):
    page.goto(base + "/violations")
    page.locator("main h1").click()  # focus outside any field: "/" is the shortcut, not a character
    page.keyboard.press("/")
    box = page.locator("#site-search-q")
    assert page.evaluate("document.activeElement.id") == "site-search-q"
    box.press_sequentially("ITEM-1")
    results = page.locator("#site-search-results a")
    page.wait_for_function("() => document.querySelector('#site-search-results').dataset.q === 'ITEM-1'")
    assert results.locator(".hit-url").all_inner_texts() == [
        SITE + "/shop/item-1",
        SITE + "/shop/item-10",
        SITE + "/shop/item-11",
    ]
    assert "3 matches shown" in page.locator("#announcer").inner_text()
    box.press("ArrowDown")
    assert page.evaluate("document.activeElement.textContent").startswith(SITE + "/shop/item-1")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url("**/page?url=**item-10**")
    assert SITE + "/shop/item-10" in page.locator("main h1").inner_text()
    # no match says so; Enter in the box opens the full list
    page.keyboard.press("/")
    page.locator("#site-search-q").fill("no such thing")
    page.wait_for_function(
        "() => document.querySelector('#site-search-results').dataset.q === 'no such thing'"
    )
    assert page.locator("#site-search-results .hit-none").count() == 1
    page.locator("#site-search-q").fill("busy")
    page.locator("#site-search-q").press("Enter")
    page.wait_for_url("**/search?q=busy**")
    assert page.locator("#search-list a").all_inner_texts() == [SITE + "/boom"]
    assert page.problems == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_serious_violation_in_the_new_ui(browser, base, theme, axe_serious):
    found = axe_serious(browser, base, NEW_UI, theme)
    assert found == {}, json.dumps(found, indent=1)
    # the search results open over the page
    context = browser.new_context(bypass_csp=True, locale="en-US", reduced_motion="reduce")
    context.add_init_script(f"try {{ localStorage.setItem('nitpicker-theme', '{theme}'); }} catch (e) {{}}")
    page = context.new_page()
    try:
        page.goto(base + "/summary")
        page.locator("#site-search-q").fill("item")
        page.wait_for_selector("#site-search-results a")
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        serious = [
            (v["id"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"]
            if v["impact"] in ("serious", "critical")
        ]
        assert serious == []
    finally:
        context.close()
