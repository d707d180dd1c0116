"""The `structured-data` analyzer: the validator on hand-built items, extraction's limits on hostile input,
then its exact findings on one real crawl of /structured-data/ (JSON-LD, Microdata, RDFa, a script)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from nitpicker_structured_data import RULES, StructuredData
from nitpicker_structured_data.extract import extract
from nitpicker_structured_data.validate import Problem, node, rich_result, rich_results, validate, vocabulary
from support import ROOT

from nitpicker_core import Cell, PageInput, UsageError
from nitpicker_core.archive import open_archive


def findings(html: str, **settings) -> list[tuple[str, str, str]]:
    report = StructuredData().each_page(PageInput("http://localhost/p", html, {}, settings, "rendered"))
    return [(v.rule, v.location, v.message) for v in report.violations]


def ld(data: object) -> str:
    return f'<html><head><script type="application/ld+json">{json.dumps(data)}</script></head></html>'


# --- the validator on items built by hand ----------------------------------------------------------------


def test_a_valid_item_has_no_problem():
    offer = node("Offer", price="10.50", priceCurrency="EUR", availability="https://schema.org/InStock")
    assert validate(node("Product", name="Widget", offers=offer, sku=3)) == []


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (node("Prodcut", name="x"), [Problem("error", "Prodcut", "Prodcut is not a schema.org type")]),
        (
            node("Product", colour="red"),
            [Problem("error", "Product.colour", "colour is not a schema.org property")],
        ),
        (
            node("Product", headline="h"),
            [Problem("error", "Product.headline", "headline is not a property of Product")],
        ),
        (
            node("Offer", price="cheap", availability="in stock"),
            [
                Problem(
                    "error", "Offer.availability", "availability expects ItemAvailability, got 'in stock'"
                ),
            ],
        ),
        (
            node("Event", startDate="next friday", name="n"),
            [Problem("error", "Event.startDate", "startDate expects Date or DateTime, got 'next friday'")],
        ),
        (
            node("AggregateRating", ratingCount="many"),
            [Problem("error", "AggregateRating.ratingCount", "ratingCount expects Integer, got 'many'")],
        ),
        (
            node("Product", offers=node("Person", name="p")),
            [Problem("error", "Product.offers", "offers expects Demand or Offer, got a Person")],
        ),
        (
            node("Product", reviews="r"),
            [Problem("warning", "Product.reviews", "property reviews is superseded by review (deprecated)")],
        ),
        (
            node("Product", offers=node("Offer", price="x", seller=node("Organization", foo="1"))),
            [Problem("error", "Product.offers.seller.foo", "foo is not a schema.org property")],
        ),
        (node("https://example.org/vocab/Thing", whatever="x"), []),  # another vocabulary: not judged
    ],
)
def test_vocabulary_problems_name_the_property_path(item, expected):
    assert validate(item) == expected


def test_json_ld_without_a_schema_org_context_is_an_error():
    assert findings(ld({"@type": "Product", "name": "Lamp"})) == [
        (
            "invalid",
            "json-ld item 1, line 1 of the rendered page",
            "Product: Product has no @context naming schema.org: not read as schema.org",
        )
    ]


def test_loose_values_are_accepted():
    # text where a Thing is expected, a number given as a JSON number, a date-time, a subtype of the range
    item = node(
        "Article",
        author="Jane",
        wordCount=1200,
        datePublished="2024-05-01T10:00:00+09:00",
        publisher=node("NewsMediaOrganization", name="Paper"),
    )
    assert validate(item) == []


def test_rich_result_requirements_are_errors_and_recommendations_warnings():
    product = node(
        "Product",
        image="i",
        description="d",
        brand="b",
        sku="s",
        offers=node("Offer", priceCurrency="EUR", availability="InStock", priceValidUntil="2030-01-01"),
    )
    assert rich_result(product) == (
        "Product snippet",
        [
            Problem("error", "Product.name", "missing: required for the Product snippet rich result"),
            Problem(
                "error",
                "Product.offers.price",
                "missing (one of price, priceSpecification.price, lowPrice): required for the Product snippet "
                "rich result",
            ),
        ],
    )


def test_a_subtype_takes_the_nearest_feature_and_an_unrelated_type_none():
    restaurant = node("Restaurant", name="R", address="1 Road")
    feature, problems = rich_result(restaurant)
    assert feature == "Local business"
    assert [p.path for p in problems if p.severity == "error"] == []
    assert rich_result(node("Person", name="P")) == (None, [])


def test_each_problem_names_the_node_and_property_it_is_at():
    nutrition = node("NutritionInformation", fatContent="1 g")
    recipe = node("Recipe", name="Soup", image="i", nutrition=nutrition, colour="red")
    at = {p.path: (p.node, p.prop) for p in [*validate(recipe), *rich_result(recipe)[1]]}
    assert at["Recipe.colour"] == (recipe, "colour")  # a property there: next to it
    assert at["Recipe.author"] == (recipe, "author")  # missing: where it should be
    assert (
        at["Recipe.nutrition.calories"][0] is nutrition and at["Recipe.nutrition.calories"][1] == "calories"
    )


def test_the_stored_items_are_bounded_and_place_each_finding():
    from nitpicker_structured_data.tree import MAX_ENTRIES, MAX_TEXT

    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "x" * 500,
        "offers": {"@type": "Offer", "price": "1", "availability": "in stock"},
    }
    report = StructuredData().each_page(PageInput("http://localhost/p", ld(product), {}, {}, "rendered"))
    stored = report.cells["_items"]
    (item,) = stored["items"]
    assert [name for name, _ in item["root"]["props"]] == ["name", "offers"]
    assert len(item["root"]["props"][0][1][0]) == MAX_TEXT
    assert ["Product.offers.availability: availability expects ItemAvailability, got 'in stock'", "0.1.0",
            "availability"] in item["placed"]  # fmt: skip
    # missing in the nested Offer: placed at the Offer (key 0.1.0: the root's 2nd property, its 1st value)
    assert ["Product.offers.priceCurrency: missing: recommended for the Product snippet rich result", "0.1.0",
            "priceCurrency"] in item["placed"]  # fmt: skip
    assert ["Product.image: missing: recommended for the Product snippet rich result", "0", "image"] in item[
        "placed"
    ]
    many = {"@context": "https://schema.org", "@type": "ItemList", "itemListElement": list(range(3000))}
    big = StructuredData().each_page(PageInput("http://localhost/p", ld(many), {}, {}, "rendered"))
    assert big.cells["_items"]["omitted"] == 3000 - (MAX_ENTRIES - 1)  # the name and 999 values kept
    assert StructuredData().each_page(PageInput("http://localhost/p", "<p>none</p>", {}, {}, "rendered")).cells == {
        "items": Cell(0, ""), "errors": 0, "rich_results": Cell(0, "")
    }  # fmt: skip


def test_the_data_files_name_their_source_and_cover_the_asked_types():
    assert "schema.org release" in vocabulary().source["vocabulary"]
    data = rich_results()
    assert data["_source"]["read"] and data["_source"]["urls"].startswith("https://developers.google.com/")
    assert set(data["features"]) >= {
        "Article", "Product", "BreadcrumbList", "FAQPage", "Organization", "LocalBusiness", "Event", "Recipe",
        "VideoObject", "JobPosting",
    }  # fmt: skip
    for feature in data["features"].values():
        assert all(t in vocabulary().types for t in feature["types"])
        for nested in feature.get("nested", {}).values():
            assert nested in data["nested"]


# --- hostile input: bounded, a finding, never a crash --------------------------------------------------


def test_an_id_loop_is_read_once_and_not_followed():
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@id": "#a", "@type": "WebPage", "name": "A", "isPartOf": {"@id": "#b"}},
            {"@id": "#b", "@type": "WebSite", "name": "B", "hasPart": {"@id": "#a"}},
        ],
    }
    found = extract(ld(graph), "http://localhost/")
    assert [i.node.types for i in found.items] == [["WebPage"], ["WebSite"]]
    site = found.items[0].node.props["isPartOf"][0]
    assert site.ref and site.props["hasPart"] == ["#a"]  # the loop stops at the node being expanded
    assert findings(ld(graph)) == []


def test_deep_nesting_is_cut_at_max_depth_with_a_warning():
    data: dict = {"@context": "https://schema.org", "@type": "CreativeWork", "name": "0"}
    inner = data
    for n in range(30):
        inner["hasPart"] = {"@type": "CreativeWork", "name": str(n)}
        inner = inner["hasPart"]
    found = findings(ld(data), max_depth=5)
    assert found == [
        (
            "warning",
            "json-ld item 1, line 1 of the rendered page",
            "CreativeWork.hasPart.hasPart.hasPart.hasPart.hasPart: nested too deep: the levels below were not read",
        ),
        (
            "warning",
            "page",
            "not read whole: items nested more than 5 levels deep: the deeper levels were not read",
        ),
    ]


def test_json_nested_beyond_the_parser_is_a_warning():
    text = '{"@context":"https://schema.org","@type":"Thing"' + ',"subjectOf":{"@type":"Thing"' * 3000
    text += "}" * 3001
    html = f'<script type="application/ld+json">{text}</script>'
    assert findings(html) == [
        ("warning", "page", "not read whole: JSON-LD block 1: nested too deeply to parse")
    ]


def test_many_items_stop_at_max_items_in_bounded_time():
    items = [{"@type": "ListItem", "position": n, "name": f"n{n}"} for n in range(20_000)]
    data = {"@context": "https://schema.org", "@type": "ItemList", "itemListElement": items}
    started = time.monotonic()
    found = findings(ld(data), max_items=1000)
    assert time.monotonic() - started < 30
    assert found == [
        ("warning", "page", "not read whole: more than 1,000 items and nested items: the rest were not read")
    ]


def test_a_block_over_max_block_is_not_parsed():
    data = {"@context": "https://schema.org", "@type": "Thing", "name": "x" * 5000}
    size = len(json.dumps(data))
    assert findings(ld(data), max_block=1000) == [
        ("warning", "page", f"not read whole: JSON-LD block 1: {size:,} characters over the limit of 1,000")
    ]


def test_undecodable_bytes_are_read_past_and_reported():
    # a surrogate is what a page decoded with errors="surrogateescape" holds; lxml stops reading at one
    html = ld({"@context": "https://schema.org", "@type": "Thing", "name": "caf"}).replace("caf", "caf\udce9")
    assert findings(html) == [
        (
            "warning",
            "json-ld item 1, line 1 of the rendered page",
            "Thing: text with U+FFFD replacement characters: the page's bytes were not valid in its encoding",
        )
    ]


def test_bad_limits_are_usage_errors():
    with pytest.raises(UsageError, match="max_depth"):
        StructuredData().check({"max_depth": 0})


def test_every_rule_is_a_catalogue_check_with_a_japanese_text():
    rules = {r.id: r for r in StructuredData().rules()}
    assert set(rules) == set(RULES) == {"invalid", "warning", "rich-result-eligible", "rendered-only"}
    for rule in rules.values():
        assert rule.fix and rule.help_url.startswith("https://")
        assert set(rule.i18n["ja"]) == {"title", "description", "fix"}


# --- one real crawl of /structured-data/, analyzed with the CLI ------------------------------------------


@pytest.fixture(scope="module")
def archive(structured_data_archive: Path) -> Path:
    """/structured-data/ crawled and analyzed with the CLI (tests/conftest.py: the viewer's tree reads it too)."""
    return structured_data_archive


def by_page(archive: Path, site: str) -> dict[str, list[tuple[str, str, str]]]:
    with open_archive(archive) as reader:
        rows = reader.violations(analyzer="structured-data")
    out: dict[str, list[tuple[str, str, str]]] = {}
    for row in rows:
        out.setdefault(row["url"].removeprefix(site), []).append(
            (row["rule"], row["location"], row["message"])
        )
    return {url: sorted(found) for url, found in out.items()}


@pytest.mark.browser
def test_crawl_findings_are_exact(archive, site):
    assert by_page(archive, site) == {
        "/structured-data/jsonld": sorted(
            [
                (
                    "rich-result-eligible",
                    "json-ld item 1, line 9",
                    "Breadcrumb: BreadcrumbList has every required property",
                ),
                ("invalid", "json-ld item 2, line 10", "Product.colour: colour is not a schema.org property"),
                (
                    "warning",
                    "json-ld item 2, line 10",
                    "Product.reviews: property reviews is superseded by review (deprecated)",
                ),
                (
                    "invalid",
                    "json-ld item 2, line 10",
                    "Product.offers.availability: availability expects ItemAvailability, got 'in stock'",
                ),
                (
                    "invalid",
                    "json-ld item 3, line 11",
                    "FAQPage.mainEntity.acceptedAnswer: missing: required for the FAQ rich result",
                ),
            ]
        ),
        "/structured-data/microdata": sorted(
            [
                (
                    "rich-result-eligible",
                    "microdata item 1, line 9",
                    "Video: VideoObject has every required property",
                ),
                (
                    "invalid",
                    "microdata item 2, line 18",
                    "Product.offers: missing (one of offers, review, aggregateRating): required for the Product "
                    "snippet rich result",
                ),
                ("invalid", "microdata item 3, line 25", "Prodcut: Prodcut is not a schema.org type"),
            ]
        ),
        "/structured-data/rdfa": sorted(
            [
                (
                    "rich-result-eligible",
                    "rdfa item 1",
                    "Breadcrumb: BreadcrumbList has every required property",
                ),
                (
                    "invalid",
                    "rdfa item 2",
                    "VideoObject.uploadDate: uploadDate expects Date, got 'last week'",
                ),
                (
                    "invalid",
                    "rdfa item 2",
                    "VideoObject.thumbnailUrl: missing: required for the Video rich result",
                ),
            ]
        ),
        "/structured-data/scripted": sorted(
            [
                (
                    "rendered-only",
                    "json-ld item 1, line 4 of the rendered page",
                    "WebSite: differs from the HTML as sent (changed by a script)",
                ),
                (
                    "rendered-only",
                    "json-ld item 2, line 6 of the rendered page",
                    "BreadcrumbList: only in the rendered page (added by a script)",
                ),
                (
                    "rich-result-eligible",
                    "json-ld item 2, line 6 of the rendered page",
                    "Breadcrumb: BreadcrumbList has every required property",
                ),
            ]
        ),
    }


@pytest.mark.browser
def test_crawl_cells(archive, site):
    with open_archive(archive) as reader:
        cells = {
            (r["url"].removeprefix(site), r["column"]): r["value"]
            for r in reader.analysis(analyzer="structured-data")
        }
    assert cells[("/structured-data/jsonld", "items")] == 5
    assert cells[("/structured-data/jsonld", "errors")] == 3
    assert cells[("/structured-data/microdata", "rich_results")] == 1
    assert cells[("/structured-data/", "items")] == 0


def test_the_schemaorg_script_writes_the_data_file_it_ships(tmp_path):
    """bin/make_schemaorg.py on a two-term vocabulary: the compact form the validator reads."""
    graph = {
        "@graph": [
            {"@id": "schema:Thing", "@type": "rdfs:Class"},
            {"@id": "schema:Text", "@type": ["rdfs:Class", "schema:DataType"]},
            {"@id": "schema:URL", "@type": "rdfs:Class", "rdfs:subClassOf": {"@id": "schema:Text"}},
            {
                "@id": "schema:name",
                "@type": "rdf:Property",
                "schema:domainIncludes": {"@id": "schema:Thing"},
                "schema:rangeIncludes": {"@id": "schema:Text"},
            },
            {"@id": "schema:names", "@type": "rdf:Property", "schema:supersededBy": {"@id": "schema:name"}},
        ]
    }
    source = tmp_path / "in.jsonld"
    source.write_text(json.dumps(graph))
    out = tmp_path / "out.json"
    result = run_cli_script("bin/make_schemaorg.py", str(source), "--release", "0.1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["types"] == {"Text": [], "Thing": [], "URL": ["Text"]}
    assert data["datatypes"] == ["Text", "URL"]
    assert data["properties"]["name"] == {"domain": ["Thing"], "range": ["Text"]}
    assert data["superseded"] == {"names": "name"}
    assert data["_source"]["vocabulary"] == "schema.org release 0.1 (schemaorg-current-https.jsonld)"


def run_cli_script(script: str, *args: str):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, str(ROOT / script), *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.browser
def test_the_viewer_shows_the_items_as_trees_with_the_pages_text_escaped(archive, site):
    """The tab's HTML as served (tests/viewer/test_structured_tree.py drives it in Chromium)."""
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    client = create_app(archive, make_plugin_manager()).test_client()
    html = client.get("/page", query_string={"url": f"{site}/structured-data/jsonld"}).get_data(as_text=True)
    section = html[html.index('<h2 id="sd-items">') :]
    section = section[: section.index("</section>")]
    assert "(5)</h2>" in section and section.count('<details open class="sd-item"') == 5
    assert '<h2 id="sd-findings">' not in html  # the findings are in the tree, not listed again
    # the page's markup in a value is text
    assert (
        '<span class="sd-value">A widget &lt;img src=&#34;x&#34; onerror=&#34;window.pwned=1&#34;&gt;.</span>'
        in section
    )
    assert "<img" not in section


def test_page_input_reads_the_other_html_from_the_archive_by_its_hash():
    stored = {"s1": "<p>sent</p>", "r1": "<p>rendered</p>"}
    page = PageInput(
        "http://localhost/",
        stored["r1"],
        {"html_sha256": "r1", "source_sha256": "s1"},
        {},
        "rendered",
        stored.get,
    )
    assert page.html_as("rendered") == "<p>rendered</p>" and page.html_as("source") == "<p>sent</p>"
    assert (
        PageInput("http://localhost/", "x", {"html_sha256": "r1"}, {}, "rendered", stored.get).html_as(
            "source"
        )
        is None
    )
    assert (
        PageInput("http://localhost/", "x", {"source_sha256": "s1"}, {}).html_as("source") is None
    )  # no loader
