"""Lists that say where: one row per defect whatever found it, link rows with their anchor, priorities that ran.

A two-commit archive built through the scrape hooks: commit 1 only crawled, commit 2 also analysed by axe and
markup, which find the same image without alt, the same page without a language, the same second h1 and the
same page without an h1 as the crawl checks do.
"""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import Anchor, Heading, Image, ScrapeResult, Violation, query_registry, run_query
from nitpicker_core.archive import open_archive
from nitpicker_core.archive.writer import ArchiveWriter

IMG = '<img src="img/no-alt.png" class="hero">'


def _page(path: str, status: int = 200, lang: str = "en", h1: tuple[str, ...] = ("Title",),
          anchors: list[Anchor] | None = None, images: list[Image] | None = None) -> ScrapeResult:
    return ScrapeResult(url=SITE + path, status=status, status_text="OK", content_type="text/html",
                        content_length=100, metadata={"title": f"Page {path}", "lang": lang},
                        html=f"<html><head><title>Page {path}</title></head><body></body></html>",
                        headings=[*(Heading(1, text) for text in h1), Heading(2, "Part")], anchors=anchors or [], images=images or [])


def _pages() -> list[ScrapeResult]:
    links = [Anchor(SITE + "/missing", "Gone page", raw_href="/missing", line=9, col=5),
             Anchor(SITE + "/missing", "again", raw_href="missing", line=12, col=1),
             Anchor(SITE + "/two", "Two", raw_href="/two", line=10, col=5),
             Anchor(SITE + "/none", "None", raw_href="/none", line=11, col=5)]
    image = Image(src="img/no-alt.png", current_src=SITE + "/img/no-alt.png", alt=None, width=10, height=10)
    return [_page("/", lang="", anchors=links, images=[image]), _page("/two", h1=("First", "Second")),
            _page("/none", h1=()), _page("/missing", 404, h1=()), _page("/unlinked", 410, h1=())]


def _analyse(target, commit: int, analyzer: str, found: dict[str, list[Violation]]) -> None:
    writer = ArchiveWriter.open(target)
    writer.begin_analysis(commit, analyzer, "1", {})
    for path, violations in found.items():
        writer.put_analysis(commit, analyzer, SITE + path, {}, violations)
    writer.finish_analysis(commit, analyzer, "complete")
    writer.write()
    writer.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    target = tmp_path_factory.mktemp("rows") / "rows.nitpicker"
    build_archive(target, _pages())
    build_archive(target, _pages())
    _analyse(target, 2, "axe", {
        "/": [Violation("image-alt", "no alt", "critical", snippet=IMG),
              Violation("html-has-lang", "no lang", "serious", snippet="<html>")],
        "/none": [Violation("page-has-heading-one", "no h1", "moderate", snippet="<html>")]})
    _analyse(target, 2, "markup", {
        "/": [Violation("img-alt-missing", "<img> has no alt attribute", "error",
                        snippet='<img class="hero" src="img/no-alt.png">'),
              Violation("html-lang", "no lang", "error", snippet="<html>")],
        "/two": [Violation("multiple-h1", "h1 number 2 of 2", "warning", snippet="<h1>")]})
    return target


@pytest.fixture(params=["stored", "computed"])
def ask(request, pm, archive, monkeypatch):
    """Runs a query on the archive, with the findings stored with the commits or (computed) ignoring them."""
    if request.param == "computed":
        monkeypatch.setenv("NITPICKER_FINDINGS", "0")
    registry = query_registry(pm)

    def ask(name, commit=None, **params):
        with open_archive(archive) as reader:
            return run_query(registry, reader, name, params, commit)
    return ask


def _rows(answer):
    return {row["id"]: row for row in answer["items"]}


def test_one_image_found_by_three_sources_is_one_row_naming_them(ask):
    row = _rows(ask("issues", commit=2))["image-alt"]
    found_by = ["image-alt-missing", "axe/image-alt", "markup/img-alt-missing"]
    assert set(found_by) < set(row["sources"]) and row["sources"][0] == "image-alt-missing"
    assert (row["findings"], row["urls"]) == (1, 1)
    listed = ask("issue-urls", commit=2, check="image-alt")
    assert listed["total"] == 1
    (item,) = listed["items"]
    assert (item["url"], item["detail"], item["sources"]) == (SITE + "/", SITE + "/img/no-alt.png", found_by)
    # the page's Issues tab asks for one URL: one defect there too
    assert ask("issue-urls", commit=2, check="image-alt", url=SITE + "/")["total"] == 1


def test_overlapping_checks_across_sources_are_one_defect(ask):
    rows = _rows(ask("issues", commit=2))
    assert rows["h1-multiple"]["sources"] == ["h1-multiple", "markup/multiple-h1"]
    assert rows["title-missing"]["sources"] == ["title-missing", "axe/document-title", "lighthouse/document-title"]
    assert rows["h1-missing"]["sources"][:2] == ["h1-missing", "axe/page-has-heading-one"]
    assert "markup/multiple-h1" not in rows and "axe/page-has-heading-one" not in rows
    assert rows["h1-missing"]["findings"] == 1  # /none; the 4xx pages have no h1 to miss
    (none,) = ask("issue-urls", commit=2, check="h1-missing")["items"]
    assert (none["url"], none["sources"]) == (SITE + "/none", ["h1-missing", "axe/page-has-heading-one"])
    two = ask("issue-urls", commit=2, check="h1-multiple")["items"]
    assert [(i["url"], i["detail"], i["sources"]) for i in two] == [
        (SITE + "/two", "First | Second", ["h1-multiple", "markup/multiple-h1"])]
    assert rows["h1-multiple"]["priority"] == "medium"  # markup found it too, at medium


def test_a_merged_rows_priority_comes_from_the_sources_that_ran(ask):
    crawled = _rows(ask("issues", commit=1))["html-lang"]
    assert crawled["sources"][0] == "lang-missing" and crawled["findings"] == 1
    assert crawled["priority"] == "medium"  # axe and markup never ran on commit 1: their "high" does not count
    assert _rows(ask("issues", commit=2))["html-lang"]["priority"] == "high"  # now they ran and found it
    assert "html-lang" not in _rows(ask("issues", commit=1, priority="high"))
    assert "html-lang" in _rows(ask("issues", commit=2, priority="high"))


def test_a_broken_link_row_says_where_the_link_is(ask):
    listed = ask("issue-urls", commit=2, check="broken-link")
    (item,) = listed["items"]
    assert {k: item[k] for k in ("url", "target", "text", "status", "answer", "line", "col", "position",
                                 "anchors")} == {
        "url": SITE + "/", "target": SITE + "/missing", "text": "Gone page", "status": 404, "answer": "404",
        "line": 9, "col": 5, "position": "9:5", "anchors": 2}
    assert _rows(ask("issues", commit=2))["broken-link"]["link"] is True


def test_a_linked_4xx_page_is_the_broken_links_defect_not_a_second_one(ask):
    listed = ask("issue-urls", commit=2, check="client-error-page")["items"]
    assert [(i["url"], i["detail"]) for i in listed] == [(SITE + "/unlinked", "410")]


def test_every_rows_counts_equal_the_rows_it_lists(ask):
    for commit, base in ((2, None), (2, "2"), (1, None), (1, "2")):
        answer = ask("issues", commit=commit, base=base)
        for row in answer["items"]:
            if row["state"] != "ok" or not (row["findings"] or row["fixed"]):
                continue
            listed = ask("issue-urls", commit=commit, base=base, check=row["id"], limit=1000)["items"]
            by_state = {state: sum(1 for i in listed if i["state"] == state) for state in ("new", "persisting", "fixed")}
            assert row["findings"] == by_state["new"] + by_state["persisting"], (commit, base, row["id"])
            if row["new"] is not None:
                assert {k: row[k] for k in by_state} == by_state, (commit, base, row["id"])
