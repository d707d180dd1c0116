"""What the canonical and anchor-text checks read from stored HTML and headers, on the values sites send."""

from __future__ import annotations

import pytest
from nitpicker_checks.canonicals import header_canonicals
from nitpicker_checks.settings import NON_DESCRIPTIVE
from nitpicker_checks.settings import words as _words

from nitpicker_core import canonical_elements


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('<https://a.test/x>; rel="canonical"', ("https://a.test/x",)),
        ("</style.css>; rel=preload; as=style, <https://a.test/y>; rel=canonical", ("https://a.test/y",)),
        ('<https://a.test/z>; rel="alternate canonical"; hreflang=en', ("https://a.test/z",)),
        ('<https://a.test/alt>; rel="alternate"', ()),
        ("not a link header", ()),
        ("", ()),
    ],
)
def test_the_link_header_canonical_is_read_among_other_entries(value: str, expected: tuple[str, ...]) -> None:
    assert header_canonicals(value) == expected


def test_canonical_elements_and_those_outside_head() -> None:
    head = '<html><head><link rel="Canonical" href="/a"><link rel="stylesheet" href="/canonical.css"></head>'
    assert canonical_elements(head + "<body><p>x</p></body></html>") == (("/a",), ())
    # a <p> in <head> closes it, as browsers do: the canonical after it is in the body
    assert canonical_elements(
        '<html><head><title>t</title><p>oops</p><link rel="canonical" href="/b"></head>'
    ) == (
        ("/b",),
        ("/b",),
    )
    assert canonical_elements("<html><body><p>no canonical</p></body></html>") == ((), ())
    assert canonical_elements("") is None


@pytest.mark.parametrize(
    ("text", "lang", "flagged"),
    [
        ("Click here", "en", True),
        ("  Read more… ", "en", True),
        ("Read more about pricing", "en", False),
        ("詳しくはこちら", "ja", True),
        ("詳しくはこちら »", "ja", True),
        ("料金の詳細", "ja", False),
        ("click here", "ja", False),  # the page's language chooses the list
        ("(more)", "en", True),  # brackets around the whole text go
        ("[ here ]", "en", True),
        ("link()", "en", False),  # a function's name in Python's documentation, not the phrase "link"
        ("more[]", "en", False),
    ],
)
def test_non_descriptive_texts_per_language(text: str, lang: str, flagged: bool) -> None:
    assert (_words(text) in {_words(t) for t in NON_DESCRIPTIVE[lang]}) is flagged
