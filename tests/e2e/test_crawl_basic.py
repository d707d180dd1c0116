"""End-to-end crawls of the basic, recursive, redirect, meta and error-status families."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_single_page(crawl, site):
    c = crawl(f"{site}/", "--single", "--no-image")
    top = c.page(f"{site}/")
    assert (top["title"], top["status"], top["content_type"], top["is_target"], top["is_external"]) == (
        "Test Top",
        200,
        "text/html",
        1,
        0,
    )
    about = c.page(f"{site}/about")  # linked, checked without the browser, not a target
    assert about["is_target"] == 0 and about["status"] == 200 and about["title"] == "About"
    assert [a["href"] for a in c.anchors[f"{site}/"]] == [f"{site}/about"]


def test_recursive(crawl, site, external):
    c = crawl(f"{site}/recursive/", "--no-image", shared=True)
    for path, title in [
        ("/recursive/", "Recursive Top"),
        ("/recursive/page-a", "Page A"),
        ("/recursive/page-b", "Page B"),
        ("/recursive/page-c", "Page C"),
    ]:
        page = c.page(site + path)
        assert (page["title"], page["is_target"], page["is_external"]) == (title, 1, 0)
    assert [a["href"] for a in c.anchors[f"{site}/recursive/"]] == [
        f"{site}/recursive/page-a",
        f"{site}/recursive/page-b",
        f"{site}/recursive/page-c",
    ]
    ext = c.page(f"{external}/external-like")
    assert (ext["is_external"], ext["is_target"], ext["status"], ext["title"]) == (1, 0, 200, "External Page")
    assert c.anchors[f"{external}/external-like"] == []  # external pages are never rendered


def test_no_recursive_checks_links_without_rendering(crawl, site):
    c = crawl(f"{site}/recursive/", "--no-recursive", "--no-image")
    assert c.page(f"{site}/recursive/")["is_target"] == 1
    page_a = c.page(f"{site}/recursive/page-a")
    assert page_a["status"] == 200 and page_a["title"] == "Page A" and page_a["is_target"] == 0
    assert c.anchors[f"{site}/recursive/page-a"] == []


def test_redirect_chain_is_flattened(crawl, site):
    c = crawl(f"{site}/redirect/", "--no-image", ok=(1,))  # /redirect/ also links to a redirect loop
    assert [(e["url"], e["kind"]) for e in c.errors] == [(f"{site}/redirect/loop-a", "redirect-loop")]
    dest = c.page(f"{site}/redirect/dest")
    assert (dest["title"], dest["status"], dest["is_target"]) == ("Redirect Destination", 200, 1)
    for hop in ("start", "middle"):
        source = c.page(f"{site}/redirect/{hop}")
        assert source["redirect_dest"] == f"{site}/redirect/dest" and source["is_target"] == 0
        assert c.anchors[f"{site}/redirect/{hop}"] == []
    assert f"{site}/redirect/start" in [a["href"] for a in c.anchors[f"{site}/redirect/dest"]]


def test_meta_fields(crawl, site):
    c = crawl(f"{site}/meta/", "--no-image")
    full = c.page(f"{site}/meta/full")
    expected = {
        "lang": "ja",
        "description": "Test description",
        "keywords": "test,meta,nitpicker",
        "canonical": f"http://localhost:{site.rsplit(':', 1)[1]}/meta/full",
        "og_type": "website",
        "og_title": "OG Title",
        "og_site_name": "Test Site",
        "og_description": "OG Description",
        "twitter_card": "summary_large_image",
        "noindex": 0,
        "nofollow": 0,
    }
    assert {k: full[k] for k in expected} == expected
    noindex = c.page(f"{site}/meta/robots-noindex")
    assert (noindex["noindex"], noindex["nofollow"], noindex["noarchive"]) == (1, 1, 1)
    minimal = c.page(f"{site}/meta/minimal")
    assert minimal["title"] == "Minimal Page" and minimal["description"] == "" and minimal["og_title"] == ""


def test_error_statuses_are_targets(crawl, site):
    c = crawl(f"{site}/error-status/", "--no-image", shared=True)
    statuses = {
        path: c.page(f"{site}/error-status/{path}")["status"]
        for path in ("not-found", "server-error", "forbidden", "normal")
    }
    assert statuses == {"not-found": 404, "server-error": 500, "forbidden": 403, "normal": 200}
    assert c.page(f"{site}/error-status/not-found")["is_target"] == 1
    assert c.page(f"{site}/error-status/not-found")["title"] == "Not Found"
