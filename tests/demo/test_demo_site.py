"""The demo shop (nitpicker_demo) through Flask's test client: what each version serves, and what differs."""

from __future__ import annotations

import json
import re

import pytest

from nitpicker_demo import create_app


@pytest.fixture(scope="module")
def shop():
    return {version: create_app(version).test_client() for version in (1, 2)}


def _hrefs(response) -> set[str]:
    return set(re.findall(r'href="([^"]+)"', response.get_data(as_text=True)))


def test_the_home_page_leads_to_every_kind_of_finding(shop):
    page = shop[1].get("/showcase/")
    assert page.status_code == 200 and page.content_type.startswith("text/html")
    hrefs = _hrefs(page)
    assert {
        "/showcase/products/",
        "/showcase/blog/",
        "/showcase/ja/",
        "/showcase/about",
        "/showcase/contact",
        "/showcase/old-catalogue",
        "/showcase/sale",
        "/showcase/promo",
        "/showcase/stores",
    } <= hrefs
    # the partner links are on another host (127.0.0.1 instead of localhost): external links, one of them gone
    assert any(h.startswith("http://127.0.0.1:") and h.endswith("/showcase/partner-gone") for h in hrefs)
    assert shop[1].get("/").headers["Location"].endswith("/showcase/")


def test_broken_redirected_and_failing_urls(shop):
    client = shop[1]
    missing = client.get("/showcase/old-catalogue")
    assert missing.status_code == 404 and missing.content_type.startswith("text/plain")
    assert client.get("/showcase/products/99").status_code == 404
    assert client.get("/showcase/stores").status_code == 500
    sale = client.get("/showcase/sale")
    assert sale.status_code == 301 and sale.headers["Location"].endswith("/showcase/products/")
    promo = client.get("/showcase/promo")
    assert promo.status_code == 302 and promo.headers["Location"].endswith("/showcase/sale")  # a chain


def test_duplicates_mismatches_and_structured_data(shop):
    client = shop[1]
    four, five = (client.get(f"/showcase/products/{n}").get_data(as_text=True) for n in (4, 5))
    title = re.compile(r"<title>(.*?)</title>")
    assert title.search(four).group(1) == title.search(five).group(1)  # a duplicate title
    six = client.get("/showcase/products/6").get_data(as_text=True)
    assert (
        'rel="canonical" href="http://localhost/showcase/products/5"' in six
        and 'og:title" content="Cheap' in six
    )
    ld = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)
    assert json.loads(ld.search(four).group(1))["@type"] == "Product"
    with pytest.raises(json.JSONDecodeError):  # product 3's JSON-LD does not parse
        json.loads(ld.search(client.get("/showcase/products/3").get_data(as_text=True)).group(1))


def test_japanese_accessibility_and_markup_pages(shop):
    client = shop[1]
    company = client.get("/showcase/ja/company").get_data(as_text=True)
    assert '<html lang="ja">' in company and "をを" in company and "ｻｰﾋﾞｽ" in company
    about = client.get("/showcase/about").get_data(as_text=True)
    assert "<html>" in about and re.search(r"<img [^>]*team\.svg\"(?![^>]*alt=)", about)
    contact = client.get("/showcase/contact").get_data(as_text=True)
    assert contact.count('id="address"') == 2 and "<center>" in contact
    banner = client.get("/showcase/img/banner.svg")
    assert banner.content_type == "image/svg+xml" and 'width="2400"' in banner.get_data(as_text=True)


def test_version_2_adds_removes_fixes_and_breaks(shop):
    one, two = shop[1], shop[2]
    assert "/showcase/old-catalogue" in _hrefs(one.get("/showcase/")) - _hrefs(two.get("/showcase/"))
    assert "/showcase/products/8" in _hrefs(one.get("/showcase/products/"))
    assert "/showcase/products/9" in _hrefs(two.get("/showcase/products/"))
    assert (one.get("/showcase/products/9").status_code, two.get("/showcase/products/9").status_code) == (
        404,
        200,
    )
    assert (one.get("/showcase/products/8").status_code, two.get("/showcase/products/8").status_code) == (
        200,
        404,
    )
    assert "/showcase/products/8" in _hrefs(two.get("/showcase/blog/5"))  # a link broken by version 2
    assert two.get("/showcase/blog/6").status_code == 200
    assert "をを" not in two.get("/showcase/ja/company").get_data(as_text=True)
    assert "showroomMap" in one.get("/showcase/blog/4").get_data(as_text=True)
    assert "showroomMap" not in two.get("/showcase/blog/4").get_data(as_text=True)
    assert "new colours" in two.get("/showcase/products/2").get_data(as_text=True)


def test_only_known_versions():
    with pytest.raises(ValueError, match="versions 1, 2"):
        create_app(3)


def test_the_test_site_mounts_the_shop_as_version_1():
    from test_server import create_app as test_site

    client = test_site().test_client()
    assert "/showcase/old-catalogue" in _hrefs(client.get("/showcase/"))
    assert client.get("/showcase/products/8").status_code == 200


def test_the_demo_is_not_written_into_another_sites_archive(tmp_path):
    from archives import build_archive
    from support import run_cli

    archive = build_archive(tmp_path / "site.nitpicker")
    before = archive.read_bytes()
    refused = run_cli("pipeline", "-o", "site.nitpicker", cwd=tmp_path, timeout=300)
    assert refused.returncode == 1
    assert (
        refused.stderr.strip()
        .splitlines()[-1]
        .startswith("nitpicker: error: site.nitpicker holds a crawl of http://")
    ), refused.stderr
    assert "not of the demo shop" in refused.stderr and archive.read_bytes() == before


def test_pages_answer_if_none_match_with_304(shop):
    # so `crawl --update` of the demo shows conditional requests: unchanged pages come back as 304
    first = shop[1].get("/showcase/products/1")
    tag = first.headers["ETag"]
    assert shop[1].get("/showcase/products/1", headers={"If-None-Match": tag}).status_code == 304
    assert shop[2].get("/showcase/products/1", headers={"If-None-Match": tag}).status_code == 304  # unchanged
    changed = shop[1].get("/showcase/products/2").headers["ETag"]
    assert shop[2].get("/showcase/products/2", headers={"If-None-Match": changed}).status_code == 200
