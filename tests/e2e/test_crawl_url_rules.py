"""End-to-end: URL identity keeps the path as written, no hidden exclusions, start URLs that name a file (issue 12)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_a_double_slash_in_a_path_is_the_url_crawled(crawl, site):
    # measured on the Python docs: …/https://www.python.org/… was stored and checked as …/https:/www.python.org/…
    c = crawl(f"{site}/url-rules/wayback/", "--scope", f"{site}/url-rules/web/", "--no-image")
    wayback = f"{site}/url-rules/web/20060524042422/https://www.python.org/windows/pythonwin/"
    relative = f"{site}/url-rules/web/2007/https://www.python.org/"
    assert {a["href"] for a in c.anchors[f"{site}/url-rules/wayback/"]} >= {wayback, relative}
    assert (c.page(wayback)["status"], c.page(wayback)["title"]) == (
        200,
        "Archived https://www.python.org/windows/pythonwin/",
    )
    assert (c.page(relative)["status"], c.page(relative)["title"]) == (
        200,
        "Archived https://www.python.org/",
    )
    assert not [url for url in c.pages if "https:/www" in url]  # no collapsed twin was requested
    assert c.result.returncode == 0


def test_no_link_is_skipped_unless_the_user_excluded_it(crawl, site):
    # a built-in list used to skip every https://www.google.com and twitter.com link, stored as internal
    c = crawl(f"{site}/url-rules/social/", "--no-fetch-external", "--no-image")
    for url in ("https://www.google.com/search?q=nitpicker", "https://twitter.com/intent/tweet?text=x"):
        row = c.page(url)
        assert (row["is_skipped"], row["skip_reason"] or None, row["is_external"]) == (False, None, True), row
    assert "0 skipped" in c.result.stderr


def test_a_skipped_external_url_is_stored_as_external(crawl, site, external):
    c = crawl(
        f"{site}/url-rules/social/",
        "--no-fetch-external",
        "--no-image",
        "--exclude-url",
        "https://www.google.com",
        "--exclude-url",
        f"{external}/nothing",
    )
    google = c.page("https://www.google.com/search?q=nitpicker")
    assert (google["is_skipped"], google["skip_reason"], google["is_external"]) == (True, "excluded", True)
    # the internal page the user excluded stays internal
    d = crawl(
        f"{site}/url-rules/docs/index.html",
        "--exclude",
        "/url-rules/docs/sub/*",
        "--no-fetch-external",
        "--no-image",
        name="internal",
    )
    docs = d.page(f"{site}/url-rules/docs/sub/b.html")
    assert (docs["is_skipped"], docs["skip_reason"], docs["is_external"]) == (True, "excluded", False)


def test_a_start_url_naming_a_file_crawls_its_directory(crawl, site):
    # measured: starting at /index.html crawled 1 page of 35 URLs and said "complete"
    c = crawl(f"{site}/url-rules/docs/index.html", "--no-image")
    for path, title in (("/url-rules/docs/a.html", "Docs A"), ("/url-rules/docs/sub/b.html", "Docs B")):
        page = c.page(site + path)
        assert (page["is_target"], page["is_external"], page["title"]) == (True, False, title)
    elsewhere = c.page(f"{site}/url-rules/elsewhere.html")  # above the start directory: checked, not crawled
    assert (elsewhere["is_external"], elsewhere["is_target"], elsewhere["extra"]["outside_scope"]) == (
        False,
        False,
        True,
    )
    assert "outside the scope" not in c.result.stderr  # everything the start page links to was crawled
    assert "3 rendered" in c.result.stderr


def test_a_scope_that_leaves_most_links_out_is_explained(crawl, site):
    c = crawl(f"{site}/url-rules/narrow/start/", "--no-image")
    assert c.page(f"{site}/url-rules/narrow/p1.html")["extra"]["outside_scope"]
    said = c.result.stderr
    assert "2 rendered" in said
    assert (
        f"6 of the 7 pages the start page links to on localhost:{site.rsplit(':', 1)[1]} are outside the "
        f"scope ({site}/url-rules/narrow/start/)"
    ) in said, said
    assert f"--scope {site}/url-rules/narrow/" in said and "a start URL ending in /" in said


def test_a_crawl_that_follows_no_links_says_nothing_of_the_scope(crawl, site):
    c = crawl(f"{site}/url-rules/narrow/start/", "--no-recursive", "--no-image")
    assert "1 rendered" in c.result.stderr and "outside the scope" not in c.result.stderr
