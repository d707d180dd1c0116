"""violations, duplicates, mismatches, headers, error-kinds and inventory-runs, read through the CLI."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import CrawlErrorRecord, ScrapeResult

SECURE = {
    "content-security-policy": "default-src 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "strict-transport-security": "max-age=63072000",
}


def _page(path: str, title: str, description: str = "", status: int = 200, **extra) -> ScrapeResult:
    metadata = {"title": title, "description": description, **extra.pop("metadata", {})}
    return ScrapeResult(
        url=SITE + path,
        status=status,
        content_type="text/html",
        html=f"<title>{title}</title>",
        metadata=metadata,
        **extra,
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A small archive built through the scrape hooks: duplicates, headers and an inventory run."""
    pages = [
        _page("/", "Home", "Same words", headers=SECURE),
        _page(
            "/a",
            "Same",
            "Same words",
            headers={"x-frame-options": "SAMEORIGIN"},
            metadata={"canonical": SITE + "/", "og_title": "Same"},
        ),
        _page("/b", "Same", "Own words"),
        _page("/c", "Same", ""),
        _page("/gone", "Same", status=404),
        ScrapeResult(
            url="http://else.test/",
            status=200,
            content_type="text/html",
            is_external=True,
            is_target=False,
            metadata={"title": "Same"},
        ),
    ]

    def errors_and_inventory(pm, crawl):
        for kind, path in (("timeout", "/slow"), ("timeout", "/slower"), ("timeout", "/slow"), ("dns", "/x")):
            error = CrawlErrorRecord(
                url=SITE + path, kind=kind, message=f"{kind} at {path}", phase="preflight"
            )
            pm.hook.crawl_error(crawl=crawl, url=error.url, error=error)
        crawl.state["build-archive"].put_inventory_run("ab" * 32, {"listed": 3, "new": 1})

    return build_archive(tmp_path_factory.mktemp("made") / "made.nitpicker", pages, also=errors_and_inventory)


def test_violations_grouped_by_rule(query):
    # Every test_server page has <html lang>, and only / and /about have an <h1>
    grouped = query("violations", "--group-by-rule", "true")
    assert grouped["total"] == 1
    (no_h1,) = grouped["items"]
    assert (no_h1["analyzer"], no_h1["rule"], no_h1["severity"]) == ("lint", "no-h1", "warning")
    html_pages = query("headers")["totals"]["pages"]
    assert no_h1["count"] == no_h1["pages"] == html_pages - 2
    assert query("violations", "--rule", "html-lang")["total"] == 0


def test_violations_rows(query, qsite):
    rows = query("violations", "--analyzer", "lint", "--severity", "warning", "--limit", "1000")
    urls = [r["url"] for r in rows["items"]]
    assert urls == sorted(urls) and rows["total"] == len(urls)
    assert qsite + "/meta/full" in urls and qsite + "/" not in urls and qsite + "/about" not in urls
    assert {k: rows["items"][0][k] for k in ("message", "location", "snippet", "help_url")} == {
        "message": "the page has no h1",
        "location": "body",
        "snippet": "<body>",
        "help_url": "https://rules.test/no-h1",
    }
    one = query("violations", "--url", "/meta/full")
    assert [(r["url"], r["rule"]) for r in one["items"]] == [(qsite + "/meta/full", "no-h1")]
    assert query("violations", "--severity", "error")["total"] == 0
    assert query("violations", "--analyzer", "other")["total"] == 0
    desc = query("violations", "--sort", "url", "--order", "desc", "--limit", "2")
    assert [r["url"] for r in desc["items"]] == sorted(urls, reverse=True)[:2] and desc["next_offset"] == 2


def test_duplicates(query, made):
    assert query("duplicates")["total"] == 0  # every title of test_server is unique
    titles = query("duplicates", archive=made)
    # the 404 and the external page share the title too, but are not counted
    assert titles["items"] == [{"value": "Same", "count": 3, "urls": [SITE + "/a", SITE + "/b", SITE + "/c"]}]
    descriptions = query("duplicates", "--field", "description", archive=made)
    assert descriptions["field"] == "description"
    assert descriptions["items"] == [{"value": "Same words", "count": 2, "urls": [SITE + "/", SITE + "/a"]}]
    assert query("duplicates", "--field", "keywords", ok=False).returncode != 0


def test_mismatches(query, qsite, made):
    found = query("mismatches")
    # /meta/full declares its own URL as canonical: only og:title and og:description differ
    assert [(m["url"], m["kind"], m["page_value"], m["declared_value"]) for m in found["items"]] == [
        (qsite + "/meta/full", "og_description", "Test description", "OG Description"),
        (qsite + "/meta/full", "og_title", "Full Meta Page", "OG Title"),
    ]
    assert query("mismatches", "--kind", "og_title")["total"] == 1
    assert query("mismatches", "--kind", "canonical")["total"] == 0
    made_rows = query("mismatches", archive=made)["items"]
    assert [(m["url"], m["kind"], m["declared_value"]) for m in made_rows] == [
        (SITE + "/a", "canonical", SITE + "/")
    ]


def test_headers(query, qsite, made):
    crawled = query("headers", "--limit", "1000")
    totals = crawled["totals"]
    # test_server sends no security header at all
    assert totals["pages"] == crawled["total"] == len(crawled["items"]) > 30
    assert totals == {
        "pages": totals["pages"],
        "csp": 0,
        "x_frame_options": 0,
        "x_content_type_options": 0,
        "hsts": 0,
        "referrer_policy": 0,
        "permissions_policy": 0,
    }
    assert qsite + "/meta/full" in {p["url"] for p in crawled["items"]}
    assert all(u.startswith(qsite) for u in (p["url"] for p in crawled["items"]))
    made_all = query("headers", archive=made)
    assert made_all["totals"] == {
        "pages": 5,
        "csp": 1,
        "x_frame_options": 2,
        "x_content_type_options": 1,
        "hsts": 1,
        "referrer_policy": 0,
        "permissions_policy": 0,
    }
    home = made_all["items"][0]
    assert home["url"] == SITE + "/" and home["csp"] and home["hsts"]
    no_hsts = query("headers", "--missing", "hsts", archive=made)
    assert [p["url"] for p in no_hsts["items"]] == [SITE + p for p in ("/a", "/b", "/c", "/gone")]
    no_frame = query("headers", "--missing", "x_frame_options", archive=made)
    assert no_frame["total"] == 3 and no_frame["totals"]["pages"] == 5


def test_error_kinds(query, qsite, made):
    crawled = query("error-kinds")
    by_kind = {k["kind"]: k for k in crawled["items"]}
    assert set(by_kind) == {"redirect-loop", "connection-refused"}
    loop = by_kind["redirect-loop"]
    assert (loop["count"], loop["internal"], loop["external"], loop["events"]) == (1, 1, 0, 1)
    assert loop["examples"][0]["url"] == qsite + "/redirect/loop-a"
    assert "redirect loop" in loop["examples"][0]["message"]
    refused = by_kind["connection-refused"]
    assert (refused["count"], refused["external"]) == (1, 1)
    assert refused["examples"][0]["url"] == "http://127.0.0.1:1/nothing"
    made_kinds = query("error-kinds", "--examples", "1", archive=made)
    assert [(k["kind"], k["count"], k["events"]) for k in made_kinds["items"]] == [
        ("timeout", 2, 3),
        ("dns", 1, 1),
    ]
    assert made_kinds["items"][0]["examples"] == [{"url": SITE + "/slow", "message": "timeout at /slow"}]


def test_inventory_runs(query, made):
    assert query("inventory-runs")["total"] == 0
    runs = query("inventory-runs", archive=made)
    assert runs["total"] == 1
    assert runs["items"][0]["sha256"] == "ab" * 32 and runs["items"][0]["counts"] == {"listed": 3, "new": 1}
