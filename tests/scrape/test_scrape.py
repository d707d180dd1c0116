"""The built-in scrape against real Chromium and the local test site: one browser for the whole module."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from nitpicker_scrape import crawl_scrape, scrape

from nitpicker_core import CrawlContext, ScrapeResult
from nitpicker_core.crawler.browser import BrowserHost, find_browser
from test_server import serve

pytestmark = pytest.mark.browser
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
FAST = {"image": False, "timeouts": {"navigation": 15.0, "dom": 5.0, "idle": 2.0, "preset": 10.0}}

# No skipping: bin/test installs Chromium, so a missing browser is a failure worth seeing
assert find_browser() is not None, "no Chromium found (bin/setup installs Debian's chromium)"


@dataclass
class Site:
    base: str
    external: str
    loop: asyncio.AbstractEventLoop
    host: BrowserHost

    def render(
        self, path: str, options: dict[str, Any] | None = None, *, full: bool = True, base: str | None = None
    ) -> ScrapeResult:
        async def go() -> ScrapeResult:
            page = await self.host.new_page("Nitpicker/test")
            try:
                return await scrape((base or self.base) + path, page, options or FAST, full=full)
            finally:
                await self.host.close_page(page)

        return self.loop.run_until_complete(go())


@pytest.fixture(scope="module")
def site():
    server, base = serve()
    loop = asyncio.new_event_loop()
    host = BrowserHost(extra_args=[LOOPBACK_ONLY])
    loop.run_until_complete(host.start())
    try:
        yield Site(base, f"http://127.0.0.1:{server.server_port}", loop, host)
    finally:
        loop.run_until_complete(host.close())
        loop.close()
        server.shutdown()


def test_full_metadata(site):
    result = site.render("/meta/full")
    b = site.base
    assert result.status == 200 and result.status_text == "OK"
    assert result.content_type == "text/html" and result.content_length == int(
        result.headers["content-length"]
    )
    assert result.redirect_chain == [] and result.errors == []
    assert result.metadata == {
        "title": "Full Meta Page",
        "description": "Test description",
        "keywords": "test,meta,nitpicker",
        "lang": "ja",
        "dir": "",
        "charset": "UTF-8",
        "base_href": f"{b}/meta/",
        "viewport": "width=device-width, initial-scale=1",
        "theme_color": "#336699",
        "robots": "index,follow",
        "noindex": False,
        "nofollow": False,
        "noarchive": False,
        "noimageindex": False,
        "googlebot": None,
        "canonical": f"{b}/meta/full",
        "amphtml": None,
        "manifest": None,
        "icon": f"{b}/favicon.ico",
        "apple_touch_icon": f"{b}/apple-touch-icon.png",
        "og_type": "website",
        "og_title": "OG Title",
        "og_site_name": "Test Site",
        "og_description": "OG Description",
        "og_url": f"{b}/meta/full",
        "og_image": f"{b}/og-image.png",
        "og_locale": None,
        "twitter_card": "summary_large_image",
        "twitter_site": None,
        "twitter_creator": None,
        "twitter_title": None,
        "twitter_description": None,
        "twitter_image": None,
        "author": "Test Author",
        "generator": "Hand Written 1.0",
        "publisher": None,
        "google_site_verification": None,
        "msvalidate": None,
        "yandex_verification": None,
    }
    assert result.extra["hreflang"] == [
        {"hreflang": "en", "href": f"{b}/meta/full-en"},
        {"hreflang": "ja", "href": f"{b}/meta/full"},
        {"hreflang": "x-default", "href": f"{b}/meta/full-en"},
    ]
    # Relative links resolve against <base href>
    assert [(a.href, a.text) for a in result.anchors] == [
        (f"{b}/meta/robots-noindex", "Noindex"),
        (f"{b}/meta/minimal", "Minimal"),
    ]
    assert "Full Meta Page" in result.html
    assert [t.provider for t in result.tags] == ["Hand Written"] and result.tags[0].version == "1.0"


def test_robots_flags(site):
    meta = site.render("/meta/robots-noindex").metadata
    assert (meta["noindex"], meta["nofollow"], meta["noarchive"], meta["noimageindex"]) == (
        True,
        True,
        True,
        False,
    )


def test_redirect_chain_and_destination(site):
    result = site.render("/redirect/start")
    assert result.url == f"{site.base}/redirect/start"
    assert result.redirect_chain == [f"{site.base}/redirect/middle", f"{site.base}/redirect/dest"]
    assert result.status == 200 and result.metadata["title"] == "Redirect Destination"
    assert result.extra["redirect_status"] == 301
    assert site.render("/redirect/self").redirect_chain == []  # bouncing to itself is not an edge


def test_anchors_with_texts(site):
    result = site.render("/recursive/page-b")
    assert [(a.href, a.text, a.fragment) for a in result.anchors] == [
        (f"{site.base}/recursive/page-c", "Page C", ""),
        (f"{site.external}/external-like", "External", ""),
    ]
    top = site.render("/recursive/")
    assert [a.text for a in top.anchors] == ["Page A", "Page B", "Page C"]


def test_jsonld_valid_invalid_and_speculation_rules(site):
    valid = site.render("/jsonld/valid").jsonld
    assert len(valid) == 1 and valid[0].kind == "jsonld" and valid[0].error == ""
    assert valid[0].types == ["Article"] and valid[0].parsed["headline"] == "Valid JSON-LD"
    invalid = site.render("/jsonld/invalid").jsonld
    assert len(invalid) == 1 and invalid[0].parsed is None and invalid[0].types == []
    assert (
        invalid[0].raw == '{"@context": "https://schema.org", "@type": '
        and "Expecting value" in invalid[0].error
    )
    rules = site.render("/jsonld/speculation").jsonld
    assert [(r.kind, r.error) for r in rules] == [("speculationrules", "")]
    assert rules[0].parsed == {"prerender": [{"source": "list", "urls": ["/jsonld/valid"]}]}


def test_analytics_tags(site):
    tags = {(t.provider, t.external_id, t.version, t.category) for t in site.render("/analytics/").tags}
    assert tags == {
        ("Google Tag Manager", "GTM-ABC1234", "", "tag-manager"),
        ("Google Analytics", "G-XXXX1234", "GA4", "analytics"),
        ("WordPress", "", "6.4", "generator"),
    }


def test_images_per_preset(site):
    result = site.render("/", {**FAST, "image": True})
    assert result.errors == []
    rows = [
        (i.viewport_width, i.alt, i.is_lazy, i.natural_width, i.natural_height, i.width)
        for i in result.images
    ]
    assert rows == [
        (1280, "test image", False, 1, 1, 100.0),
        (1280, "lazy image", True, 200, 150, 200.0),
        (320, "test image", False, 1, 1, 100.0),
        (320, "lazy image", True, 200, 150, 200.0),
    ]
    assert (
        result.images[1].src.startswith("data:image/svg+xml") and 'loading="lazy"' in result.images[1].markup
    )


def test_lazy_images_below_the_fold_load_and_resources_belong_to_the_page(site):
    result = site.render("/lazy/", {**FAST, "image": True, "image_presets": ["desktop-compact"]})
    assert [(i.alt, i.natural_width) for i in result.images] == [
        ("eager", 120),
        ("lazy 1", 120),
        ("lazy 2", 120),
        ("lazy 3", 120),
    ]
    # Every picture the page pulled in is a resource of the page; the page itself is not. In the order their
    # responses arrived, which is a race between the pictures (seen in CI: 1.svg before 0.svg)
    assert sorted(result.resources) == [f"{site.base}/lazy/img/{n}.svg" for n in range(4)]
    assert [r.url for r in result.received] == result.resources
    svg = result.received[0]
    assert (svg.status, svg.status_text, svg.content_type, svg.compression, svg.cdn) == (
        200,
        "OK",
        "image/svg+xml",
        "",
        "",
    )
    assert svg.content_length == int(svg.headers["content-length"]) and "set-cookie" not in svg.headers


def test_resources_exclude_the_document_and_data_urls(site):
    reuse = site.render("/reuse/")
    assert reuse.resources == [f"{site.base}/reuse/pic.png"]
    assert reuse.received[0].content_type == "image/png"
    top = site.render("/", {**FAST, "image": True})
    assert top.resources == [] and top.received == []  # only data: images there


def test_shift_jis_is_decoded(site):
    result = site.render("/sjis/")
    assert result.content_type == "text/html"
    assert result.metadata["title"] == "日本語のページ" and result.metadata["charset"] == "Shift_JIS"
    assert "これはシフトJISのページです。" in result.html


def test_hanging_page_returns_within_bounds(site):
    options = {"image": True, "timeouts": {"navigation": 10.0, "dom": 2.0, "idle": 1.0, "preset": 2.0}}
    started = time.monotonic()
    result = site.render("/hang/", options)
    elapsed = time.monotonic() - started
    assert elapsed < 12, elapsed
    assert result.metadata["title"] == "Never Loads"
    assert [i.alt for i in result.images] == ["x", "x"]


def test_js_redirect_and_meta_refresh_are_edges(site):
    js = site.render("/js-redirect/")
    assert js.redirect_chain == [f"{site.base}/js-redirect/dest"]
    assert js.metadata["title"] == "JS Redirect Destination" and js.extra["client_redirect"] is True
    assert (js.status, js.extra["redirect_status"]) == (200, 200)
    refresh = site.render("/meta-refresh/")
    assert refresh.redirect_chain == [f"{site.base}/meta-refresh/dest"]
    assert refresh.metadata["title"] == "Meta Refresh Destination"


def test_delayed_meta_refresh_is_followed_without_waiting(site):
    html = '<title>Later</title><meta http-equiv="refresh" content="3; URL=\'/redirect/start\'">'

    referers: list[str | None] = []

    async def start(route) -> None:  # noqa: ANN001 - Playwright's Route
        referers.append(route.request.headers.get("referer"))
        await route.continue_()

    async def go() -> ScrapeResult:
        page = await site.host.new_page("Nitpicker/test")
        await page.route("**/later", lambda route: route.fulfill(body=html, content_type="text/html"))
        await page.route("**/redirect/start", start)
        try:
            return await scrape(f"{site.base}/later", page, FAST)
        finally:
            await site.host.close_page(page)

    result = site.loop.run_until_complete(go())
    # the scrape went there itself (no Referer) instead of sitting out the delay for the browser's refresh,
    # which would come from the page (Referer: /later)
    assert referers == [None]
    assert result.redirect_chain == [f"{site.base}/redirect/{hop}" for hop in ("start", "middle", "dest")]
    assert result.metadata["title"] == "Redirect Destination"


def test_a_failing_preset_is_a_page_error(site):
    result = site.render(
        "/about", {**FAST, "image": True, "image_presets": ["no-such-device", "mobile-small"]}
    )
    assert [(e.step, "unknown device preset" in e.message) for e in result.errors] == [
        ("images:no-such-device", True)
    ]
    assert result.images == []  # /about has no images, but the good preset still ran
    assert result.metadata["title"] == "About"


def test_non_html_returns_early(site):
    result = site.render("/reuse/pic.png")
    assert (result.status, result.content_type, result.html, result.anchors, result.scraped) == (
        200,
        "image/png",
        None,
        None,
        True,
    )


def test_console_errors_and_dialogs(site):
    html = (
        "<title>Noisy</title><script>console.error('broken widget'); alert('hi'); console.log('fine');"
        "setTimeout(() => { throw new Error('late failure'); }, 0);</script><p>after the dialog</p>"
    )

    async def go() -> ScrapeResult:
        page = await site.host.new_page("Nitpicker/test")
        await page.route("**/noisy", lambda route: route.fulfill(body=html, content_type="text/html"))
        try:
            return await scrape(f"{site.base}/noisy", page, FAST)
        finally:
            await site.host.close_page(page)

    result = site.loop.run_until_complete(go())
    assert result.metadata["title"] == "Noisy" and "after the dialog" in result.html  # alert() did not block
    assert [(e.step, e.message) for e in result.errors] == [
        ("console", "broken widget"),
        ("console", "Error: late failure"),
    ]


def test_hookimpl_light_and_full(site, tmp_path):
    crawl = CrawlContext(output=tmp_path / "x.nitpicker", roots=[site.base + "/"], options=dict(FAST))
    external = f"{site.external}/external-like"

    async def go(url: str, render: str) -> ScrapeResult:
        page = await site.host.new_page("Nitpicker/test")
        try:
            return await crawl_scrape(url=url, page=page, crawl=crawl, render=render)
        finally:
            await site.host.close_page(page)

    light = site.loop.run_until_complete(go(external, "light"))
    assert light.metadata == {"title": "External Page"} and light.anchors is None and light.received == []
    assert "<h1>External Page</h1>" in light.html
    full = site.loop.run_until_complete(go(f"{site.base}/about", "full"))
    assert full.anchors and full.anchors[0].href == f"{site.base}/"


def test_response_helpers():
    from nitpicker_scrape.extract import parse_refresh
    from nitpicker_scrape.network import (
        chain_edges,
        clean_headers,
        compression,
        guess_cdn,
        normalize_content_type,
    )
    from nitpicker_scrape.tags import generator_tag

    assert normalize_content_type(" Text/HTML ; charset=UTF-8") == "text/html"
    assert normalize_content_type("") is None
    assert compression({"content-encoding": "gzip, br"}) == "br" and compression({}) == ""
    assert guess_cdn({"cf-ray": "8a-NRT"}) == "Cloudflare"
    assert guess_cdn({"x-amz-cf-id": "x", "x-amz-request-id": "y"}) == "Amazon CloudFront"
    assert guess_cdn({"x-amz-request-id": "y", "server": "AmazonS3"}) == "Amazon S3"
    assert guess_cdn({"server": "nginx"}) == ""
    assert clean_headers({"Set-Cookie": "a=1", "Authorization": "x", "X-A": "1"}) == {"x-a": "1"}
    assert chain_edges("http://h/a", ["http://h/a", "http://h/a", "http://h/b#x"]) == ["http://h/b"]
    assert parse_refresh("0;URL='/next'", "http://h/dir/") == (0.0, "http://h/next")
    assert parse_refresh("30", "http://h/") is None
    tag = generator_tag("Drupal 10 (https://www.drupal.org)")
    assert (tag.provider, tag.version) == ("Drupal", "10")


def test_sent_html_hrefs_as_written_positions_and_headings(site):
    from test_server.routes.keeps_more import DOC, DOC_HEADINGS, DOC_POSITIONS

    result = site.render("/keeps/")
    assert result.source == DOC  # the body the server sent, not the rendered DOM
    made = '<a href="made-by-script.html">scripted</a>'
    assert made in result.html and made not in DOC
    assert [(a.raw_href, a.line, a.col) for a in result.anchors] == DOC_POSITIONS
    first = result.anchors[0]
    assert (first.href, first.fragment) == (f"{site.base}/keeps/whatsnew/changelog.html", "id1")
    assert [(h.level, h.text) for h in result.headings] == DOC_HEADINGS
    assert "source_omitted" not in result.extra


def test_rendered_headings_leave_their_permalink_anchor_out(site):
    from test_server.routes.keeps_more import SPHINX_HEADINGS

    result = site.render("/keeps/sphinx.html")
    # what the raw reader finds in the same page (test_parse.py): one rule, applied where both end
    assert [(h.level, h.text) for h in result.headings] == SPHINX_HEADINGS


def test_sent_html_is_decoded_as_the_browser_decoded_it(site):
    result = site.render("/keeps/latin1")
    assert "<h1>Caf\xe9 cr\xe8me</h1>" in result.source and "\ufffd" not in result.source
    assert [(a.raw_href, a.line, a.col) for a in result.anchors] == [("guide.html", 4, 1)]
    assert [(h.level, h.text) for h in result.headings] == [(1, "Caf\xe9 cr\xe8me")]


def test_sent_html_over_the_limit_is_left_out_and_said(site, monkeypatch):
    import nitpicker_scrape.source

    monkeypatch.setattr(nitpicker_scrape.source, "MAX_SOURCE_BYTES", 4000)
    result = site.render("/keeps/big")
    assert result.source is None and "over the 4000-byte limit" in result.extra["source_omitted"]
    assert result.html and [(a.raw_href, a.line) for a in result.anchors] == [("guide.html", None)]


def test_light_scrape_keeps_no_sent_html(site):
    result = site.render("/keeps/", full=False)
    assert result.source is None and result.headings is None
