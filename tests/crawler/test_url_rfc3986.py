"""URL normalisation follows RFC 3986 §6.2.2 only: the path is kept byte for byte otherwise (issue 12)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core import url_syntax
from nitpicker_core.urls import join, normalize, remove_dot_segments

WAYBACK = "https://web.archive.org/web/20060524042422/https://www.python.org/windows/pythonwin/"


def test_a_double_slash_inside_a_path_is_kept() -> None:
    # measured on the Python docs: stored as …/https:/www.python.org/…, another URL, checked in its place
    assert normalize(WAYBACK) == WAYBACK
    assert (
        normalize("HTTPS://WEB.archive.org:443/web/2006/https://www.python.org/#x")
        == "https://web.archive.org/web/2006/https://www.python.org/"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://h/%e6%97%a5/%3f", "http://h/%E6%97%A5/%3F"),  # percent-encoding in upper case
        ("http://h/%7Euser/%41%2d%5F%2E", "http://h/~user/A-_."),  # unreserved characters decoded
        ("http://h/a%2Fb/c", "http://h/a%2Fb/c"),  # an encoded slash is data, not a separator
        ("http://h/a/%2e/b/%2E%2E/c", "http://h/a/c"),  # %2E is "." once decoded, so a dot segment
        ("http://h/a/b/..", "http://h/a/"),
        ("http://h/a/b/.", "http://h/a/b/"),
        ("http://h/../../a", "http://h/a"),
        ("http://h/a//../b", "http://h/a/b"),  # ".." removes the empty segment, and only that one
        ("http://h/a/.//b", "http://h/a//b"),
        ("http://h/100%", "http://h/100%"),  # a stray % is left as the browser sends it
        ("http://h/%%41b", "http://h/%%41b"),  # decoding %41 here would make a new escape, %Ab
        ("http://h/?q=%e6%97%a5&k=%7e", "http://h/?k=~&q=%E6%97%A5"),
    ],
)
def test_rfc3986_normalisation(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("base", "ref", "expected"),
    [
        # RFC 3986 §5.4 examples that a path rewrite would break, plus empty segments on either side
        ("http://a/b/c/d;p?q", "g", "http://a/b/c/g"),
        ("http://a/b/c/d;p?q", "../g", "http://a/b/g"),
        ("http://a/b/c/d;p?q", "../../../g", "http://a/g"),
        ("http://a/b/c/d;p?q", "?y", "http://a/b/c/d;p?y"),
        ("http://a/b/c/d;p?q", "#s", "http://a/b/c/d;p?q#s"),
        ("http://a/b/c/d;p?q", "//g/x", "http://g/x"),
        ("http://a/b/c/d;p?q", "g;x=1/../y", "http://a/b/c/y"),
        ("http://a/b/c/d;p?q", "http:g", "http://a/b/c/g"),  # the non-strict reading browsers use too
        ("http://a/b//c/d", "e//f", "http://a/b//c/e//f"),
        ("http://a/b//c/", "../x", "http://a/b//x"),
        ("http://a", "x", "http://a/x"),
    ],
)
def test_join_resolves_like_rfc3986_and_keeps_empty_segments(base: str, ref: str, expected: str) -> None:
    assert join(base, ref) == expected


def test_a_relative_link_keeps_its_double_slash() -> None:
    assert (
        normalize("web/2006/https://www.python.org/", "https://h/a/")
        == "https://h/a/web/2006/https://www.python.org/"
    )


# Path segments as written on real sites: letters, escapes of either case, non-ASCII, spaces, stray "%".
_ESCAPES = st.sampled_from(["%41", "%7e", "%7E", "%2f", "%2F", "%e6%97%a5", "%20", "%25", "%"])
_CHARS = st.sampled_from(list("abZ09-_~.;=:@!$&'()*+, é日"))
segment = st.lists(st.one_of(_CHARS, _ESCAPES), max_size=5).map("".join)
plain_segment = segment.filter(lambda s: unquote(s) not in (".", ".."))


def _url(segments: list[str], query: str = "") -> str:
    return "http://h" + "/" + "/".join(segments) + query


@given(
    st.lists(st.one_of(segment, st.sampled_from([".", "..", "", "%2e", "%2E%2e"])), max_size=8),
    st.sampled_from(["", "?b=%7e&a=1", "?PHPSESSID=1&x=%e6", "?"]),
)
def test_normalising_twice_changes_nothing(segments: list[str], query: str) -> None:
    once = normalize(_url(segments, query))
    assert normalize(once) == once


@given(st.lists(plain_segment, min_size=1, max_size=8))
def test_no_path_segment_is_lost_or_rewritten(segments: list[str]) -> None:
    path = urlsplit(normalize(_url(segments, "?k=v"))).path  # (a query keeps a last space from .strip())
    kept = path.split("/")[1:]
    assert len(kept) == len(segments)
    # each segment means the same bytes as before: only its escapes may be spelled differently
    assert [unquote(s) for s in kept] == [unquote(s) for s in segments]


@given(st.lists(st.one_of(segment, st.sampled_from([".", "..", ""])), min_size=1, max_size=8))
def test_only_dot_segments_remove_segments(segments: list[str]) -> None:
    # the number of segments after dot-segment removal is the number normalisation keeps
    raw = ("/" + "/".join(segments)).strip()  # normalize strips the URL first: '/.. ' ends in a dot segment
    dotted = remove_dot_segments(raw.replace("%2e", ".").replace("%2E", "."))
    assert len(urlsplit(normalize("http://h" + raw)).path.split("/")) == len(dotted.split("/"))


@given(st.lists(plain_segment, max_size=4), st.lists(plain_segment, min_size=1, max_size=4), plain_segment)
def test_dot_segments_cancel_exactly(head: list[str], tail: list[str], extra: str) -> None:
    # (a dot segment last leaves a trailing slash, RFC 3986 §5.2.4, so the tail is never empty here)
    plain = normalize(_url([*head, *tail]))
    assert normalize(_url([*head, ".", *tail])) == plain
    assert normalize(_url([*head, extra, "..", *tail])) == plain


# The references join reads without urlsplit (a plain path) and those it hands to the general case alike
url_text = st.text(alphabet="ab/.?#:%[]@ \t\n\x00é", max_size=12)
bases = st.sampled_from(
    ["http://a/b/c/d;p?q", "http://a", "https://h/x/", "http://a/b//c/d#f", "file:///t/u", "http://[::1]/p/q"]
)


@given(bases, url_text)
def test_join_of_a_plain_path_is_the_general_join(base: str, ref: str) -> None:
    try:
        expected = url_syntax._join(base, ref)
    except ValueError:
        return  # a reference urlsplit refuses is never a plain path
    assert join(base, ref) == expected


@given(
    bases,
    st.lists(url_text, max_size=8),
    st.lists(st.text(alphabet="ab:?# \t\x00\x01é", max_size=4), max_size=4),
)
def test_a_joiner_joins_as_join(base: str, refs: list[str], fragments: list[str]) -> None:
    """One joiner for many references, some the same before their fragment (resolved once, then reused)."""
    joiner = url_syntax.UrlJoiner(base)
    for ref in refs + [f"{ref}#{fragment}" for ref in refs for fragment in fragments]:
        try:
            expected: str | type[ValueError] = join(base, ref)
        except ValueError:
            expected = ValueError
        try:
            got: str | type[ValueError] = joiner(ref)
        except ValueError:
            got = ValueError
        assert got == expected, ref


@given(st.text(alphabet="ab/.", max_size=14))
def test_removing_dot_segments_of_a_path_without_them_keeps_it(path: str) -> None:
    assert remove_dot_segments(path) == url_syntax._remove_dot_segments.__wrapped__(path)
