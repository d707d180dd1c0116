"""End-to-end: the tricky routes — redirects of every kind, reuse, hangs, huge and non-UTF-8 pages, scripts."""

from __future__ import annotations

import json
import urllib.request

import pytest

pytestmark = pytest.mark.browser


def test_clobber_external_redirect_does_not_overwrite_internal_page(crawl, site, external):
    c = crawl(f"{site}/clobber/", "--no-image")
    target = c.page(f"{site}/clobber/target")
    assert (target["title"], target["is_target"], target["is_external"]) == ("Clobber Target", True, False)
    assert [a["href"] for a in c.anchors[f"{site}/clobber/target"]] == [f"{site}/clobber/"]
    away = c.page(f"{external}/clobber/away")
    assert away["redirect_dest"] == f"{site}/clobber/target" and away["status"] == 301


def test_diverge_trusts_what_the_browser_reached(crawl, site):
    c = crawl(f"{site}/diverge/", "--no-image")
    assert c.page(f"{site}/diverge/")["redirect_dest"] == f"{site}/diverge/get-dest"
    assert c.page(f"{site}/diverge/get-dest")["title"] == "Diverge GET Destination"


def test_redirect_loop_is_a_classified_error(crawl, site):
    c = crawl(f"{site}/redirect/loop-a", "--no-image", ok=(1,))
    assert [(e["url"], e["kind"]) for e in c.errors] == [(f"{site}/redirect/loop-a", "redirect-loop")]


def test_resource_reuse_fetches_the_image_once(crawl, site):
    urllib.request.urlopen(f"{site}/__counts/reset").read()
    c = crawl(f"{site}/reuse/", "--no-image", "--parallels", "1")
    pic = c.page(f"{site}/reuse/pic.png")
    assert (pic["status"], pic["content_type"], pic["is_target"]) == (200, "image/png", True)
    counts = json.loads(urllib.request.urlopen(f"{site}/__counts").read())
    assert counts["/reuse/pic.png"] == 1  # the browser's request; the link reused it
    assert f"{site}/reuse/pic.png" in [r["url"] for r in c.resources]


def test_hanging_page_finishes_within_bounds(crawl, site):
    c = crawl(f"{site}/hang/", "--no-image")
    assert c.page(f"{site}/hang/")["status"] == 200


def test_twenty_megabyte_page(crawl, site):
    c = crawl(f"{site}/big/", "--no-image", "--single")
    assert c.page(f"{site}/big/")["title"] == "Big Page"


def test_shift_jis_page(crawl, site):
    c = crawl(f"{site}/sjis/", "--no-image", "--single")
    assert c.page(f"{site}/sjis/")["title"] == "日本語のページ"


def test_json_ld_and_speculation_rules(crawl, site):
    from nitpicker_core.archive import open_archive

    c = crawl(f"{site}/jsonld/", "--no-image")
    with open_archive(c.archive) as reader:
        valid = reader.jsonld(f"{site}/jsonld/valid")
        invalid = reader.jsonld(f"{site}/jsonld/invalid")
        rules = reader.jsonld(f"{site}/jsonld/speculation")
    assert valid[0]["types"] == ["Article"] and valid[0]["error"] == ""
    assert invalid[0]["parsed"] is None and invalid[0]["error"]
    assert rules[0]["kind"] == "speculationrules"


def test_js_redirect_and_meta_refresh_are_edges(crawl, site):
    c = crawl(f"{site}/js-redirect/", "--no-image")
    assert c.page(f"{site}/js-redirect/")["redirect_dest"] == f"{site}/js-redirect/dest"
    assert c.page(f"{site}/js-redirect/dest")["title"] == "JS Redirect Destination"
    m = crawl(f"{site}/meta-refresh/", "--no-image", name="refresh")
    assert m.page(f"{site}/meta-refresh/")["redirect_dest"] == f"{site}/meta-refresh/dest"


def test_technology_tags(crawl, site):
    from nitpicker_core.archive import open_archive

    c = crawl(f"{site}/analytics/", "--no-image", "--single")
    with open_archive(c.archive) as reader:
        tags = {(t["provider"], t["external_id"]) for t in reader.tags(f"{site}/analytics/")}
    assert ("Google Tag Manager", "GTM-ABC1234") in tags and ("Google Analytics", "G-XXXX1234") in tags
    assert any(provider == "WordPress" for provider, _ in tags)


def test_images_per_preset(crawl, site):
    from nitpicker_core.archive import open_archive

    c = crawl(f"{site}/lazy/", "--single")
    with open_archive(c.archive) as reader:
        images = reader.images(f"{site}/lazy/")
    widths = sorted({i["viewport_width"] for i in images})
    assert widths == [320, 1280]
    lazy = [i for i in images if i["alt"] == "lazy 3"]
    assert len(lazy) == 2 and all(i["is_lazy"] and i["natural_width"] == 120 for i in lazy)


def test_image_file_size_threshold_flags_large_images(crawl, site):
    c = crawl(f"{site}/reuse/", "--single", "--image-file-size-threshold", "10")
    assert c.page(f"{site}/reuse/")["extra"]["large_images"] == [
        {"src": f"{site}/reuse/pic.png", "bytes": 70}
    ]
    quiet = crawl(f"{site}/reuse/", "--single", "--image-file-size-threshold", "100000", name="quiet")
    assert "large_images" not in quiet.page(f"{site}/reuse/")["extra"]


def test_scroll_jack_in_a_narrow_preset_does_not_redirect_the_page(crawl, site):
    c = crawl(f"{site}/scroll-jack/", "--single")
    page = c.page(f"{site}/scroll-jack/")
    assert (page["title"], page["redirect_dest"], page["is_target"]) == ("Scroll Jack", None, True)
    assert (
        f"{site}/scroll-jack/mobile" not in c.pages or not c.page(f"{site}/scroll-jack/mobile")["is_target"]
    )


def test_a_malformed_link_fails_nothing_but_itself(crawl, site):
    # issue 33: one <a href="http://[::1"> recorded its whole page as failed and stopped the crawl there
    c = crawl(f"{site}/malformed-links/", "--no-image", "--no-fetch-external", ok=(2,))  # 2: broken links
    assert sorted((e["url"], e["kind"]) for e in c.errors) == [
        ("http://127.0.0.1:99999/", "invalid-url"),
        ("http://[::1", "invalid-url"),
        ("http://[::1/x", "invalid-url"),
    ]
    assert c.page(f"{site}/malformed-links/")["title"] == "Malformed links"
    assert c.page(f"{site}/malformed-links/next")["title"] == "After the malformed links"
    hrefs = [a["href"] for a in c.anchors[f"{site}/malformed-links/"]]
    summary = json.loads(c.result.stdout)  # every rendered page gave its title and links in time: 0 say so
    assert (summary["rendered"], summary["unextracted"]) == (2, 0)
    assert "http://[::1" in hrefs and "http://[::1/x" in hrefs and f"{site}/malformed-links/next" in hrefs


def test_a_page_answering_no_extraction_keeps_its_title_and_links_from_the_html_sent(crawl, site):
    # its own script keeps the page busy past every extraction bound (issue 33: a page lost its title and links
    # while another tab processed a 100,000-link page); what the server sent is read instead, and said
    c = crawl(f"{site}/busy/", "--no-image", "--scope", f"{site}/busy/")
    busy = c.page(f"{site}/busy/")
    assert busy["title"] == "Busy Page"
    assert [a["href"] for a in c.anchors[f"{site}/busy/"]] == [f"{site}/busy/next", f"{site}/about"]
    assert c.page(f"{site}/busy/next")["title"] == "After Busy"  # its links were followed
    from nitpicker_core.archive import open_archive

    with open_archive(c.archive) as reader:
        steps = [e["step"] for e in reader.page_errors(f"{site}/busy/")]
    assert steps == ["extract-from-source"]
    assert "stored without title and links" not in c.result.stderr
