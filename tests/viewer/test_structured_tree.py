"""The page view's structured-data tab on the real crawl of /structured-data/ (the analyzer's own test crawl,
tests/conftest.py): each item a tree of its types, properties and values, each finding at its property or,
missing, at the node where it should be; driven in Chromium and checked with axe."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest


@pytest.fixture(scope="module")
def tree_app(structured_data_archive: Path, viewer_over: Any) -> Any:
    with viewer_over(structured_data_archive) as app:
        yield app


def _path(site: str, page: str) -> str:
    return f"/page?url={quote(f'{site}/structured-data/{page}', safe='')}#t-structured"


def _props(node: Any) -> list[str]:
    """The property names of a tree node (a ``ul.sd-tree``), its own only, in order."""
    return node.locator(":scope > li.sd-prop").evaluate_all("els => els.map(e => e.dataset.prop)")


@pytest.mark.browser
def test_the_tree_shows_each_items_properties_and_each_finding_at_its_property(
    tree_app: Any, serving: Any, browser: Any, site: str
) -> None:
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        with serving(tree_app) as base:
            page.goto(base + _path(site, "jsonld"))
            items = page.locator("#t-structured details.sd-item")
            assert items.count() == 5
            summaries = [s.strip() for s in items.locator(":scope > summary").all_inner_texts()]
            assert summaries == [
                "JSON-LD BreadcrumbList · json-ld item 1, line 9 · in the HTML as sent",
                "JSON-LD Product · json-ld item 2, line 10 · in the HTML as sent",
                "JSON-LD FAQPage · json-ld item 3, line 11 · in the HTML as sent",
                "JSON-LD WebSite #site · json-ld item 4, line 12 · in the HTML as sent",
                "JSON-LD WebPage #page · json-ld item 5, line 12 · in the HTML as sent",
            ]
            product = items.nth(1).locator(":scope > ul.sd-tree")
            assert _props(product) == [
                "name", "colour", "image", "description", "brand", "sku", "reviews", "offers",
            ]  # fmt: skip
            offer = product.locator(":scope > li[data-prop=offers] > details.sd-node > ul.sd-tree")
            assert _props(offer) == ["price", "priceCurrency", "availability", "priceValidUntil"]
            # the finding next to the property it is about, in the nested Offer, and nowhere else
            availability = offer.locator(":scope > li[data-prop=availability]")
            assert availability.locator(".sd-value").inner_text() == "in stock"
            assert availability.locator(".sd-finding").all_inner_texts() == [
                "High Product.offers.availability availability expects ItemAvailability, got 'in stock'"
            ]
            colour = product.locator(":scope > li[data-prop=colour] .sd-finding")
            assert colour.all_inner_texts() == ["High Product.colour colour is not a schema.org property"]
            assert offer.locator(":scope > li[data-prop=price] .sd-finding").count() == 0
            # a missing property: at the node where it should be, the second Question (not the first)
            faq = items.nth(2).locator(":scope > ul.sd-tree > li[data-prop=mainEntity] > details.sd-node")
            assert faq.count() == 2
            assert faq.nth(0).locator(".sd-finding").count() == 0
            missing = faq.nth(1).locator(":scope > ul.sd-tree > li.sd-at-node[data-prop=acceptedAnswer]")
            assert missing.inner_text().strip() == (
                "acceptedAnswer High FAQPage.mainEntity.acceptedAnswer missing: required for the FAQ rich result"
            )
            # about the item as a whole: at the item
            crumbs = items.nth(0).locator(":scope > ul.sd-item-findings .sd-finding")
            assert crumbs.all_inner_texts() == ["Low Breadcrumb BreadcrumbList has every required property"]
            # markup in a value is text: shown as written, never an element, never run
            description = product.locator(":scope > li[data-prop=description] .sd-value")
            assert description.inner_text() == 'A widget <img src="x" onerror="window.pwned=1">.'
            assert page.locator("#t-structured img").count() == 0
            assert page.evaluate("window.pwned") is None
            # collapsible: a node folds away with its summary
            node = product.locator(":scope > li[data-prop=offers] > details.sd-node")
            assert availability.is_visible()
            node.locator(":scope > summary").click()
            assert node.evaluate("e => e.open") is False and not availability.is_visible()

            page.goto(base + _path(site, "scripted"))
            scripted = page.locator("#t-structured details.sd-item > summary").all_inner_texts()
            assert [s.strip() for s in scripted] == [
                "JSON-LD WebSite · json-ld item 1, line 4 of the rendered page · not so in the HTML as sent (added or changed by a script)",
                "JSON-LD BreadcrumbList · json-ld item 2, line 6 of the rendered page · not so in the HTML as sent (added or changed by a script)",
            ]
        assert errors == []
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_structured_data_tab_has_no_serious_axe_findings(
    tree_app: Any, serving: Any, browser: Any, axe_serious: Any, site: str, theme: str
) -> None:
    paths = [_path(site, name) for name in ("jsonld", "microdata", "rdfa")]
    with serving(tree_app) as base:
        assert axe_serious(browser, base, paths, theme) == {}


@pytest.mark.browser
def test_the_tree_speaks_japanese_and_the_items_are_no_column(tree_app: Any, site: str) -> None:
    client = tree_app.test_client()
    client.get("/lang/ja?next=/")
    html = client.get(_path(site, "scripted").split("#")[0]).get_data(as_text=True)
    assert (
        "構造化データの項目 (2)" in html
        and html.count("送信された HTML にはこの形でない（スクリプトで追加・変更）") == 2
    )
    # the stored items are the analyzer's data, not one of its columns: no table offers them
    columns = client.get("/api/analysis-columns?analyzer=structured-data").get_json()
    assert [c["column"] for c in columns["items"]] == ["errors", "items", "rich_results"]
