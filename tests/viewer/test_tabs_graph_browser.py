"""Page detail tabs by keyboard, the graph's legend, labels and neighbourhood, the headers view: real Chromium, axe."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from archives import SITE, build_archive
from tabs_site import headered_pages

pytestmark = pytest.mark.browser

HOME, ABOUT = SITE + "/", SITE + "/about"


@pytest.fixture(scope="module")
def base(tmp_path_factory, viewer_over, serving):
    archive = build_archive(tmp_path_factory.mktemp("tabs-browser") / "site.nitpicker", headered_pages())
    with viewer_over(archive) as app, serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module; every console error and failed response is kept."""
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    page = context.new_page()
    page.problems = []
    page.on(
        "console",
        lambda msg: (
            msg.type == "error"
            and "/page/html" not in (msg.location or {}).get("url", "")
            and page.problems.append(msg.text)
        ),
    )
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    page.on("response", lambda r: r.status >= 400 and page.problems.append(f"{r.status} {r.url}"))
    yield page
    context.close()


def _selected(page) -> str:
    return page.locator("[role=tab][aria-selected=true]").get_attribute("aria-controls")


def _shown(page) -> list[str]:
    return page.eval_on_selector_all("[role=tabpanel]", "ps => ps.filter(p => !p.hidden).map(p => p.id)")


def test_page_detail_tabs_by_keyboard_and_by_fragment(base, page):
    detail = f"{base}/page?url={quote(HOME, safe='')}"
    page.goto(detail)
    tablist = page.locator("[role=tablist]")
    assert tablist.get_attribute("aria-label") == "Sections"
    assert page.locator("[role=tab]").count() == 11  # with Raw vs rendered
    assert _selected(page) == "t-overview" and _shown(page) == ["t-overview"]
    assert page.locator("#t-overview").get_attribute("aria-labelledby") == "t-overview-tab"
    # only the selected tab is in the tab order; arrows, Home and End move the selection and the focus
    assert page.locator("[role=tab][tabindex='0']").count() == 1
    page.locator("#t-overview-tab").focus()
    page.keyboard.press("ArrowRight")
    assert _selected(page) == "t-issues" and _shown(page) == ["t-issues"]
    assert page.evaluate("document.activeElement.id") == "t-issues-tab"
    assert page.evaluate("location.hash") == "#t-issues"  # the URL names the tab
    page.keyboard.press("End")
    assert _selected(page) == "t-source" and page.locator("iframe.rendered").is_visible()
    page.keyboard.press("ArrowRight")  # wraps around
    assert _selected(page) == "t-overview"
    page.keyboard.press("ArrowLeft")
    assert _selected(page) == "t-source"
    page.keyboard.press("Home")
    assert _selected(page) == "t-overview"
    page.locator("#t-links-tab").click()
    assert _selected(page) == "t-links" and page.locator("#inbound").is_visible()
    # a link with the fragment opens its tab; an old section anchor opens the tab holding it
    page.goto(detail + "#t-images")
    assert _selected(page) == "t-images"
    page.goto(detail + "#inbound")
    assert _selected(page) == "t-links" and _shown(page) == ["t-links"]
    page.evaluate("location.hash = '#rendered'")  # an in-page link to a section of another tab
    page.wait_for_function("document.querySelector('#t-source-tab').getAttribute('aria-selected') === 'true'")
    assert _shown(page) == ["t-source"] and page.evaluate("location.hash") == "#rendered"
    # from the overview to this page's neighbourhood in the link graph
    page.goto(detail)
    page.get_by_role("link", name="Link graph around this page").click()
    page.wait_for_selector("#graph[data-drawn='true']")
    assert page.locator("#graph").get_attribute("data-centre") == HOME
    assert page.problems == []


def test_graph_legend_labels_and_neighbourhood(base, page):
    page.goto(f"{base}/graph?url={quote(ABOUT, safe='')}&depth=1")
    canvas = page.locator("#graph[data-drawn='true']")
    canvas.wait_for()
    assert canvas.get_attribute("data-nodes") == "3" and canvas.get_attribute("data-edges") == "3"
    legend = page.locator("#graph-legend")
    assert legend.is_visible() and legend.locator("li").count() == 4
    # the swatches are the colours the picture uses
    node_colour = page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--node').trim()"
    )
    swatch = page.eval_on_selector(".swatch.node", "e => getComputedStyle(e).backgroundColor")
    assert swatch == page.evaluate(
        f"(() => {{ const e = document.createElement('i'); e.style.color = '{node_colour}';"
        "document.body.append(e); const c = getComputedStyle(e).color; e.remove(); return c; })()"
    )
    # keyboard: N steps through the pages (the centre first), the label is shown and read out, Enter opens
    canvas.focus()
    page.keyboard.press("n")
    assert canvas.get_attribute("data-chosen") == ABOUT
    assert (
        ABOUT in page.locator("#graph-hover").inner_text()
        and "About" in page.locator("#graph-hover").inner_text()
    )
    page.keyboard.press("n")
    second = canvas.get_attribute("data-chosen")
    assert second in (HOME, SITE + "/blog/") and second in page.locator("#graph-hover").inner_text()
    page.keyboard.press("p")
    assert canvas.get_attribute("data-chosen") == ABOUT
    page.keyboard.press("Enter")
    page.wait_for_url("**/page?url=**about**")
    # depth 2 reaches /missing (a 404) through /
    page.goto(f"{base}/graph?url={quote(ABOUT, safe='')}&depth=2")
    page.wait_for_selector("#graph[data-drawn='true']")
    assert page.locator("#graph").get_attribute("data-nodes") == "4"
    assert page.locator("#graph-depth a[aria-current=page]").inner_text() == "2"
    assert page.problems == []


def test_security_headers_view_filters_from_its_counts(base, page):
    page.goto(base + "/security-headers")
    assert page.locator("#security-headers tbody tr").count() == 4
    page.locator("[data-header=csp] a").click()
    page.wait_for_url("**missing=csp**")
    assert page.locator("#security-headers tbody tr").count() == 2
    assert page.locator("#f-missing").input_value() == "csp"
    page.select_option("#f-missing", "hsts")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**missing=hsts**")
    assert page.locator("#security-headers tbody tr").count() == 3
    assert page.problems == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_nothing_serious(base, browser, axe_serious, theme):
    paths = [
        f"/page?url={quote(HOME, safe='')}",
        f"/page?url={quote(HOME, safe='')}#t-links",
        f"/graph?url={quote(ABOUT, safe='')}&depth=1",
        "/security-headers?missing=csp",
    ]  # /graph: test_viewer_browser
    assert axe_serious(browser, base, paths, theme) == {}
