"""End-to-end: scope, exclusions, options, robots.txt, pagination and URL normalisation."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser


def test_scope_subtree_and_out_of_scope_links(crawl, site):
    c = crawl(f"{site}/scope/blog/", "--no-image", shared=True)
    for path in ("/scope/blog/", "/scope/blog/post-1", "/scope/blog/post-2"):
        assert c.page(site + path)["is_target"] and not c.page(site + path)["is_external"]
    docs = c.page(f"{site}/scope/docs/")  # same host, outside the start path: internal, checked, not crawled
    assert (docs["is_external"], docs["is_target"], docs["status"], docs["title"]) == (
        False,
        False,
        200,
        "Docs Top",
    )
    assert docs["extra"]["outside_scope"] is True and c.anchors[f"{site}/scope/docs/"] == []
    assert f"{site}/scope/docs/api" not in c.pages


def test_scope_with_two_roots(crawl, site):
    c = crawl(f"{site}/scope/blog/", "--scope", f"{site}/scope/docs/", "--no-image")
    assert c.page(f"{site}/scope/docs/")["is_target"] and c.page(f"{site}/scope/docs/api")["is_target"]
    assert not any("/scope/admin/" in url for url in c.pages)


def test_exclude_glob(crawl, site):
    c = crawl(f"{site}/exclude/", "--exclude", "/exclude/secret/*", "--no-image")
    hidden = c.page(f"{site}/exclude/secret/hidden")
    assert hidden["is_skipped"] and hidden["skip_reason"] == "excluded" and hidden["title"] is None
    assert c.page(f"{site}/exclude/page-a")["is_target"] and c.page(f"{site}/exclude/page-b")["is_target"]
    assert c.info["options"]["excludes"] == ["/exclude/secret/*"]


def test_exclude_keyword(crawl, site):
    c = crawl(f"{site}/exclude/", "--exclude-keyword", "FORBIDDEN_KEYWORD", "--no-image")
    b = c.page(f"{site}/exclude/page-b")
    assert b["is_skipped"] and not b["is_target"]
    assert json.loads(b["skip_reason"]) == {
        "url": f"{site}/exclude/page-b",
        "matchedText": "FORBIDDEN_KEYWORD",
        "excludeKeywords": ["FORBIDDEN_KEYWORD"],
    }
    assert c.page(f"{site}/exclude/page-a")["is_target"]


def test_exclude_url_prefix(crawl, site, external):
    c = crawl(f"{site}/exclude/", "--exclude-url", f"{external}/exclude/external-a", "--no-image")
    assert c.page(f"{external}/exclude/external-a")["skip_reason"] == "excluded"
    assert c.page(f"{external}/exclude/external-b")["title"] == "External B"
    assert c.info["options"]["exclude_urls"] == [f"{external}/exclude/external-a"]


def test_no_fetch_external(crawl, site, external):
    c = crawl(f"{site}/options/", "--no-fetch-external", "--no-image")
    ext = c.page(f"{external}/options/external")
    assert (ext["is_external"], ext["scraped"], ext["status"], ext["title"]) == (True, False, None, None)
    assert c.page(f"{site}/options/page-a?tab=1")["is_target"]


def test_fetch_external_and_non_html(crawl, site, external):
    c = crawl(f"{site}/options/", "--no-image")
    data = c.page(f"{site}/options/data.json")
    assert (data["content_type"], data["is_target"], data["is_external"]) == ("application/json", True, False)
    ext_data = c.page(f"{external}/options/data.json")
    assert (ext_data["content_type"], ext_data["is_target"], ext_data["is_external"]) == (
        "application/json",
        False,
        True,
    )


def test_disable_queries(crawl, site):
    c = crawl(f"{site}/options/", "--disable-queries", "--no-image")
    assert f"{site}/options/page-a" in c.pages and f"{site}/options/page-a?tab=1" not in c.pages


def test_query_distinct_and_phpsessid(crawl, site):
    c = crawl(f"{site}/query/", "--no-image")
    assert c.page(f"{site}/query/?kind=alpha")["title"] == "Query Alpha"
    assert c.page(f"{site}/query/?kind=beta")["title"] == "Query Beta"
    assert not any("PHPSESSID" in url for url in c.pages)


def test_robots_txt(crawl, site):
    c = crawl(f"{site}/private/", "--no-image")
    page = c.page(f"{site}/private/")
    assert page["is_skipped"] and page["skip_reason"] == "blocked by robots.txt"
    ignored = crawl(f"{site}/private/", "--ignore-robots", "--no-image", name="ignored")
    assert ignored.page(f"{site}/private/page")["title"] == "Private Page"


def test_pagination_prediction_discards_misses(crawl, site):
    c = crawl(f"{site}/pagination/", "--parallels", "3", "--no-image")
    for n in range(1, 11):
        assert c.page(f"{site}/pagination/page/{n}")["status"] == 200
    assert not any(f"/pagination/page/{n}" in url for url in c.pages for n in range(11, 16))


def test_list_mode_crawls_only_the_list_and_refuses_append(crawl, site, cli, tmp_path):
    c = crawl("--list", f"{site}/recursive/page-a,{site}/about", "--no-image")
    assert c.page(f"{site}/recursive/page-a")["is_target"] and c.page(f"{site}/about")["is_target"]
    assert not c.page(f"{site}/recursive/page-b")["is_target"]  # linked: checked, not crawled
    # issue 33: --append took the list's archive for a site crawl and crawled the new root as a site
    before = c.archive.read_bytes()
    refused = cli("crawl", "--append", str(c.archive), f"{site}/scope/docs/", cwd=tmp_path, timeout=120)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"nitpicker: error: {c.archive.name} was crawled from a URL list; --append adds roots to a site crawl "
        "(crawl the other URLs with --list into a new archive)"
    ]
    assert c.archive.read_bytes() == before


def test_max_excluded_depth_crawls_out_of_scope_pages_that_deep(crawl, site):
    c = crawl(f"{site}/scope/blog/", "--max-excluded-depth", "1", "--no-image")
    docs = c.page(f"{site}/scope/docs/")
    # rendered and followed like a page of the scope: the flag widened it
    assert docs["is_target"] and not docs["is_external"] and docs["title"] == "Docs Top"
    assert "outside_scope" not in docs["extra"]
    assert [a["href"] for a in c.anchors[f"{site}/scope/docs/"]] == [f"{site}/scope/docs/api"]
    api = c.page(f"{site}/scope/docs/api")  # two links away: checked only
    assert api["status"] == 200 and not api["is_target"] and c.anchors[f"{site}/scope/docs/api"] == []
    assert not api["is_external"] and api["extra"]["outside_scope"] is True


def test_robots_crawl_delay_spaces_requests_to_the_host(crawl, site):
    from nitpicker_core.archive import open_archive

    slow = crawl(f"{site}/recursive/", "--user-agent", "SlowBot", "--no-image", "--parallels", "4")
    with open_archive(slow.archive) as reader:
        seconds = reader.commits()[0]["stats"]["seconds"]
    # robots.txt gives SlowBot "Crawl-delay: 2": the four pages' preflights start at least 2 s apart
    assert seconds >= 6
    assert slow.page(f"{site}/recursive/page-c")["title"] == "Page C"
    assert slow.info["options"]["user_agent"] == "SlowBot"


def test_a_predicted_url_that_is_also_linked_keeps_its_404(crawl, site):
    c = crawl(f"{site}/pagination/linked/", "--parallels", "1", "--no-image")
    assert c.page(f"{site}/pagination/linked/item/2")["title"] == "Item 2"
    broken = c.page(f"{site}/pagination/linked/item/3")  # predicted first (404), then really linked
    assert broken["status"] == 404 and broken["scraped"]
    assert f"{site}/pagination/linked/item/4" not in c.pages  # pure guesses that failed leave no trace
