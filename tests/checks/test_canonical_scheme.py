"""A canonical's scheme: https: on an http: page is the advised move to HTTPS (the page is canonicalised to it);
http: on an https: page is invalid and ignored. The check and the indexability rule agree on each."""

from __future__ import annotations

import pytest
from nitpicker_checks.pages import canonical_is_invalid

from nitpicker_core import non_indexable_reason

CASES = [
    # page, canonical as written, whether canonical-invalid, the page's indexability reason
    ("http://docs.test/a", "https://docs.test/a", False, "canonicalised to https://docs.test/a"),
    (
        "http://docs.test/a",
        "HTTPS://docs.python.org/3/a",
        False,
        "canonicalised to HTTPS://docs.python.org/3/a",
    ),
    ("https://docs.test/a", "http://docs.test/a", True, None),
    ("https://docs.test/a", "https://docs.test/a", False, None),
    ("http://docs.test/a", "http://docs.test/b", False, "canonicalised to http://docs.test/b"),
    ("http://docs.test/a", "ftp://docs.test/a", True, None),
    ("https://docs.test/a", "//cdn.test/a", False, None),  # resolved on the page's scheme; not stored as such
]


@pytest.mark.parametrize(("page", "canonical", "invalid", "reason"), CASES)
def test_scheme_rule(page: str, canonical: str, invalid: bool, reason: str | None) -> None:
    assert canonical_is_invalid(canonical, page) is invalid
    if canonical.startswith("//"):
        return
    row = {"url": page, "status": 200, "canonical": canonical, "headers": {}}
    assert non_indexable_reason(row) == reason
