"""The summary line that explains a crawl the scope left far narrower than its start page's links."""

from __future__ import annotations

from nitpicker_core.crawler.start_links import StartLinks, scope_note
from nitpicker_core.urls import Scope


def _observe(start: str, links: list[str], extra: list[str] | None = None) -> dict:
    scope = Scope([start], extra)
    return StartLinks().observe(start, [(url, scope.is_internal(url)) for url in links], scope)


def test_a_narrow_scope_is_explained_with_the_way_to_widen_it() -> None:
    links = [
        "http://h/docs/api/a.html",
        *(f"http://h/docs/p{n}.html" for n in range(5)),
        "http://h/docs/logo.png",
        "http://other.example/x.html",
        "http://h/docs/api/",
    ]
    seen = _observe("http://h/docs/api/", links)
    # the logo is no page, other.example another site, the start page itself no link to count
    assert seen == {
        "pages": 6,
        "outside": 5,
        "host": "h",
        "scope": ["http://h/docs/api/"],
        "widen": "http://h/docs/",
    }
    note = scope_note(seen, rendered=2)
    assert note.startswith(
        "only 2 page(s) rendered: 5 of the 6 pages the start page links to on h are outside "
        "the scope (http://h/docs/api/)"
    )
    assert "--scope http://h/docs/ or start at http://h/docs/" in note


def test_far_fewer_means_under_half() -> None:
    seen = _observe("http://h/a/", ["http://h/a/1", "http://h/a/2", "http://h/b/3", "http://h/b/4"])
    assert (seen["pages"], seen["outside"], seen["widen"]) == (4, 2, "http://h/")
    assert scope_note(seen, rendered=1)
    assert scope_note(seen, rendered=2) == ""  # two of four: not far fewer


def test_nothing_is_said_when_the_scope_left_nothing_out() -> None:
    # far fewer pages for another reason (errors, --no-recursive, --max-pages): not the scope's doing
    seen = _observe("http://h/", [f"http://h/p{n}" for n in range(10)])
    assert seen["outside"] == 0 and scope_note(seen, rendered=1) == ""
    assert scope_note(None, rendered=0) == "" and scope_note({}, rendered=0) == ""


def test_a_file_named_start_page_is_no_longer_a_narrow_scope() -> None:
    seen = _observe("http://h/docs/index.html", ["http://h/docs/a.html", "http://h/docs/sub/b.html"])
    assert seen["outside"] == 0 and seen["scope"] == ["http://h/docs/"]
