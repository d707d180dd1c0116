"""pages-by-tag, tag-counts, pages-by-jsonld-type, jsonld-counts and page-jsonld, read through the CLI."""

from __future__ import annotations


def test_pages_by_tag(query, qsite):
    gtm = query("pages-by-tag", "--provider", "google tag manager", "--external-id", "GTM-ABC1234")
    assert gtm["total"] == 1
    (row,) = gtm["items"]
    assert (row["url"], row["provider"], row["category"], row["title"]) == (
        qsite + "/analytics/",
        "Google Tag Manager",
        "tag-manager",
        "Analytics",
    )
    generators = query("pages-by-tag", "--provider", "WordPress")
    assert [(r["url"], r["version"]) for r in generators["items"]] == [(qsite + "/analytics/", "6.4")]
    unknown = query("pages-by-tag", "--provider", "Google Tag Manager", "--external-id", "GTM-NOPE")
    assert unknown["total"] == 0
    assert query("pages-by-tag", ok=False).returncode != 0


def test_tag_counts(query):
    counts = query("tag-counts")
    rows = {(r["provider"], r["external_id"]): r for r in counts["items"]}
    assert rows[("Google Tag Manager", "GTM-ABC1234")]["pages"] == 1
    assert rows[("Google Analytics", "G-XXXX1234")]["versions"] == ["GA4"]
    wordpress = rows[("WordPress", "")]
    assert wordpress["category"] == "generator" and wordpress["versions"] == ["6.4"]
    # /meta/full says generator "Hand Written 1.0": a second generator
    generators = query("tag-counts", "--category", "generator")
    assert {p["provider"] for p in generators["providers"]} == {"WordPress", "Hand Written"}
    assert all(p["pages"] == 1 for p in generators["providers"]) and generators["total"] == 2


def test_pages_by_jsonld_type(query, qsite):
    articles = query("pages-by-jsonld-type", "--type", "Article")
    assert [(p["url"], p["scripts"], p["title"]) for p in articles["items"]] == [
        (qsite + "/jsonld/valid", 1, "JSON-LD Valid")
    ]
    # types are the top-level @type values; the nested author Person is not one
    assert query("pages-by-jsonld-type", "--type", "Person")["total"] == 0
    assert query("pages-by-jsonld-type", "--type", "article")["total"] == 0
    assert query("pages-by-jsonld-type", ok=False).returncode != 0


def test_jsonld_counts(query):
    counts = query("jsonld-counts")
    assert counts["types"] == [{"type": "Article", "scripts": 1, "pages": 1}]
    kinds = {k["kind"]: k for k in counts["kinds"]}
    assert (kinds["jsonld"]["scripts"], kinds["jsonld"]["errors"]) == (2, 1)
    assert (kinds["speculationrules"]["scripts"], kinds["speculationrules"]["errors"]) == (1, 0)
    assert counts["parse_errors"] == 1 and counts["pages_with_parse_errors"] == 1


def test_page_jsonld(query, qsite):
    valid = query("page-jsonld", "--url", qsite + "/jsonld/valid")
    assert valid["total"] == 1
    (script,) = valid["items"]
    assert script["kind"] == "jsonld" and script["types"] == ["Article"] and script["error"] == ""
    assert script["parsed"]["headline"] == "Valid JSON-LD" and '"Article"' in script["raw"]
    broken = query("page-jsonld", "--url", qsite + "/jsonld/invalid")["items"]
    assert broken[0]["parsed"] is None and broken[0]["error"].startswith("Expecting value")
    rules = query("page-jsonld", "--url", qsite + "/jsonld/speculation")["items"]
    assert rules[0]["kind"] == "speculationrules"
    assert rules[0]["parsed"]["prerender"][0]["urls"] == ["/jsonld/valid"]
    assert query("page-jsonld", "--url", qsite + "/about")["items"] == []
    missing = query("page-jsonld", "--url", qsite + "/no-such-page", ok=False)
    assert missing.returncode == 1 and "no page" in missing.stderr
