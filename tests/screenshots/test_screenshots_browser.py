"""The page detail's Screenshot tab in real Chromium: thumbnail, full size, strict headers, axe in both themes."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def viewer(shots, viewer_over, serving):
    with viewer_over(shots["with"]) as app, serving(app) as url:
        yield app, url


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module (whether each image loaded is asserted where it is shown)."""
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    yield context.new_page()
    context.close()


def _detail(site: str, path: str) -> str:
    return f"/page?url={quote(site + path, safe='')}"


def test_the_tab_shows_the_thumbnail_and_opens_the_full_size(site, viewer, page):
    _, base = viewer
    page.goto(base + _detail(site, "/shots/tall"))
    page.get_by_role("tab", name="Screenshot").click()
    assert page.evaluate("location.hash") == "#t-screenshot"
    thumb = page.locator("#screenshot-thumb")
    thumb.wait_for()
    page.wait_for_function("document.querySelector('#screenshot-thumb').complete")
    assert page.eval_on_selector("#screenshot-thumb", "i => [i.naturalWidth, i.naturalHeight]") == [320, 240]
    assert "1280 × 8000 px" in page.locator("#t-screenshot .note").inner_text()
    link = page.get_by_role("link", name="Screenshot of the page: open the full size (1280 × 8000 px)")
    with page.expect_response("**/screenshot/*") as answer:
        link.click()
    response = answer.value
    assert response.status == 200 and response.headers["content-type"] == "image/jpeg"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "immutable" in response.headers["cache-control"]
    page.wait_for_function("document.images.length === 1 && document.images[0].complete")
    assert page.evaluate("[document.images[0].naturalWidth, document.images[0].naturalHeight]") == [
        1280,
        8000,
    ]
    # a URL that is no page has no picture, and the tab says how to get one
    page.goto(base + _detail(site, "/shots/pixel.svg") + "#t-screenshot")
    assert "--screenshots" in page.locator("#no-screenshot").inner_text()


def test_the_image_route_answers_only_hashes_it_holds(site, viewer):
    app, _ = viewer
    client = app.test_client()
    sha = client.get("/api/page-detail?url=" + quote(site + "/shots/", safe="")).get_json()["screenshot"][
        "sha256"
    ]
    first = client.get(f"/screenshot/{sha}")
    assert first.status_code == 200 and first.data[:2] == b"\xff\xd8"
    again = client.get(f"/screenshot/{sha}", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    for bad in ("0" * 64, "../page", sha.upper(), sha[:-1]):
        assert client.get(f"/screenshot/{bad}").status_code == 404, bad


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_nothing_serious(site, viewer, browser, axe_serious, theme):
    _, base = viewer
    assert axe_serious(browser, base, [_detail(site, "/shots/tall") + "#t-screenshot"], theme) == {}
