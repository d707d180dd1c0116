"""JavaScript dependence: exact findings and page columns on a real crawl of /js-site/ (rendered, and never)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from archive.archive_testdata import _rewrite
from checks_crawl.test_crawl_checks import _findings
from support import run_cli

from nitpicker_core import js_dependence, read
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import query_registry
from nitpicker_viewer.app import create_app

J = "/js-site"
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "js-links-rendered-only": {(f"{J}/links", f"{J}/hidden")},
    "js-text-rendered-only": {(f"{J}/text", "")},
    "js-head-changed": {
        (f"{J}/head", "title, description, h1"),
        (f"{J}/canonical", "canonical"),
        (f"{J}/noindex-added", "robots"),
        (f"{J}/noindex-removed", "robots"),
    },
    "js-noindex-mismatch": {
        (f"{J}/noindex-added", "noindex only after rendering"),
        (f"{J}/noindex-removed", "noindex only as sent"),
    },
}
# The pages list's columns: js_links, raw_text_share, js_changed
COLUMNS: dict[str, tuple[Any, ...]] = {
    f"{J}/": (0, 100, ""),
    f"{J}/static": (0, 100, ""),
    f"{J}/hidden": (0, 100, ""),
    f"{J}/links": (1, 98, ""),  # the link's text "Hidden": 1 of 62 words
    f"{J}/text": (0, 1, ""),  # "Text" (the H1) of 61 words: 1 %
    f"{J}/head": (0, 98, "title, description, h1"),  # the H1's two words were written by the script
    f"{J}/canonical": (0, 100, "canonical"),
    f"{J}/noindex-added": (0, 100, "robots"),
    f"{J}/noindex-removed": (0, 100, "robots"),
}


@pytest.fixture(scope="module")
def archive(js_site_archive: Path) -> Path:
    return js_site_archive  # tests/conftest.py: shared with the viewer's raw-vs-rendered tab


@pytest.fixture(scope="module")
def unrendered(js_site_unrendered: Path) -> Path:
    return js_site_unrendered


@pytest.fixture(scope="module")
def auto(js_site_auto: Path) -> Path:
    return js_site_auto


def _pages(archive: Path, origin: str) -> dict[str, tuple[Any, ...]]:
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        found = run_query(registry, reader, "pages", {"url": f"{origin}{J}/", "limit": 100})
    return {
        row["url"].replace(origin, ""): (row["js_links"], row["raw_text_share"], row["js_changed"])
        for row in found["items"]
    }


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_check_finds_exactly_the_scripted_pages(site: str, archive: Path, check_id: str) -> None:
    assert _findings(archive, site)[check_id] == EXPECTED[check_id]


def test_the_pages_list_has_each_pages_javascript_columns(site: str, archive: Path) -> None:
    assert _pages(archive, site) == COLUMNS
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        few = run_query(registry, reader, "pages", {"max_raw_text_share": 50, "limit": 100})["items"]
        linked = run_query(registry, reader, "pages", {"min_js_links": 1, "limit": 100})["items"]
    assert [r["url"].replace(site, "") for r in few] == [f"{J}/text"]
    assert [r["url"].replace(site, "") for r in linked] == [f"{J}/links"]


def test_the_setting_moves_the_text_line(site: str, archive: Path) -> None:
    def found(share: str) -> dict[str, Any]:
        result = run_cli(
            "issues", "--json", "--checks-js-text-share", share, str(archive), cwd=archive.parent
        )
        return {item["id"]: item for item in json.loads(result.stdout)["items"]}

    assert found("99")["js-text-rendered-only"]["findings"] == 3  # /head's and /links' 98 % too
    assert found("0")["js-text-rendered-only"]["findings"] == 0
    assert "must be 0 to 100" in found("101")["js-text-rendered-only"]["error"]


def test_a_page_left_unrendered_has_no_findings_and_empty_columns(site: str, unrendered: Path) -> None:
    found = _findings(unrendered, site)
    assert {check: found[check] for check in EXPECTED} == {check: set() for check in EXPECTED}
    pages = _pages(unrendered, site)
    assert f"{J}/hidden" not in pages  # only a script links to it
    assert set(pages.values()) == {(None, None, None)}


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE page_state SET html_facts = json_remove(html_facts, '$.js');",  # stored before the comparison
        "UPDATE page_state SET html_facts = NULL;",  # stored before any facts
    ],
)
def test_pages_stored_without_the_comparison_are_compared_from_their_html(
    site: str, archive: Path, tmp_path: Path, change: str
) -> None:
    copy = tmp_path / "old.nitpicker"
    shutil.copy(archive, copy)
    _rewrite(copy, lambda conn: conn.executescript(change))
    found = _findings(copy, site)
    assert {check: found[check] for check in EXPECTED} == EXPECTED
    assert set(_pages(copy, site).values()) == {(None, None, None)}  # the columns read only what is stored


def test_the_stored_comparison_is_the_one_of_the_two_stored_versions(site: str, archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve(None)
        sent = dict(read.page_html(reader, commit, True))
        rendered = dict(read.page_html(reader, commit, False))
        stored = {url: json.loads(text)["js"] for url, text, _, _ in read.page_html_facts(reader, commit)}
    assert len(stored) == len(COLUMNS)
    assert all(stored[url] == js_dependence(url, rendered[url], sent[url]) for url in stored)


def test_links_written_differently_to_the_same_target_are_not_new() -> None:
    url = "http://site.test/dir/page"
    sent = '<html><body><main><p>one two</p><a href="other">o</a><a href="http://elsewhere.test/">x</a></main></body></html>'
    # the rendered page writes the same target absolutely, adds an external link and a fragment of a known one
    rendered = (
        '<html><body><main><p>one two</p><a href="http://site.test/dir/other">o</a>'
        '<a href="http://third.test/">y</a><a href="/dir/other#part">p</a><a href="/new">n</a></main></body></html>'
    )
    found = js_dependence(url, rendered, sent)
    assert found is not None and found["links"] == ["http://site.test/new"] and found["link_count"] == 1
    assert found["text_share"] == 50  # "one two o y p n": "one", "two" and "o" were sent, 3 of 6 words
    # nothing to compare with an empty version
    assert js_dependence(url, rendered, "") is None and js_dependence(url, "  ", sent) is None


def test_the_viewer_and_the_report_rows_show_the_columns(site: str, archive: Path) -> None:
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        sheet = run_query(registry, reader, "report-pages", {"scope": "targets", "limit": 100})["items"]
    rows = {r["url"].replace(site, ""): (r["js_links"], r["raw_text_share"], r["js_changed"]) for r in sheet}
    assert {url: row for url, row in rows.items() if url in COLUMNS} == COLUMNS
    app = create_app(archive, make_plugin_manager())
    try:
        html = app.test_client().get("/pages?set=seo").get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()
    assert "Main text without JavaScript (%)" in html and "Changed by JavaScript" in html
    assert html.count('<td class="k-text">title, description, h1</td>') == 1
    assert html.count('<td class="k-text">robots</td>') == 2


def test_render_auto_finds_what_rendering_finds(site: str, auto: Path) -> None:
    """Each scripted page runs its own script (its own template): all rendered, each its template's sample;
    /hidden has the structure of /static, whose sample showed nothing, and is read as sent."""
    found = _findings(auto, site)
    assert {check: found[check] for check in EXPECTED} == EXPECTED
    columns = _pages(auto, site)
    assert columns == {**COLUMNS, f"{J}/hidden": (None, None, None)}
    registry = query_registry(make_plugin_manager())
    with open_archive(auto) as reader:
        rows = run_query(registry, reader, "pages", {"url": f"{site}{J}/", "limit": 100})["items"]
    decisions = {row["url"].replace(site, ""): row["render_decision"] for row in rows}
    assert decisions.pop(f"{J}/hidden") == f"read as sent: sample {site}{J}/static same"
    assert decisions.pop(f"{J}/static") == "rendered: sample of its template: same"
    assert decisions.pop(f"{J}/") == "rendered: sample of its template: same"
    assert all(
        d is not None and d.startswith("rendered: sample of its template: differs: ")
        for d in decisions.values()
    )


def test_the_page_list_sheet_has_the_javascript_columns(site: str, archive: Path, tmp_path: Path) -> None:
    import csv

    result = run_cli("report", str(archive), "--csv", "out", "--only", "Page List", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "out" / "page-list.csv").open(encoding="utf-8-sig", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    labels = ("Links Only After JavaScript", "Main Text Without JavaScript (%)", "Changed by JavaScript")
    at = header.index(labels[0])
    assert tuple(header[at : at + 3]) == labels and header[at - 1] == "Last Modified"
    found = {row[header.index("URL")].replace(site, ""): tuple(row[at : at + 3]) for row in rows}
    # the CSV writes numbers as text, and an empty cell for none
    assert found == {
        url: (str(links), str(share), changed) for url, (links, share, changed) in COLUMNS.items()
    }


def _sheet_rendering(archive: Path, origin: str, workdir: Path) -> dict[str, tuple[str, str]]:
    """The Page List CSV's Rendered and Rendering Reason of each /js-site/ page, as the report writes them."""
    import csv

    workdir.mkdir()
    result = run_cli("report", str(archive), "--csv", "out", "--only", "Page List", cwd=workdir)
    assert result.returncode == 0, result.stderr
    with (workdir / "out" / "page-list.csv").open(encoding="utf-8-sig", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    at = header.index("Rendered")
    assert header[at - 1 : at + 2] == ["Changed by JavaScript", "Rendered", "Rendering Reason"]
    url = header.index("URL")
    return {row[url].replace(origin, ""): (row[at], row[at + 1]) for row in rows if f"{J}/" in row[url]}


def test_the_page_list_sheet_says_whether_each_page_was_rendered_and_why(
    site: str, archive: Path, unrendered: Path, auto: Path, tmp_path: Path
) -> None:
    assert _sheet_rendering(archive, site, tmp_path / "always") == dict.fromkeys(COLUMNS, ("TRUE", ""))
    never = "render never: read from the HTML the server sent"
    assert _sheet_rendering(unrendered, site, tmp_path / "never") == {
        url: ("FALSE", never) for url in COLUMNS if url != f"{J}/hidden"
    }
    found = _sheet_rendering(auto, site, tmp_path / "auto")
    assert set(found) == set(COLUMNS)
    assert found.pop(f"{J}/hidden") == ("FALSE", f"render auto: sample {site}{J}/static same")
    assert (
        found.pop(f"{J}/static")
        == found.pop(f"{J}/")
        == ("TRUE", "render auto: sample of its template: same")
    )
    assert all(
        rendered == "TRUE" and why.startswith("render auto: sample of its template: differs: ")
        for rendered, why in found.values()
    ), found
