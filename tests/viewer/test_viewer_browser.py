"""The viewer in real Chromium: every view, URL state, theme, language, link graph, sandbox and axe-core."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlsplit

import pytest

pytestmark = pytest.mark.browser

ROOT_PATHS = (
    "/",
    "/summary",
    "/issue?check=broken-link",
    "/pages",
    "/broken-links",
    "/external-links",
    "/isolated",
    "/isolated/clusters?singletons=1",
    "/graph",
    "/graph/edges",
    "/resources",
    "/images",
    "/violations",
    "/violations/rules",
    "/duplicates",
    "/mismatches",
    "/commits",
    "/diff",
)


class Watched:
    """A page plus every console error and every HTTP response >= 400 it produced (the sandbox excluded)."""

    def __init__(self, context):
        self.page = context.new_page()
        self.errors: list[str] = []
        self.bad: list[str] = []
        self.finished: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("response", lambda r: r.status >= 400 and self.bad.append(f"{r.status} {r.url}"))
        # only requests that reached a server: a request the CSP blocks fails before it leaves the browser
        self.page.on("requestfinished", lambda r: self.finished.append(r.url))

    def _console(self, msg):
        # The crawled page's own messages (its script blocked by the sandbox) are not the viewer's errors.
        if msg.type == "error" and "/page/html" not in (msg.location or {}).get("url", ""):
            self.errors.append(f"console: {msg.text} at {msg.location}")

    def clean(self):
        assert self.errors == [] and self.bad == []


@pytest.fixture
def context(browser):
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    yield context
    context.close()


@pytest.fixture
def watched(context):
    return Watched(context)


def page_url(site_base: str, path: str) -> str:
    return site_base + path


def detail_paths(site: str) -> list[str]:
    return [
        f"/page?url={quote(site + p, safe='')}"
        for p in ("/", "/jsonld/valid", "/meta/full", "/viewer-sandbox/")
    ]


def test_every_view_loads_without_console_errors_or_failed_requests(served, site, watched):
    resource = quote(site + "/lazy/img/0.svg", safe="")
    for path in (*ROOT_PATHS, *detail_paths(site), f"/resource?url={resource}"):
        response = watched.page.goto(served + path)
        assert response.status == 200, path
        watched.page.wait_for_load_state("load")
        assert watched.page.locator("main h1").count() == 1, path
        assert watched.page.locator("header nav[aria-label] a").count() >= 12, path
        assert watched.errors == [] and watched.bad == [], path


def _first_urls(page) -> list[str]:
    return page.locator("#pages tbody tr td:first-child").all_inner_texts()


def test_paging_and_filters_round_trip_through_the_url(served, watched):
    page = watched.page
    total = page.request.get(served + "/api/pages?limit=1").json()["total"]
    page.goto(served + "/pages?pageSize=5&external=1")
    first = _first_urls(page)
    assert len(first) == 5
    page.get_by_role("link", name="Next").first.click()
    page.wait_for_url("**page=2**")
    second = _first_urls(page)
    assert len(second) == 5 and set(second).isdisjoint(first)
    assert page.locator(".pager [aria-current=page]").first.inner_text() == f"Page 2 of {-(-total // 5)}"
    page.reload()
    assert _first_urls(page) == second and "page=2" in page.url

    page.select_option("#f-category", "image")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**category=image**")
    query = parse_qs(urlsplit(page.url).query)
    assert "page" not in query and query["pageSize"] == ["5"] and query["external"] == ["1"]
    images = _first_urls(page)
    expected = page.request.get(served + "/api/pages?category=image&limit=5").json()["items"]
    assert images == [row["url"] for row in expected] and images

    page.go_back()
    page.wait_for_url("**page=2**")
    assert _first_urls(page) == second
    assert page.locator("#f-category").input_value() == ""
    page.go_forward()
    page.wait_for_url("**category=image**")
    assert _first_urls(page) == images and page.locator("#f-category").input_value() == "image"
    watched.clean()


def test_sorting_columns_and_resizing_them_by_keyboard(served, watched):
    page = watched.page
    page.goto(served + "/pages?pageSize=200&external=1")
    page.locator("#pages th[data-col=status] a.sort").click()
    page.wait_for_url("**sort=status**")
    assert page.locator("#pages th[data-col=status]").get_attribute("aria-sort") == "ascending"
    page.locator("#pages th[data-col=status] a.sort").click()
    page.wait_for_url("**order=desc**")
    assert page.locator("#pages th[data-col=status]").get_attribute("aria-sort") == "descending"
    statuses = [
        int(s) for s in page.locator("#pages tbody td:nth-child(2)").all_inner_texts() if s.strip().isdigit()
    ]
    assert statuses == sorted(statuses, reverse=True) and statuses[0] == 500

    handle = page.locator("#pages th[data-col=title] .col-resize")
    before = page.locator("#pages th[data-col=title]").bounding_box()["width"]
    handle.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    after = int(handle.get_attribute("aria-valuenow"))
    assert after == round(before) + 30 or abs(after - (before + 30)) <= 2
    page.reload()
    assert abs(page.locator("#pages th[data-col=title]").bounding_box()["width"] - after) <= 2
    watched.clean()


def test_infinite_scroll_is_opt_in_and_remembered(served, watched):
    page = watched.page
    page.goto(served + "/pages?pageSize=5&external=1")
    toggle = page.get_by_label("Infinite scroll")
    assert not toggle.is_checked()
    toggle.check()
    page.locator(".sentinel").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('#pages tbody tr').length >= 10", timeout=20_000)
    page.wait_for_function("() => !document.querySelector('#pages-block[aria-busy]')", timeout=20_000)
    page.reload()
    assert page.get_by_label("Infinite scroll").is_checked()
    page.get_by_label("Infinite scroll").uncheck()
    page.reload()
    assert not page.get_by_label("Infinite scroll").is_checked()
    assert page.locator("#pages tbody tr").count() == 5
    watched.clean()


def test_theme_and_language_switch_and_are_remembered(served, watched):
    page = watched.page
    page.goto(served + "/")
    assert page.locator("html").get_attribute("data-theme") == "light"
    page.get_by_role("button", name="Dark theme").click()
    assert page.locator("html").get_attribute("data-theme") == "dark"
    page.goto(served + "/pages")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    assert page.get_by_role("button", name="Light theme").get_attribute("aria-pressed") == "true"

    page.get_by_role("link", name="日本語").click()
    page.wait_for_url(served + "/pages")
    assert page.locator("html").get_attribute("lang") == "ja"
    assert page.locator("main h1").inner_text() == "ページ"
    assert page.get_by_role("link", name="リンク切れ").count() == 1
    page.goto(served + "/summary")
    assert page.locator("main h1").inner_text() == "概要"
    page.get_by_role("link", name="English").click()
    assert page.locator("main h1").inner_text() == "Summary"
    watched.clean()


def test_link_graph_draws_nodes_and_opens_a_page_on_click(served, watched):
    page = watched.page
    page.goto(served + "/graph")
    page.wait_for_selector("#graph[data-drawn=true]")
    canvas = page.locator("#graph")
    assert int(canvas.get_attribute("data-nodes")) >= 20 and int(canvas.get_attribute("data-edges")) >= 20
    colors = page.evaluate("""() => {
        const c = document.getElementById('graph'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const seen = new Set();
        for (let i = 0; i < d.length; i += 4 * 7) seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]);
        return seen.size;
    }""")
    assert colors > 2  # background, edges and nodes
    assert "Link graph drawn" in page.locator("#announcer").inner_text()
    watched.clean()


def test_sandbox_keeps_the_crawled_script_out(served, site, watched):
    page = watched.page
    response = page.goto(
        served + f"/page?url={quote(site + '/viewer-sandbox/', safe='')}#t-source"
    )  # the Source tab
    assert response.status == 200
    frame_element = page.locator("iframe.rendered")
    assert frame_element.get_attribute("sandbox") == ""
    frame = page.frame_locator("iframe.rendered")
    assert frame.locator("#probe-text").inner_text() == "Rendered probe content"
    page.wait_for_timeout(300)
    assert page.locator("body").get_attribute("data-pwned") is None
    assert page.evaluate("localStorage.getItem('pwned')") is None
    assert "pwned" not in page.evaluate("document.cookie")
    assert frame.locator("html").get_attribute("data-ran") is None  # the frame's own script never ran
    assert watched.finished and not [url for url in watched.finished if "viewer-sandbox-beacon" in url]
    # the crawled title and a link with markup in its href stay text
    assert page.locator("#injected").count() == 0
    assert page.locator("#outbound ~ div td").filter(has_text="Escaped <b>link</b>").count() == 1
    assert page.locator("table.kv td").filter(has_text="Sandbox probe <b>bold</b>").count() == 1
    watched.clean()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_serious_violation(browser, served, site, theme, axe_serious):
    found = axe_serious(browser, served, (*ROOT_PATHS, *detail_paths(site)[:2]), theme)
    assert found == {}, json.dumps(found, indent=1)


def test_summary_counts_blocked_urls_apart_and_names_the_crawlers_robots_txt_blocks(
    served, site, viewer_archive, watched
):
    from support import run_cli

    totals = json.loads(run_cli("query", str(viewer_archive), "summary").stdout)["totals"]
    blocked, by = (
        totals["blocked"],
        ", ".join(f"{r['count']} × {r['status']}" for r in totals["blocked_by_status"]),
    )
    assert blocked >= 1 and "× 403" in by  # /error-status/forbidden at least
    page = watched.page
    page.goto(served + "/summary")
    assert page.locator("#card-blocked .card-value").inner_text() == f"{blocked:,}"
    assert page.locator("#blocked-note").inner_text() == (
        f"{blocked} URLs answered but refused the crawler ({by}): counted in their status too, never as broken pages."
    )
    # the test site's robots.txt (test_server/routes/robots.py) shuts out three AI tokens, no search engine
    assert page.locator("#crawlers-ai").inner_text() == (
        "AI crawlers: 3 of 24 blocked site-wide by robots.txt: Google-Extended, GPTBot, CCBot"
    )
    assert (
        page.locator("#crawlers-search").inner_text()
        == "Search crawlers: 0 of 6 blocked site-wide by robots.txt"
    )
    assert page.locator("#crawlers-partly").count() == 0
    assert "Blocked" in page.locator("#definitions").inner_text()
    # the card leads to the blocked URLs, the 403 among them
    page.locator("#card-blocked").click()
    page.wait_for_url("**/pages?**outcome=blocked**")
    table = page.locator("main table.data").first.inner_text()
    assert f"{site}/error-status/forbidden" in table
    assert page.locator("main table.data").first.locator("tbody tr").count() == blocked
    page.goto(served + "/summary")
    page.get_by_role("link", name="日本語").click()
    assert page.locator("#crawlers-ai").inner_text() == (
        "AI クローラー: 24 件中 3 件を robots.txt がサイト全体でブロック: Google-Extended, GPTBot, CCBot"
    )
    page.get_by_role("link", name="English").click()
    watched.clean()
