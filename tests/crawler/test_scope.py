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
    scope = Scope(["http://localhost:8010/scope/blog/"], ["http://localhost:8010/scope/docs/", "cdn.example:8080"])
    assert scope.is_internal("http://localhost:8010/scope/docs/api")
    assert not scope.is_internal("http://localhost:8010/scope/admin/")
    assert not scope.is_internal("http://127.0.0.1:8010/scope/blog/")
    assert scope.is_internal("http://cdn.example:8080/x.js")
    assert not scope.is_internal("http://cdn.example/x.js")
    assert scope.same_host("http://localhost:8010/scope/admin/")
    assert not scope.same_host("http://127.0.0.1:8010/scope/admin/")
