"""The viewer on an archive with URLs never requested, self-links and a broken link written relatively."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import quote

import pytest
from archives import SITE, build_archive

from nitpicker_core import Anchor, ScrapeResult

EXTERNAL = ("https://far.test/a", "https://far.test/b")


def _page(path: str, anchors: list[Anchor], status: int = 200) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        content_type="text/html",
        metadata={"title": path},
        html="<html></html>",
        anchors=anchors,
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    pages = [
        _page(
            "/",
            [
                Anchor(SITE + "/docs/", "Docs", raw_href="docs/", line=4, col=3),
                Anchor(SITE + "/", "Top", "top", raw_href="#top", line=5, col=3),
                *(Anchor(url, url, raw_href=url, line=6, col=3) for url in EXTERNAL),
            ],
        ),
        _page(
            "/docs/",
            [
                Anchor(SITE + "/docs/gone.html", "Gone", "part", raw_href="gone.html#part", line=9, col=12),
                Anchor(SITE + "/", "Home", raw_href="../", line=10, col=1),
            ],
        ),
        _page("/docs/gone.html", [], status=404),
        # what the crawler records with --no-fetch-external: the URL, never requested
        *(ScrapeResult(url=url, is_external=True, is_target=False, scraped=False) for url in EXTERNAL),
    ]
    archive = build_archive(tmp_path_factory.mktemp("read-side-viewer") / "rs.nitpicker", pages)
    app = create_app(archive, make_plugin_manager())
    yield app
    app.config["NITPICKER_CLOSE"]()


def text(client, path: str, **headers: str) -> str:
    response = client.get(path, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True))))


def test_summary_shows_not_checked_apart_from_failed(app):
    client = app.test_client()
    shown = text(client, "/summary")
    assert "not checked (never requested) 2 " in shown
    assert "failed" not in shown.split("HTTP status", 1)[1].split("Hard failures", 1)[0]
    assert "2 URLs were never requested" in shown
    client.set_cookie("nitpicker-lang", "ja")
    assert "未確認（リクエストしていない） 2 " in text(client, "/summary")


def test_lists_say_not_checked(app):
    client = app.test_client()
    shown = text(client, "/pages?external=1&outcome=not_checked")
    assert all(url in shown for url in EXTERNAL) and SITE + "/docs/" not in shown
    assert shown.count("not checked") >= 2
    external = text(client, "/external-links")
    assert external.count("not checked") == 2 and "failed" not in external


def test_broken_links_grouped_with_the_href_as_written(app):
    client = app.test_client()
    by_target = text(client, "/broken-links")
    assert SITE + "/docs/gone.html" in by_target and "gone.html#part 9:12" in by_target
    by_source = text(client, "/broken-links?group=source")
    assert SITE + "/docs/" in by_source and "gone.html#part 9:12" in by_source
    by_anchor = text(client, "/broken-links?group=anchor")
    assert "gone.html#part" in by_anchor and " 9:12 " in by_anchor


def test_page_view_counts_self_links_apart(app):
    client = app.test_client()
    home = text(client, f"/page?url={quote(SITE + '/', safe='')}")
    assert "Inbound links (redirects resolved) (1)" in home  # /docs/ only; its own #top is no referrer
    assert "links to itself 1 times" in home
    assert "#top 5:3" in home and "docs/ 4:3" in home
