"""The viewer through Flask's test client: JSON API, every HTML view, the sandbox route, plugins, live stubs."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from archives import SITE, build_archive, demo_pages, storing

from nitpicker_core.query import query_registry, run_query
from nitpicker_viewer import i18n

VIEWER = Path(__file__).resolve().parents[2] / "nitpicker_viewer"
HTML_VIEWS = (
    "/",
    "/?show=all&priority=high",
    "/summary",
    "/issue?check=broken-link",
    "/pages",
    "/pages?external=1&category=html&missing=description&status=200&url=*meta*",
    "/broken-links",
    "/external-links",
    "/isolated",
    "/isolated?include_roots=false",
    "/isolated/clusters?singletons=1&rooted=1",
    "/graph",
    "/graph/edges",
    "/resources",
    "/resources?external=false",
    "/images?missing_alt=1&lazy=true",
    "/violations?priority=medium",
    "/violations/rules",
    "/duplicates?field=description",
    "/mismatches?kind=og_title",
    "/commits",
    "/diff",
)


def test_api_lists_every_registered_query(client, pm):
    listed = client.get("/api/").get_json()
    assert [q["name"] for q in listed] == query_registry(pm).names()


def test_repeated_views_are_answered_from_the_kept_answers(client, viewer_app):
    state = viewer_app.extensions["nitpicker"]
    assert state["immutable"] is True
    first = client.get("/commits?pageSize=7").get_data(as_text=True)
    kept = len(state["cache"])
    assert client.get("/commits?pageSize=7").get_data(as_text=True) == first
    assert len(state["cache"]) == kept and kept >= 1
    assert ("commits", None, (("limit", "7"), ("offset", "0"))) in state["cache"]


def test_api_answers_what_the_registry_answers(client, viewer_archive, pm):
    from nitpicker_core.archive import open_archive

    with open_archive(viewer_archive) as reader:
        expected = run_query(query_registry(pm), reader, "pages", {"limit": 3, "sort": "status"})
        summary = run_query(query_registry(pm), reader, "summary", {})
    assert client.get("/api/pages?limit=3&sort=status").get_json() == expected
    assert client.get("/api/summary?commit=1").get_json() == summary


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/no-such-query", 404, "unknown query 'no-such-query'"),
        ("/api/pages?limit=lots", 400, "parameter 'limit' must be integer, got 'lots'"),
        ("/api/pages?colour=red", 400, "query 'pages' has no parameter 'colour'"),
        ("/api/page-detail", 400, "query 'page-detail' needs parameter 'url'"),
        ("/api/summary?commit=99", 400, None),
        ("/api/page-detail?url=http://nowhere.test/", 404, "no URL 'http://nowhere.test/' in commit 1"),
        ("/api/no/such/route", 404, None),
    ],
)
def test_api_errors_are_json_without_absolute_paths(client, viewer_archive, path, status, error):
    response = client.get(path)
    assert response.status_code == status and response.is_json
    body = response.get_json()
    assert body["status"] == status and body["error"]
    if error:
        assert body["error"].startswith(error)
    text = response.get_data(as_text=True)
    assert str(viewer_archive.parent) not in text and "/tmp" not in text and os.getcwd() not in text


@pytest.mark.parametrize("path", HTML_VIEWS)
def test_every_html_view_renders(client, path):
    response = client.get(path)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    html = response.get_data(as_text=True)
    assert '<a class="skip-link" href="#main">' in html and '<main id="main"' in html
    assert "<footer" in html and "site.nitpicker" in html
    assert "script-src" not in response.headers["Content-Security-Policy"]  # default-src 'self' covers it
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")


def test_pages_view_pages_and_filters_like_the_query(client, viewer_app):
    with viewer_app.test_request_context():
        pass
    everything = client.get("/api/pages?external=false&limit=10000").get_json()
    html = client.get("/pages?pageSize=3&page=2").get_data(as_text=True)
    urls = re.findall(r'<td class="k-page"><a href="/page\?url=[^"]+" class="url">([^<]+)</a>', html)
    assert urls == [row["url"] for row in everything["items"][3:6]]
    assert f"Rows 4–6 of {everything['total']}" in html
    assert 'rel="prev"' in html and 'href="/pages?pageSize=3"' in html  # page 1 is the URL without page=


def test_page_detail_shows_links_metadata_and_sandboxed_frame(client, site):
    url = site + "/"
    html = client.get("/page?url=" + quote(url, safe="")).get_data(as_text=True)
    assert "Test Top" in html and f"{site}/about" in html
    assert '<iframe class="rendered" sandbox=""' in html
    src = re.search(r'<iframe class="rendered" sandbox="" src="([^"]+)"', html).group(1)
    assert src.startswith("/page/html?") and parse_qs(urlsplit(src.replace("&amp;", "&")).query) == {
        "url": [url]
    }


def test_sandbox_route_serves_the_html_with_a_sandbox_policy(client, site):
    response = client.get("/page/html?url=" + quote(site + "/viewer-sandbox/", safe=""))
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["Content-Security-Policy"] == (
        "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'"
    )
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "Rendered probe content" in response.get_data(as_text=True)


def test_an_unknown_url_is_a_404_page_in_the_viewers_chrome(client):
    response = client.get("/page?url=http://nowhere.test/")
    html = response.get_data(as_text=True)
    assert response.status_code == 404 and "<h1>Error 404</h1>" in html
    assert "no URL &#39;http://nowhere.test/&#39; in commit 1" in html


def test_crawled_text_is_escaped_in_the_viewer(client, site):
    html = client.get("/page?url=" + quote(site + "/viewer-sandbox/", safe="")).get_data(as_text=True)
    assert "Sandbox probe &lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert "Escaped &lt;b&gt;link&lt;/b&gt;" in html and "<b>link</b>" not in html


def test_language_follows_cookie_and_accept_language(client):
    assert "<h1>Summary</h1>" in client.get("/summary").get_data(as_text=True)
    summary = client.get("/summary", headers={"Accept-Language": "ja,en;q=0.5"}).get_data(as_text=True)
    assert "<h1>概要</h1>" in summary
    assert "HTML 文書（text/html）で応答した内部 URL" in summary  # what "pages" means, in Japanese too
    assert "internal URLs that answered with an HTML document" in client.get("/summary").get_data(
        as_text=True
    )
    assert "<h1>問題</h1>" in client.get("/", headers={"Accept-Language": "ja,en;q=0.5"}).get_data(
        as_text=True
    )
    switched = client.get("/lang/ja?next=/pages%3FpageSize%3D25")
    assert switched.status_code == 302 and switched.headers["Location"] == "/pages?pageSize=25"
    assert '<html lang="ja"' in client.get("/pages").get_data(as_text=True)
    assert client.get("/lang/en?next=https://evil.test/").headers["Location"] == "/"
    assert client.get("/lang/en?next=//evil.test/").headers["Location"] == "/"


def test_catalogs_have_the_same_keys_and_every_used_key():
    english, japanese = i18n.catalog("en"), i18n.catalog("ja")
    assert sorted(english) == sorted(japanese)
    # the English definitions of the counts are the core's own words (the summary query answers them too)
    from nitpicker_core.counts import DEFINITIONS

    assert {key: english[f"definition.{key}"] for key in DEFINITIONS} == DEFINITIONS
    assert all(value.strip() for value in [*english.values(), *japanese.values()])
    used: set[str] = set()
    for path in [*VIEWER.glob("templates/*.html"), *VIEWER.glob("blueprints/*.py"), VIEWER / "tables.py"]:
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r"\bt\('([a-z_]+(?:\.[a-z_]+)?)'", text))
        used |= set(
            re.findall(
                r'"((?:view|col|filter|field|category|severity|mismatch|summary|graph|violations|'
                r'page|resource|clusters|external|diff)\.[a-z_]+)"',
                text,
            )
        )
    from nitpicker_core.content_types import CATEGORIES

    used = {key for key in used if not key.endswith(".html")}
    used |= {"category." + c for c in CATEGORIES} | {f"diff.{k}" for k in ("added", "removed", "modified")}
    assert len(used) > 150
    assert sorted(used - set(english)) == []


def test_a_plugins_query_and_blueprint_appear_without_viewer_changes(viewer_archive, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "example_plugin"))
    sys.modules.pop("nitpicker_example", None)
    import nitpicker_example

    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    pm = make_plugin_manager()
    pm.add_plugin(nitpicker_example, "word-count")
    app = create_app(viewer_archive, pm)
    try:
        client = app.test_client()
        assert client.get("/api/word-counts").get_json() == {"total": 0, "items": []}  # never analyzed
        assert client.get("/api/word-counts?min_words=x").status_code == 400
        home = client.get("/").get_data(as_text=True)
        assert '<a href="/word-counts">Word counts</a>' in home
        page = client.get("/word-counts").get_data(as_text=True)
        assert "<h1>Word counts</h1>" in page and "site.nitpicker" in page
    finally:
        app.config["NITPICKER_CLOSE"]()


def test_footer_shows_a_live_crawl_with_its_writer_pid(tmp_path, pm):
    from nitpicker_core import CrawlContext
    from nitpicker_viewer.app import create_app

    target = tmp_path / "live.nitpicker"
    crawl = CrawlContext(output=target, roots=[SITE + "/"], options={"parallels": 1})
    with storing(pm, crawl):
        for result in demo_pages()[:2]:
            pm.hook.crawl_page_scraped(result=result, crawl=crawl)
        app = create_app(target, pm)
        try:
            assert app.extensions["nitpicker"]["immutable"] is False  # a live crawl's answers are never kept
            html = app.test_client().get("/").get_data(as_text=True)
            assert f"Crawl in progress (writer pid {os.getpid()}): the data is live" in html
        finally:
            app.config["NITPICKER_CLOSE"]()
    app = create_app(target, pm)
    try:
        assert "Crawl in progress" not in app.test_client().get("/").get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()


def test_a_finished_archive_from_build_archive_renders_every_view(tmp_path, pm):
    from nitpicker_viewer.app import create_app

    app = create_app(build_archive(tmp_path / "demo.nitpicker"), pm)
    try:
        client = app.test_client()
        for path in HTML_VIEWS:
            assert client.get(path).status_code == 200, path
        assert json.loads(client.get("/api/summary").data)["counts"]["internal"]["urls"] == 4
    finally:
        app.config["NITPICKER_CLOSE"]()


def test_page_detail_lists_the_pages_resources_and_tags(client, site):
    def rows(html: str, section: str) -> list[list[str]]:
        body = re.search(rf'<section aria-labelledby="{section}">.*?<tbody>(.*?)</tbody>', html, re.S).group(
            1
        )
        return [
            [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
        ]

    lazy = client.get("/page?url=" + quote(site + "/lazy/", safe="")).get_data(as_text=True)
    assert '<h2 id="resources">Resources (4)</h2>' in lazy and "<caption" in lazy
    assert rows(lazy, "resources") == [
        [f"{site}/lazy/img/{n}.svg", "200", "image/svg+xml", "101", "", "", "No"] for n in range(4)
    ]
    assert f'href="/resource?url={site}/lazy/img/0.svg"' in lazy
    assert rows(lazy, "tags") == [["Nothing to show."]] and '<h2 id="tags">Tags (0)</h2>' in lazy
    analytics = client.get("/page?url=" + quote(site + "/analytics/", safe="")).get_data(as_text=True)
    assert rows(analytics, "tags") == [
        ["Google Tag Manager", "tag-manager", "GTM-ABC1234", "", "100"],
        ["Google Analytics", "analytics", "G-XXXX1234", "GA4", "100"],
        ["WordPress", "generator", "", "6.4", "100"],
    ]
    assert '<h2 id="tags">Tags (3)</h2>' in analytics and '<h2 id="resources">Resources (0)</h2>' in analytics
    japanese = client.get(
        "/page?url=" + quote(site + "/analytics/", safe=""), headers={"Accept-Language": "ja"}
    ).get_data(as_text=True)
    assert '<th scope="col">提供元</th>' in japanese and '<h2 id="tags">タグ (3)</h2>' in japanese


def test_an_archive_rewritten_while_viewed_is_read_again(tmp_path, pm):
    # issue 33: the viewer kept serving commits that `gc` had removed
    from archives import build_archive as build
    from support import run_cli

    from nitpicker_viewer.app import create_app

    target = build(tmp_path / "site.nitpicker")
    build(target)  # commit 2
    app = create_app(target, pm)
    try:
        client = app.test_client()
        listed = client.get("/api/commits").get_json()
        assert sorted(c["id"] for c in listed["items"]) == [1, 2]
        gc = run_cli("gc", str(target), "--keep", "1", cwd=tmp_path)
        assert gc.returncode == 0, gc.stderr
        listed = client.get("/api/commits").get_json()
        assert [c["id"] for c in listed["items"]] == [2]
        assert client.get("/commits?commit=1").status_code in (400, 404)
    finally:
        app.config["NITPICKER_CLOSE"]()
