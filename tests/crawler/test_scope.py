"""Scope: which URLs are internal, and which entry matches."""

from __future__ import annotations

from nitpicker_core.urls import Scope


def test_root_covers_whole_host_any_scheme_and_default_port() -> None:
    scope = Scope(["https://example.com/"])
    assert scope.is_internal("https://example.com/anything/deep?x=1")
    assert scope.is_internal("http://example.com/")
    assert scope.is_internal("https://EXAMPLE.com:443/a")
    assert scope.is_internal("http://example.com:80/a")
    assert not scope.is_internal("https://example.com:8443/a")
    assert not scope.is_internal("https://www.example.com/")


def test_subtree_by_segments() -> None:
    scope = Scope(["http://h/blog/"])
    assert scope.is_internal("http://h/blog/")
    assert scope.is_internal("http://h/blog")
    assert scope.is_internal("http://h/blog/post-1")
    assert not scope.is_internal("http://h/blogger/")
    assert not scope.is_internal("http://h/docs/")
    assert not scope.is_internal("http://h/")


def test_file_start_url_covers_itself_and_below_not_siblings() -> None:
    scope = Scope(["http://h/a/b"])
    assert scope.is_internal("http://h/a/b")
    assert scope.is_internal("http://h/a/b/c")
    assert not scope.is_internal("http://h/a/c")
    assert not scope.is_internal("http://h/a/bc")


def test_deepest_entry_wins_and_carries_credentials() -> None:
    scope = Scope(["http://h/"], ["http://user:pw@h/docs/", "h/docs/api/"])
    assert scope.match("http://h/docs/api/v1").segments == ("docs", "api")
    assert scope.match("http://h/docs/intro").segments == ("docs",)
    assert scope.match("http://h/other").segments == ()
    assert scope.credentials_for("http://h/docs/api/v1") == ("user", "pw")
    assert scope.credentials_for("http://h/other") is None
    assert "pw" not in scope.match("http://h/docs/intro").url


def test_extra_hosts_and_ports() -> None:
    scope = Scope(
        ["http://localhost:8010/scope/blog/"], ["http://localhost:8010/scope/docs/", "cdn.example:8080"]
    )
    assert scope.is_internal("http://localhost:8010/scope/docs/api")
    assert not scope.is_internal("http://localhost:8010/scope/admin/")
    assert not scope.is_internal("http://127.0.0.1:8010/scope/blog/")
    assert scope.is_internal("http://cdn.example:8080/x.js")
    assert not scope.is_internal("http://cdn.example/x.js")
    assert scope.same_host("http://localhost:8010/scope/admin/")
    assert not scope.same_host("http://127.0.0.1:8010/scope/admin/")


def test_a_start_url_naming_a_file_scopes_to_its_directory() -> None:
    # issue 12: starting at /docs/index.html crawled that one page; users start at index.html all the time
    scope = Scope(["http://h/docs/index.html"])
    assert scope.entries[0].url == "http://h/docs/"
    for url in (
        "http://h/docs/index.html",
        "http://h/docs/a.html",
        "http://h/docs/sub/b.html",
        "http://h/docs/",
    ):
        assert scope.is_internal(url), url
    assert not scope.is_internal("http://h/other.html")
    assert not scope.is_internal("http://h/docsx/a.html")
    assert Scope(["https://h/index.php?lang=en"]).is_internal("https://h/anything")
    assert Scope(["http://h/A/Page.HTML"]).is_internal("http://h/A/other")


def test_a_start_url_whose_last_segment_is_no_page_keeps_its_exact_scope() -> None:
    # /python/3.11 or /socket.io may well be directories: no page extension, so nothing is widened
    for start, sibling in (
        ("http://h/python/3.11", "http://h/python/3.12"),
        ("http://h/a/socket.io", "http://h/a/x"),
    ):
        scope = Scope([start])
        assert scope.is_internal(start + "/x") and not scope.is_internal(sibling)


def test_extra_scope_values_and_added_urls_are_taken_as_written() -> None:
    # --scope and --list name exactly what the user wants in: a listed page does not bring its siblings
    scope = Scope(["http://h/blog/"], ["http://h/docs/index.html"])
    assert not scope.is_internal("http://h/docs/a.html")
    scope.add("http://h/news/today.html")
    assert not scope.is_internal("http://h/news/yesterday.html")
