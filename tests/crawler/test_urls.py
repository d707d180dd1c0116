"""URL normalisation and helpers of nitpicker_core.urls."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core.urls import (
    Excludes,
    fragment_of,
    looks_like_html,
    normalize,
    split_credentials,
    split_top_level_commas,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM", "http://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://user:pw@example.com/a#frag", "https://example.com/a"),
        (
            "http://example.com//a///b//",
            "http://example.com//a///b//",
        ),  # RFC 3986: empty segments are segments
        ("http://Example.COM./a", "http://example.com./a"),  # a trailing dot is another name for the server
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"),
        ("http://example.com/?PHPSESSID=abc&kind=alpha", "http://example.com/?kind=alpha"),
        ("http://example.com/?phpsessid=abc", "http://example.com/"),
        ("http://example.com/?a=2&a=1", "http://example.com/?a=2&a=1"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/%E6%97%A5", "http://example.com/%E6%97%A5"),
        ("http://example.com/日", "http://example.com/%E6%97%A5"),
        ("  http://example.com/x  ", "http://example.com/x"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_normalize_keeps_distinct_query_values_apart() -> None:
    alpha = normalize("http://h/query/?kind=alpha")
    beta = normalize("http://h/query/?kind=beta")
    assert alpha != beta
    assert normalize("http://h/query/?PHPSESSID=1&kind=alpha") == alpha


def test_normalize_relative_and_disable_queries() -> None:
    assert normalize("../c?x=1#top", "http://h/a/b/index.html") == "http://h/a/c?x=1"
    assert normalize("/p?tab=1", "http://h/", disable_queries=True) == "http://h/p"


urls = st.builds(
    lambda scheme, host, port, path, query, frag: f"{scheme}://{host}{port}{path}{query}{frag}",
    st.sampled_from(["http", "https", "HTTP"]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,10}(\.[a-z]{2,5}){0,2}", fullmatch=True),
    st.sampled_from(["", ":80", ":443", ":8010"]),
    st.lists(st.text(alphabet="ab/._-%~ é", max_size=6), max_size=4).map(lambda p: "/" + "/".join(p)),
    st.sampled_from(["", "?b=2&a=1", "?PHPSESSID=x&k=v", "?q=a+b", "?x"]),
    st.sampled_from(["", "#top", "#"]),
)


@given(urls)
def test_normalize_is_idempotent(url: str) -> None:
    once = normalize(url)
    assert normalize(once) == once
    assert "#" not in once


def test_split_credentials() -> None:
    assert split_credentials("https://us%40er:p%3Aw@h.example/a") == ("https://h.example/a", ("us@er", "p:w"))
    assert split_credentials("https://h.example/a") == ("https://h.example/a", None)


def test_fragment_of() -> None:
    assert fragment_of("http://h/a#sec-2") == "sec-2"
    assert fragment_of("http://h/a") == ""


@pytest.mark.parametrize(
    ("url", "html"),
    [
        ("http://h/", True),
        ("http://h/about", True),
        ("http://h/a/index.html", True),
        ("http://h/x.PHP?id=1", True),
        ("http://h/a.aspx", True),
        ("http://h/a.jsp", True),
        ("http://h/cgi/x.cgi", True),
        ("http://h/a.shtml", True),
        ("http://h/a.xhtml", True),
        ("http://h/style.css", False),
        ("http://h/img/logo.png", False),
        ("http://h/doc.pdf", False),
        ("http://h/app.min.js", False),
        ("http://h/data.json", False),
    ],
)
def test_looks_like_html(url: str, html: bool) -> None:
    assert looks_like_html(url) is html


def test_split_top_level_commas() -> None:
    assert split_top_level_commas("/a/*.{html,php},/b/*") == ["/a/*.{html,php}", "/b/*"]
    assert split_top_level_commas(" x , ,y[1,2] ") == ["x", "y[1,2]"]
    assert split_top_level_commas("") == []


def test_excludes_globs() -> None:
    ex = Excludes(["/exclude/secret/*", "/a/**/*.{pdf,zip}"])
    assert ex.is_excluded("http://h/exclude/secret/hidden")
    assert not ex.is_excluded("http://h/exclude/secret/deep/hidden")  # * stays inside one segment
    assert not ex.is_excluded("http://h/exclude/page-a")
    assert ex.is_excluded("http://h/a/b/c/file.zip")
    assert ex.is_excluded("http://h/a/file.pdf")
    assert not ex.is_excluded("http://h/a/file.html")
    assert Excludes(["/日本/*"]).is_excluded("http://h/%E6%97%A5%E6%9C%AC/x")


def test_excludes_url_prefixes_are_protocol_insensitive() -> None:
    ex = Excludes(
        url_prefixes=[
            "http://127.0.0.1:8010/exclude/external-a",
            "https://line.me",
            "https://www.facebook.com/sharer/",
        ]
    )
    assert ex.url_prefixes == [
        "http://127.0.0.1:8010/exclude/external-a",
        "https://line.me",
        "https://www.facebook.com/sharer/",
    ]
    assert ex.is_excluded("https://127.0.0.1:8010/exclude/external-a")
    assert not ex.is_excluded("http://127.0.0.1:8010/exclude/external-b")
    assert ex.is_excluded("https://WWW.facebook.com/sharer/sharer.php?u=x")
    assert not ex.is_excluded("https://www.facebook.com/somepage")
    assert not ex.is_excluded("https://line.meetup.example/")  # a bare host prefix ends at the host
    assert ex.is_excluded("https://line.me/R/msg")


@pytest.mark.parametrize(
    "url",
    [
        "https://www.google.com/search?q=x",
        "https://twitter.com/intent/tweet?text=x",
        "https://x.com/share",
        "https://www.facebook.com/sharer/sharer.php?u=x",
        "https://line.me/R/msg",
        "https://plus.google.com/",
    ],
)
def test_no_url_is_excluded_unless_the_user_asked(url: str) -> None:
    # issue 12: a built-in prefix list skipped every https://www.google.com link nobody had excluded
    assert not Excludes().is_excluded(url)
    assert Excludes().url_prefixes == []


def test_excludes_keywords() -> None:
    ex = Excludes(keywords=["FORBIDDEN_KEYWORD", "price: \\d+", "broken[regex", "/secret/i"])
    hit = ex.keyword_hit("<p>This page contains FORBIDDEN_KEYWORD.</p>")
    assert hit is not None and hit.pattern == "FORBIDDEN_KEYWORD" and hit.text == "FORBIDDEN_KEYWORD"
    hit = ex.keyword_hit("price: 120 yen")
    assert hit is not None and hit.text == "price: 120"
    hit = ex.keyword_hit("a broken[regex here")  # invalid regex → literal
    assert hit is not None and hit.pattern == "broken[regex"
    hit = ex.keyword_hit("Top SECRET")
    assert hit is not None and hit.text == "SECRET"
    assert ex.keyword_hit("<p>clean</p>") is None


@pytest.mark.parametrize("port", ["99999", "65536", "-1", "abc", "8o", "１２"])
def test_normalize_refuses_an_invalid_port(port: str) -> None:
    # Dropping the port would turn http://h:99999/x into http://h/x, a different server (port 80)
    with pytest.raises(ValueError, match="invalid port"):
        normalize(f"http://example.com:{port}/x")
    with pytest.raises(ValueError, match="invalid port"):
        normalize("/x", f"https://user:pw@example.com:{port}/")


def test_invalid_port_message_never_carries_credentials() -> None:
    with pytest.raises(ValueError) as refused:
        normalize("https://user:secret@example.com:99999/x")
    assert "secret" not in str(refused.value) and "'99999'" in str(refused.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://example.com:65535/x", "http://example.com:65535/x"),
        ("http://example.com:0/x", "http://example.com:0/x"),
        ("http://example.com:/x", "http://example.com/x"),  # an empty port is the default one
        ("http://example.com:0080/x", "http://example.com/x"),
        ("http://[::1]:443/x", "http://[::1]:443/x"),
    ],
)
def test_normalize_keeps_valid_ports(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_split_credentials_of_a_broken_url_still_takes_them_out() -> None:
    assert split_credentials("http://us:p%40@[::1/x") == ("http://[::1/x", ("us", "p@"))
    assert split_credentials("http://[::1/x") == ("http://[::1/x", None)
