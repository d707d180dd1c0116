"""A page's record crosses two process boundaries on its way to the archive: pickled, it comes back equal."""

from __future__ import annotations

import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

from nitpicker_core.records import Anchor, Heading, ScrapeResult


def _page(anchors: list[Anchor] | None) -> ScrapeResult:
    return ScrapeResult(
        url="http://example.test/a.html",
        status=200,
        headers={"content-type": "text/html"},
        html="<a href=b.html>b</a>",
        anchors=anchors,
        headings=[Heading(level=1, text="A")],
        extra={"unrendered": "--render never"},
    )


PLACED = Anchor(
    href="http://example.test/b.html", text="b", fragment="top", raw_href="b.html#top", line=3, col=9
)


@pytest.mark.parametrize(
    "anchors",
    [
        [
            PLACED,
            Anchor(href="http://example.test/c.html", text="", raw_href=None),  # made by script: no place
            PLACED,  # the same link again: duplicates are kept
        ],
        [],
        None,
    ],
    ids=["anchors", "none found", "not read"],
)
def test_a_page_pickles_back_to_an_equal_record(anchors: list[Anchor] | None) -> None:
    page = _page(anchors)
    for back in (pickle.loads(pickle.dumps(page)), pickle.loads(ForkingPickler.dumps(page))):
        assert back == page
        assert type(back.anchors) is type(page.anchors)  # a list of Anchor records, as it was
        assert all(type(anchor) is Anchor for anchor in back.anchors or [])


def test_a_page_pickled_with_its_anchors_as_records_loads() -> None:
    """The state as pickled before the anchors went as rows (a list of Anchor) still loads."""
    page = _page([Anchor(href="http://example.test/b.html", text="b", line=1, col=1)])
    back = ScrapeResult.__new__(ScrapeResult)
    back.__setstate__(dict(page.__dict__))
    assert back == page
