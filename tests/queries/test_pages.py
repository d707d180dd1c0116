"""summary, pages, page-detail and page-html against the crawled test_server archive."""

from __future__ import annotations


def urls(result):
    return [item["url"] for item in result["items"]]


def test_summary_counts_and_statuses(query):
    summary = query("summary")
    internal, external = summary["counts"]["internal"], summary["counts"]["external"]
    assert internal["urls"] > internal["pages_loose"] > internal["pages"] >= 30
    assert external["urls"] == 7 and external["pages"] == 4
    status = summary["status"]
    codes = {row["status"]: row["count"] for row in status["by_code"]}
    assert codes[404] == codes[500] == codes[403] == 1 and codes[301] >= 1 and codes[200] > 30
    kinds = {row["kind"]: row["count"] for row in status["failed_by_kind"]}
    assert kinds == {"connection-refused": 1, "redirect-loop": 1}
    assert sum(kinds.values()) == status["failed"] == 2
    assert status["skipped"] == 1
    assert status["not_checked"] == 0  # every URL of this crawl was requested
    assert (
        sum(codes.values())
        + status["redirect_hops"]
        + status["skipped"]
        + status["failed"]
        + status["not_checked"]
        == status["total"]
    )
    assert status["total"] == internal["urls"] + external["urls"]


def test_summary_fill_rates(query):
    fill = {row["field"]: row for row in query("summary")["metadata_fill"]}
    assert (
        fill["title"]["filled"]
        == fill["title"]["total"]
        == query("pages", "--strict", "--external", "false")["total"]
    )
    assert fill["description"]["filled"] == 1 and fill["og_image"]["filled"] == 1
    assert fill["lang"]["rate"] == 1.0 and 0 < fill["canonical"]["rate"] < 0.1


def test_pages_loose_and_strict(query, qsite):
    loose = urls(query("pages", "--limit", "1000"))
    strict = urls(query("pages", "--strict", "--limit", "1000"))
    assert qsite + "/redirect/loop-a" in loose and qsite + "/redirect/loop-a" not in strict
    assert qsite + "/exclude/secret/hidden" in loose and "http://127.0.0.1:1/nothing" in loose
    assert qsite + "/redirect/start" not in loose  # redirects are not pages
    assert qsite + "/options/data.json" not in loose and qsite + "/reuse/pic.png" not in loose
    assert set(strict) < set(loose) and qsite + "/error-status/not-found" in strict


def test_pages_filters(query, qsite):
    assert urls(query("pages", "--status", "404")) == [qsite + "/error-status/not-found"]
    assert urls(query("pages", "--url", "*/redirect/d*")) == [qsite + "/redirect/dest"]
    assert set(urls(query("pages", "--url", "redirect/"))) == {
        qsite + p for p in ("/redirect/", "/redirect/dest", "/redirect/loop-a")
    }
    assert urls(query("pages", "--tag", "Google Analytics")) == [qsite + "/analytics/"]
    assert urls(query("pages", "--jsonld-type", "Article")) == [qsite + "/jsonld/valid"]
    assert set(urls(query("pages", "--category", "json"))) == {
        qsite + "/options/data.json",
        qsite.replace("localhost", "127.0.0.1") + "/options/data.json",
    }
    external = query("pages", "--external", "--strict")
    assert external["total"] == 4 and all(i["is_external"] for i in external["items"])
    missing = urls(query("pages", "--missing", "description", "--strict", "--limit", "1000"))
    assert qsite + "/meta/minimal" in missing and qsite + "/meta/full" not in missing


def test_pages_sorting_and_paging(query, qsite):
    first = query("pages", "--sort", "status", "--order", "desc", "--limit", "2")
    assert [i["status"] for i in first["items"]] == [500, 404] and first["next_offset"] == 2
    rest = query("pages", "--sort", "status", "--order", "desc", "--limit", "2", "--offset", "2")
    assert rest["items"][0]["status"] == 403 and rest["total"] == first["total"]
    item = query("pages", "--url", "/meta/full")["items"][0]
    assert item["title"] == "Full Meta Page" and item["category"] == "html" and item["lang"] == "ja"


def test_pages_refuses_bad_params(query):
    assert query("pages", "--category", "spreadsheet", ok=False).returncode != 0
    assert query("pages", "--sort", "nope", ok=False).returncode != 0


def test_page_detail_redirect_destination(query, qsite):
    detail = query("page-detail", "--url", qsite + "/redirect/dest")
    assert detail["page"]["title"] == "Redirect Destination" and detail["page"]["category"] == "html"
    inbound = {i["source"]: i for i in detail["inbound"]["items"]}
    assert inbound[qsite + "/redirect/"]["hrefs"] == [qsite + "/redirect/start"]
    assert inbound[qsite + "/redirect/"]["texts"] == ["Start"]
    assert {s["url"] for s in detail["redirect_sources"]} == {
        qsite + "/redirect/start",
        qsite + "/redirect/middle",
    }
    out = detail["outbound"]
    assert [(o["href"], o["text"], o["status"]) for o in out] == [
        (qsite + "/redirect/start", "Start again", 301)
    ]


def test_page_detail_outbound_and_errors(query, qsite):
    detail = query("page-detail", "--url", qsite + "/error-status/")
    statuses = {o["href"].rsplit("/", 1)[1]: o["status"] for o in detail["outbound"]}
    assert statuses == {"not-found": 404, "server-error": 500, "forbidden": 403, "normal": 200}
    assert detail["inbound"]["total"] == 0
    loop = query("page-detail", "--url", qsite + "/redirect/loop-a")
    assert [e["kind"] for e in loop["crawl_errors"]] == ["redirect-loop"]
    hidden = query("page-detail", "--url", qsite + "/exclude/secret/hidden")
    assert hidden["skip_reason"] == "excluded"
    top = query("page-detail", "--url", qsite + "/")
    assert top["images"] >= 2 and top["inbound"]["items"][0]["source"] == qsite + "/about"
    assert query("page-detail", "--url", qsite + "/no-such-page", ok=False).returncode != 0


def test_page_html(query, qsite):
    full = query("page-html", "--url", qsite + "/about")
    assert (
        full["truncated"] is False
        and "<h1>About</h1>" in full["html"]
        and full["length"] == len(full["html"])
    )
    cut = query("page-html", "--url", qsite + "/about", "--max-chars", "20")
    assert cut["truncated"] is True and len(cut["html"]) == 20 and cut["length"] == full["length"]
    assert query("page-html", "--url", qsite + "/redirect/start")["html"] is None


def test_page_detail_lists_resources_and_tags(query, qsite):
    reuse = query("page-detail", "--url", qsite + "/reuse/")
    assert reuse["resources"] == {
        "total": 1,
        "items": [
            {
                "url": qsite + "/reuse/pic.png",
                "status": 200,
                "content_type": "image/png",
                "content_length": 70,
                "compression": "",
                "cdn": "",
                "is_external": False,
            }
        ],
    }
    assert reuse["tags"] == []
    analytics = query("page-detail", "--url", qsite + "/analytics/")
    assert analytics["resources"] == {"total": 0, "items": []}
    assert analytics["tags"] == [
        {
            "provider": "Google Tag Manager",
            "category": "tag-manager",
            "external_id": "GTM-ABC1234",
            "version": "",
            "confidence": 100,
        },
        {
            "provider": "Google Analytics",
            "category": "analytics",
            "external_id": "G-XXXX1234",
            "version": "GA4",
            "confidence": 100,
        },
        {
            "provider": "WordPress",
            "category": "generator",
            "external_id": "",
            "version": "6.4",
            "confidence": 100,
        },
    ]
    assert (
        query("page-detail", "--url", qsite + "/reuse/", "--resource-limit", "1")["resources"]
        == reuse["resources"]
    )
    # Sorted by URL; the limit cuts the list, the total still counts every resource of the page.
    svg = {
        "status": 200,
        "content_type": "image/svg+xml",
        "content_length": 101,
        "compression": "",
        "cdn": "",
        "is_external": False,
    }
    lazy = query("page-detail", "--url", qsite + "/lazy/")["resources"]
    assert lazy == {"total": 4, "items": [{"url": qsite + f"/lazy/img/{n}.svg", **svg} for n in range(4)]}
    cut = query("page-detail", "--url", qsite + "/lazy/", "--resource-limit", "2")["resources"]
    assert cut == {"total": 4, "items": lazy["items"][:2]}
    assert query("page-detail", "--url", qsite + "/", "--resource-limit", "0", ok=False).returncode == 1
