"""Page detail in tabs, the link graph's legend and neighbourhood, and the security headers view (Flask client)."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive
from tabs_site import headered_pages


@pytest.fixture(scope="module")
def tabs_archive(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("tabs") / "site.nitpicker", headered_pages())


@pytest.fixture(scope="module")
def tabs_app(tabs_archive, viewer_over):
    with viewer_over(tabs_archive) as app:
        yield app


@pytest.fixture
def tclient(tabs_app):
    return tabs_app.test_client()


def _rows(html: str) -> list[str]:
    body = html.split('id="security-headers"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [row for row in body.split("<tr")[1:]]


def test_security_headers_view_counts_filters_and_marks_each_header(tclient):
    html = tclient.get("/security-headers").get_data(as_text=True)
    assert '<a href="/security-headers"' in html  # in the menu
    # the internal HTML pages (the `headers` query's: the 404 too), each header sent or missing in words
    rows = _rows(html)
    assert len(rows) == 4, rows
    home = next(r for r in rows if f">{SITE}/<" in r)
    assert home.count("h-yes") == 6 and "h-no" not in home
    about = next(r for r in rows if f">{SITE}/about<" in r)
    assert about.count("h-yes") == 1 and about.count("h-no") == 5
    # the cards: pages sending each header, and a link to those without it
    card = html.split('data-header="csp"', 1)[1].split("</li>", 1)[0]
    assert "2 / 4" in card and "2 pages without it" in card and "missing=csp" in card
    card = html.split('data-header="hsts"', 1)[1].split("</li>", 1)[0]
    assert "1 / 4" in card and "3 pages without it" in card
    # filtered by header: only the pages without it
    rows = _rows(tclient.get("/security-headers?missing=x_frame_options").get_data(as_text=True))
    assert len(rows) == 3 and not any(f">{SITE}/<" in r for r in rows)
    rows = _rows(tclient.get("/security-headers?missing=csp").get_data(as_text=True))
    assert len(rows) == 2 and f">{SITE}/blog/<" in rows[0] and f">{SITE}/missing<" in rows[1]
    exported = tclient.get("/security-headers?missing=csp&export=csv").get_data(as_text=True)
    assert len(exported.splitlines()) == 3 and "/blog/" in exported.splitlines()[1], exported
    ja = tclient.get("/security-headers", headers={"Accept-Language": "ja"}).get_data(as_text=True)
    assert "<h1>セキュリティヘッダー</h1>" in ja


def test_page_detail_is_grouped_in_panels_each_named_by_a_section_link(tclient):
    from lxml import html as lxml_html

    page = lxml_html.fromstring(tclient.get(f"/page?url={SITE}/").get_data(as_text=True))
    links = page.xpath("//nav[@id='page-tabs']//a/@href")
    assert links == [
        "#t-overview",
        "#t-issues",
        "#t-links",
        "#t-images",
        "#t-resources",
        "#t-structured",
        "#t-analysis",
        "#t-history",
        "#t-screenshot",
        "#t-versions",
        "#t-source",
    ]
    for href in links:  # without scripts every panel is shown (no hidden attribute) and its link jumps to it
        panel = page.get_element_by_id(href[1:])
        assert "tab-panel" in panel.get("class") and panel.get("hidden") is None
    # the old section anchors stay inside their panel, so a link to #inbound still opens the links tab
    assert page.get_element_by_id("inbound").xpath("ancestor::div[@id='t-links']")
    assert page.get_element_by_id("rendered").xpath("ancestor::div[@id='t-source']")
    assert page.get_element_by_id("tags").xpath("ancestor::div[@id='t-overview']")
    graph = page.xpath("//p[@id='page-graph-link']/a/@href")[0]
    assert graph.startswith("/graph?") and "depth=1" in graph and "url=http" in graph


def test_graph_page_has_a_legend_and_a_neighbourhood_of_one_page(tclient):
    from lxml import html as lxml_html

    whole = lxml_html.fromstring(tclient.get("/graph").get_data(as_text=True))
    legend = whole.get_element_by_id("graph-legend").text_content()
    assert all(words in legend for words in ("4xx or 5xx", "more links", "A link between two pages"))
    assert "/api/link-graph" in whole.get_element_by_id("graph").get("data-api")
    assert not whole.xpath("//*[@id='graph-around']")

    around = lxml_html.fromstring(tclient.get(f"/graph?url={SITE}/about&depth=1").get_data(as_text=True))
    canvas = around.get_element_by_id("graph")
    assert canvas.get("data-centre") == SITE + "/about"
    assert "/graph/around?" in canvas.get("data-api") and "depth=1" in canvas.get("data-api")
    assert "within 1 links of" in around.get_element_by_id("graph-around").text_content()

    one = tclient.get(canvas.get("data-api")).get_json()
    # /about links to / and is linked from / and /blog/: those three pages, not /missing (two links away)
    assert [n["url"] for n in one["nodes"]] == [SITE + "/", SITE + "/about", SITE + "/blog/"]
    assert {(e["source"], e["target"]) for e in one["items"]} == {
        (SITE + "/", SITE + "/about"),
        (SITE + "/about", SITE + "/"),
        (SITE + "/blog/", SITE + "/about"),
    }
    assert one["truncated"] is False
    two = tclient.get(f"/graph/around?url={SITE}/about&depth=2").get_json()
    # two links away: /missing (from /) joins, the external page never does
    assert [n["url"] for n in two["nodes"]] == [
        SITE + "/",
        SITE + "/about",
        SITE + "/blog/",
        SITE + "/missing",
    ]
    assert (SITE + "/blog/", SITE + "/") in {(e["source"], e["target"]) for e in two["items"]}
    assert next(n for n in two["nodes"] if n["url"].endswith("/missing"))["status"] == 404
    assert tclient.get("/graph/around").status_code == 400
