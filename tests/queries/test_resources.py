"""resources, resource-referrers, unused-resources and images, read through the CLI."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import Image, Resource, ScrapeResult


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A small archive built through the scrape hooks: images the crawl of test_server cannot produce."""
    images = [
        Image(
            "/a.png",
            SITE + "/a.png",
            None,
            100,
            50,
            100,
            50,
            viewport_width=1280,
            markup='<img src="/a.png">',
        ),
        Image(
            "/b.png",
            SITE + "/b.png",
            "",
            100,
            50,
            400,
            200,
            viewport_width=1280,
            markup='<img src="/b.png" alt="" width="100" height="50">',
        ),
        Image(
            "/c.png",
            SITE + "/c.png",
            "c",
            100,
            50,
            100,
            50,
            viewport_width=1280,
            markup='<img src="/c.png" alt="c" width="100" height="50">',
        ),
    ]
    home = ScrapeResult(
        url=SITE + "/",
        status=200,
        content_type="text/html",
        metadata={"title": "Home"},
        images=images,
        html="<html></html>",
        extra={"large_images": [{"src": SITE + "/c.png", "bytes": 900000}]},
        resources=[SITE + "/a.png", SITE + "/cdn.js"],
    )  # what the page loaded: its referrers

    def resources(pm, crawl):
        for path, referrer in (("/a.png", SITE + "/"), ("/old.css", None), ("/cdn.js", SITE + "/")):
            kind = "text/css" if path.endswith("css") else "image/png"
            resource = Resource(
                SITE + path,
                200,
                content_type=kind,
                content_length=10,
                compression="gzip",
                cdn="cloudflare" if "cdn" in path else "",
                is_external="cdn" in path,
            )
            pm.hook.crawl_resource_received(crawl=crawl, resource=resource, referrer_url=referrer)

    return build_archive(tmp_path_factory.mktemp("made") / "made.nitpicker", [home], also=resources)


def test_resources_list_filters_and_sorts(query, qsite):
    everything = query("resources")
    urls = [r["url"] for r in everything["items"]]
    assert urls == sorted(urls) and everything["total"] == len(urls)
    assert {qsite + "/reuse/pic.png", qsite + "/lazy/img/1.svg"} <= set(urls)
    pic = next(r for r in everything["items"] if r["url"] == qsite + "/reuse/pic.png")
    assert pic["status"] == 200 and pic["content_type"] == "image/png" and pic["referrers"] == 1
    assert pic["is_external"] is False and pic["content_length"] == 70
    svgs = query("resources", "--content-type", "image/svg", "--sort", "url", "--order", "desc")
    assert [r["url"] for r in svgs["items"]] == [qsite + f"/lazy/img/{n}.svg" for n in (3, 2, 1, 0)]
    assert query("resources", "--url", "/reuse/")["total"] == 1
    # the favicon /meta/full names, which the test site does not serve: asked by the crawler, a 404 of the page
    broken = query("resources", "--status", "404")["items"]
    assert [(r["url"], r["referrers"]) for r in broken] == [(qsite + "/favicon.ico", 1)]
    assert query("resources", "--external", "true")["total"] == 0
    paged = query("resources", "--limit", "2", "--offset", "1")
    assert [r["url"] for r in paged["items"]] == urls[1:3] and paged["next_offset"] == 3


def test_resource_referrers(query, qsite):
    result = query("resource-referrers", "--url", qsite + "/reuse/pic.png")
    assert [p["url"] for p in result["items"]] == [qsite + "/reuse/"]
    assert result["items"][0]["title"] == "Reuse Top" and result["resource"]["referrers"] == 1
    lazy = query("resource-referrers", "--url", qsite + "/lazy/img/2.svg")
    assert [p["url"] for p in lazy["items"]] == [qsite + "/lazy/"]
    missing = query("resource-referrers", "--url", qsite + "/nothing.png", ok=False)
    assert missing.returncode == 1 and "no resource" in missing.stderr
    assert query("resource-referrers", ok=False).returncode != 0


def test_unused_resources(query, made):
    assert query("unused-resources")["total"] == 0
    unused = query("unused-resources", archive=made)
    assert [r["url"] for r in unused["items"]] == [SITE + "/old.css"]
    assert unused["items"][0]["referrers"] == 0


def test_resources_of_a_made_archive(query, made):
    by_refs = query("resources", "--sort", "referrers", "--order", "desc", archive=made)
    assert [(r["url"], r["referrers"]) for r in by_refs["items"]] == [
        (SITE + "/a.png", 1),
        (SITE + "/cdn.js", 1),
        (SITE + "/old.css", 0),
    ]
    external = query("resources", "--external", "true", archive=made)["items"]
    assert [(r["url"], r["cdn"], r["compression"]) for r in external] == [
        (SITE + "/cdn.js", "cloudflare", "gzip")
    ]


def test_images_of_the_crawl(query, qsite):
    everything = query("images", "--limit", "1000")
    assert everything["total"] == len(everything["items"]) > 0
    assert {i["viewport_width"] for i in everything["items"]} == {320, 1280}
    lazy = query("images", "--url", "/lazy/", "--lazy", "true", "--viewport-width", "1280")
    assert [i["alt"] for i in lazy["items"]] == ["lazy 1", "lazy 2", "lazy 3"]
    assert all(i["is_lazy"] and i["width"] == 120 and i["natural_width"] == 120 for i in lazy["items"])
    eager = query("images", "--url", "/lazy/", "--lazy", "false", "--viewport-width", "1280")["items"]
    assert [(i["src"], i["current_src"]) for i in eager] == [("/lazy/img/0.svg", qsite + "/lazy/img/0.svg")]
    # /reuse/ writes <img> without width and height; every other image of test_server has both
    unsized = query("images", "--missing-size", "true")["items"]
    assert {(i["page"], i["src"]) for i in unsized} == {(qsite + "/reuse/", "/reuse/pic.png")}
    assert query("images", "--missing-alt", "true")["total"] == 0
    assert query("images", "--oversized", "true")["total"] == 0
    by_width = query("images", "--sort", "natural_width", "--order", "desc", "--limit", "1")["items"][0]
    assert by_width["natural_width"] == 200


def test_images_missing_alt_size_and_oversized(query, made):
    # alt="" is decorative: only the image without any alt attribute is missing one
    assert [i["src"] for i in query("images", "--missing-alt", "true", archive=made)["items"]] == ["/a.png"]
    assert [i["src"] for i in query("images", "--missing-size", "true", archive=made)["items"]] == ["/a.png"]
    # /b.png is shown at a quarter of its natural size; /c.png was over the file-size threshold
    oversized = query("images", "--oversized", "true", archive=made)["items"]
    assert [(i["src"], i["oversized"]) for i in oversized] == [("/b.png", True), ("/c.png", True)]
    assert query("images", "--viewport-width", "320", archive=made)["total"] == 0
