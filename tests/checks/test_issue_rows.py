"""Lists that say where: one row per defect whatever found it, link rows with their anchor, priorities that ran.

A two-commit archive built through the scrape hooks: commit 1 only crawled, commit 2 also analysed by axe and
markup, which find the same image without alt, the same page without a language, the same second h1 and the
same page without an h1 as the crawl checks do.
"""

from __future__ import annotations

import pytest
from archives import SITE
from defects_archive import build_defects_archive

from nitpicker_core import query_registry, run_query
from nitpicker_core.archive import open_archive


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return build_defects_archive(tmp_path_factory.mktemp("rows") / "rows.nitpicker")


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
    assert rows["title-missing"]["sources"] == [
        "title-missing",
        "axe/document-title",
        "lighthouse/document-title",
    ]
    assert rows["h1-missing"]["sources"][:2] == ["h1-missing", "axe/page-has-heading-one"]
    assert "markup/multiple-h1" not in rows and "axe/page-has-heading-one" not in rows
    assert rows["h1-missing"]["findings"] == 1  # /none; the 4xx pages have no h1 to miss
    (none,) = ask("issue-urls", commit=2, check="h1-missing")["items"]
    assert (none["url"], none["sources"]) == (SITE + "/none", ["h1-missing", "axe/page-has-heading-one"])
    two = ask("issue-urls", commit=2, check="h1-multiple")["items"]
    assert [(i["url"], i["detail"], i["sources"]) for i in two] == [
        (SITE + "/two", "First | Second", ["h1-multiple", "markup/multiple-h1"])
    ]
    assert rows["h1-multiple"]["priority"] == "medium"  # markup found it too, at medium


def test_a_merged_rows_priority_comes_from_the_sources_that_ran(ask):
    crawled = _rows(ask("issues", commit=1))["html-lang"]
    assert crawled["sources"][0] == "lang-missing" and crawled["findings"] == 1
    assert (
        crawled["priority"] == "medium"
    )  # axe and markup never ran on commit 1: their "high" does not count
    assert _rows(ask("issues", commit=2))["html-lang"]["priority"] == "high"  # now they ran and found it
    assert "html-lang" not in _rows(ask("issues", commit=1, priority="high"))
    assert "html-lang" in _rows(ask("issues", commit=2, priority="high"))


def test_a_broken_link_row_says_where_the_link_is(ask):
    listed = ask("issue-urls", commit=2, check="broken-link")
    (item,) = listed["items"]
    assert {
        k: item[k]
        for k in ("url", "target", "text", "status", "answer", "line", "col", "position", "anchors")
    } == {
        "url": SITE + "/",
        "target": SITE + "/missing",
        "text": "Gone page",
        "status": 404,
        "answer": "404",
        "line": 9,
        "col": 5,
        "position": "9:5, 12:1",
        "anchors": 2,
    }
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
            by_state = {
                state: sum(1 for i in listed if i["state"] == state)
                for state in ("new", "persisting", "fixed")
            }
            assert row["findings"] == by_state["new"] + by_state["persisting"], (commit, base, row["id"])
            if row["new"] is not None:
                assert {k: row[k] for k in by_state} == by_state, (commit, base, row["id"])


@pytest.fixture(scope="module")
def docs_en(site, tmp_path_factory):
    """A real crawl of /docs-en/ from its tutorial subfolder, analysed by markup."""
    from support import run_cli

    workdir = tmp_path_factory.mktemp("docs-en")
    archive = workdir / "docs.nitpicker"
    # the crawl exits 2: only external links failed (the site's unresolvable and 404 hosts)
    for expected, args in (
        (2, ("crawl", "--parallels", "2", "-o", str(archive), site + "/docs-en/tutorial/index.html")),
        (0, ("analyze", "--plugin", "markup", str(archive))),
    ):
        result = run_cli(*args, cwd=workdir, timeout=300)
        assert result.returncode == expected, result.stderr
    return archive


@pytest.mark.browser
def test_a_docs_sites_lists_say_where_on_a_real_crawl(pm, docs_en, site):
    registry = query_registry(pm)

    def ask(name, **params):
        with open_archive(docs_en) as reader:
            return run_query(registry, reader, name, params)

    missing = site + "/docs-en/tutorial/missing.html"
    links = {i["target"]: i for i in ask("issue-urls", check="broken-link")["items"]}
    link = links[missing]
    # the anchor as written in index.html: its text, its start tag's line:col, the text/plain 404 it met
    assert (link["url"], link["text"], link["status"], link["answer"]) == (
        site + "/docs-en/tutorial/index.html",
        "appendix",
        404,
        "404",
    )
    assert link["line"] > 1 and link["col"] > 1 and link["position"] == f"{link['line']}:{link['col']}"
    assert link["anchors"] == 1
    # the linked 404 is that broken link's defect, not a second "client error page" one
    assert missing not in {i["url"] for i in ask("issue-urls", check="client-error-page")["items"]}
    # the crawl's and markup's second h1 on controlflow.html are one defect, found by both
    rows = _rows(ask("issues"))
    assert "markup/multiple-h1" not in rows
    (two,) = ask("issue-urls", check="h1-multiple")["items"]
    assert two["url"].endswith("/docs-en/tutorial/controlflow.html")
    assert two["sources"] == ["h1-multiple", "markup/multiple-h1"] and rows["h1-multiple"]["findings"] == 1
    assert rows["h1-multiple"]["found_by"] == ["h1-multiple", "markup/multiple-h1"]
