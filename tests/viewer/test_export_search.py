"""Export of table views, search, status classes, data-filled pickers, summary links, analyzer columns, favicon."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape

import pytest
from archives import SITE
from export_site import EVIL, build_export_site
from lxml import html as lxml_html


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    app = create_app(
        build_export_site(tmp_path_factory.mktemp("export") / "site.nitpicker"), make_plugin_manager()
    )
    yield app
    app.config["NITPICKER_CLOSE"]()


@pytest.fixture
def client(app):
    return app.test_client()


def get(client, path: str, status: int = 200):
    response = client.get(path)
    assert response.status_code == status, (path, response.get_data(as_text=True)[:400])
    return response


def doc(client, path: str):
    return lxml_html.fromstring(get(client, path).get_data(as_text=True))


def api(client, path: str):
    return get(client, "/api/" + path).get_json()


def shown_total(page) -> int:
    text = page.xpath("string(//p[contains(@class,'table-status')])")
    return int(re.search(r"of ([\d,]+)", text).group(1).replace(",", ""))


def test_export_streams_the_whole_filtered_result_not_one_page(client, monkeypatch):
    import nitpicker_viewer.export as export

    monkeypatch.setattr(export, "CHUNK", 4)  # several query calls, so the chunks must join without a gap
    everything = api(client, "pages?limit=1000")["items"]  # internal and external
    page = doc(client, "/pages?pageSize=5&external=1&sort=title&order=desc")
    links = {a.text: a.get("href") for a in page.xpath("//p[@class='exports']/a")}
    assert set(links) == {"CSV", "JSON"} and all("pageSize" not in href for href in links.values())
    response = get(client, links["JSON"])
    assert response.is_streamed and response.mimetype == "application/json"
    assert response.headers["Content-Disposition"] == 'attachment; filename="pages.json"'
    data = json.loads(response.get_data(as_text=True))
    assert data["total"] == len(everything) == len(data["items"]) > 5
    titles = [row["title"] or "" for row in data["items"]]
    assert [row["url"] for row in data["items"]] == [
        row["url"] for row in api(client, "pages?sort=title&order=desc&limit=1000")["items"]
    ]
    assert titles[0] >= titles[-1]

    response = get(client, links["CSV"])
    assert response.mimetype == "text/csv" and response.headers["Content-Disposition"].endswith('pages.csv"')
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0][:4] == ["URL", "Status", "Content type", "Title"]
    assert len(rows) - 1 == len(everything)
    evil = [row for row in rows if row[0] == SITE + "/shop/item-0"][0]
    assert evil[3] == "'" + EVIL  # a spreadsheet shows the text, never runs it


def test_export_keeps_filters_and_refuses_unknown_formats(client):
    data = json.loads(get(client, "/pages?status=4xx&external=1&export=json").get_data(as_text=True))
    assert {row["url"] for row in data["items"]} == {SITE + "/missing"}
    rows = list(
        csv.reader(io.StringIO(get(client, "/violations?rule=thin&export=csv").get_data(as_text=True)))
    )
    assert rows[0][:3] == ["URL", "Analyzer", "Priority"] and len(rows) > 2
    assert {row[1] for row in rows[1:]} == {"words"} and all(row[2] for row in rows[1:])  # priority filled in
    assert "export" in get(client, "/pages?export=xml", 400).get_data(as_text=True)
    for view in (
        "/resources",
        "/broken-links",
        "/external-links",
        "/images",
        "/violations/rules",
        "/duplicates",
        "/commits",
    ):
        assert doc(client, view).xpath("//p[@class='exports']/a[text()='JSON']"), view
        assert json.loads(get(client, view + "?export=json").get_data(as_text=True))["items"] is not None


def test_status_classes_filter_pages_and_resources(client):
    def urls(path):
        return {a.text for a in doc(client, path).xpath("//table[@id='pages']//td[1]/a")}

    assert urls("/pages?status=4xx&external=1") == {SITE + "/missing"}
    assert urls("/pages?status=5xx") == {SITE + "/boom"}
    assert urls("/pages?status=3xx") == {SITE + "/old"}
    assert urls("/pages?status=failed") == {SITE + "/down"}
    assert SITE + "/about" in urls("/pages?status=2xx") and SITE + "/missing" not in urls("/pages?status=2xx")
    assert urls("/pages?status=404&external=1") == {SITE + "/missing"}  # a code still works
    assert "status code" in get(client, "/pages?status=4x", 400).get_data(as_text=True)
    assert api(client, "pages?status_class=4xx")["total"] == 1
    resources = doc(client, "/resources?status=4xx")
    assert [a.text for a in resources.xpath("//table[@id='resources']//td[1]/a")] == [SITE + "/gone.js"]
    options = doc(client, "/pages").xpath("//select[@id='f-status']/option/@value")
    assert options[:6] == ["", "2xx", "3xx", "4xx", "5xx", "failed"] and {"200", "301", "404", "503"} <= set(
        options
    )


def test_pickers_are_filled_from_the_data(client):
    page = doc(client, "/violations")
    assert page.xpath("//select[@id='f-analyzer']/option/@value") == ["", "words"]
    assert page.xpath("//select[@id='f-rule']/option/@value") == ["", "thin"]
    picked = doc(client, "/violations?rule=thin")
    assert picked.xpath("//select[@id='f-rule']/option[@selected]/@value") == ["thin"]
    types = doc(client, "/resources").xpath("//select[@id='f-content_type']/option/@value")
    assert types == ["", "application/javascript", "text/css"]
    assert doc(client, "/analyzer-errors").xpath("//select[@id='f-analyzer']/option/@value") == ["", "words"]
    assert doc(client, "/pages").xpath("//select[@id='f-category']/option/@value") == ["", "html", "unknown"]
    # a value the data does not offer (an old shared link) stays selected rather than silently dropped
    stale = doc(client, "/violations?rule=gone-rule")
    assert stale.xpath("//select[@id='f-rule']/option[@selected]/@value") == ["gone-rule"]


def test_summary_numbers_lead_to_lists_of_that_many(client):
    page = doc(client, "/summary")
    rows = page.xpath("//table[@id='status-bars' or @id='type-bars']/tbody/tr[th/a]")
    assert len(rows) >= 6
    for row in rows:
        count = int(row.xpath("string(td[1])").replace(",", ""))
        href = row.xpath("th/a/@href")[0]
        assert shown_total(doc(client, unescape(href))) == count, href
    meta = page.xpath("//table[@id='meta-bars']/tbody/tr[th/a]")
    assert meta
    for row in meta:
        filled, total = (int(row.xpath(f"string(td[{i}])").replace(",", "")) for i in (1, 2))
        assert shown_total(doc(client, unescape(row.xpath("th/a/@href")[0]))) == total - filled
    cards = page.xpath("//ul[@class='cards']//a/@href")
    assert len(cards) == 4 and all(get(client, unescape(href)) for href in cards)


def test_search_finds_urls_and_titles_ignoring_case(client):
    assert [hit["url"] for hit in api(client, "search?q=ABOUT")["items"]] == [SITE + "/about"]
    assert [hit["url"] for hit in api(client, "search?q=busy")["items"]] == [SITE + "/boom"]  # by its title
    some = api(client, "search?q=item-&limit=5")
    assert len(some["items"]) == 5 and some["more"] is True
    assert [hit["url"] for hit in some["items"]] == sorted(hit["url"] for hit in some["items"])
    assert api(client, "search?q=100%25")["items"] == []  # % is text, not a wildcard
    assert api(client, "search?q=%20") == {"q": "", "items": [], "more": False}  # what the box sends on focus
    page = doc(client, "/search?q=shop/item-1")
    assert {a.text for a in page.xpath("//ul[@id='search-list']//a")} == {
        SITE + "/shop/item-1",
        SITE + "/shop/item-10",
        SITE + "/shop/item-11",
    }
    assert doc(client, "/pages").xpath(
        "//header//form[@role='search']//input[@name='q']/@aria-keyshortcuts"
    ) == ["/"]


def test_pages_table_adds_analyzer_columns_from_the_data(client):
    page = doc(client, "/pages")
    assert page.xpath("//form[@id='column-picker']//input[@name='acol']/@value") == ["words:count"]
    page = doc(client, "/pages?acol=words:count&sort=url")
    headers = page.xpath("//table[@id='pages']/thead//th/text()")
    assert "words: count" in [h.strip() for h in headers]
    counts = {
        row.xpath("string(td[1])").strip(): row.xpath("string(td[last()])").strip()
        for row in page.xpath("//table[@id='pages']/tbody/tr")
    }
    expected = {row["url"]: row["cells"]["count"] for row in api(client, "analysis?column=count")["items"]}
    assert counts[SITE + "/about"] == str(expected[SITE + "/about"])
    assert page.xpath("//form[contains(@class,'filters')]//input[@type='hidden'][@name='acol']/@value") == [
        "words:count"
    ]
    exported = json.loads(get(client, "/pages?acol=words:count&export=json").get_data(as_text=True))
    assert {
        row["url"]: row["acol:words:count"] for row in exported["items"] if row["url"] in expected
    } == expected
    detail = doc(client, f"/page?url={SITE}/about")
    assert detail.xpath("//table[@id='page-analysis']//td/text()")[:4] == [
        "words",
        "count",
        str(expected[SITE + "/about"]),
        "words in the HTML",
    ]


def test_favicon_is_served(client):
    response = get(client, "/favicon.ico")
    assert response.mimetype == "image/svg+xml" and b"<svg" in response.data
