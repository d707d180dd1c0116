"""The page view's "Raw vs rendered" tab on the real crawl of /js-site/ (shared with the JavaScript-dependence
checks, tests/conftest.py): the two versions' fields side by side with each row's state, the links only one
version has, the two sources line by line, all of it text; driven in Chromium and checked with axe."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from nitpicker_core import version_record
from nitpicker_viewer import versions

J = "/js-site"
SAME = {field: "same" for field, _ in versions.FIELDS}
# The exact state of each row, for each scripted page (test_server/routes/js_site.py) and a static one
STATES = {
    "static": SAME,
    "head": {**SAME, "title": "changed", "description": "changed", "h1s": "changed"},
    "links": {**SAME, "link_count": "changed", "main_words": "changed"},  # + the link and its text "Hidden"
    "text": {**SAME, "main_words": "changed"},  # "Loading" becomes 60 words
    "canonical": {**SAME, "canonicals": "changed"},
    "noindex-added": {**SAME, "robots": "only_rendered"},
    "noindex-removed": {**SAME, "robots": "only_raw"},
}


@pytest.fixture(scope="module")
def app(js_site_archive: Path, viewer_over: Any) -> Any:
    with viewer_over(js_site_archive) as app:
        yield app


def _path(site: str, name: str) -> str:
    return f"/page?url={quote(f'{site}{J}/{name}', safe='')}"


def _rows(html: str) -> dict[str, str]:
    """The comparison table's rows: field → state, as the page says them."""
    table = html.split('id="versions-fields"', 1)[1].split("</table>", 1)[0]
    return dict(re.findall(r'data-field="([a-z_0-9]+)" data-state="([a-z_]+)"', table))


@pytest.mark.parametrize("name", sorted(STATES))
def test_each_row_says_whether_the_versions_agree(app: Any, site: str, name: str) -> None:
    response = app.test_client().get(_path(site, name))
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'href="#t-versions"' in html and 'id="t-versions"' in html
    assert _rows(html) == STATES[name]
    differs = sum(state != "same" for state in STATES[name].values())
    assert f'data-differs="{differs}"' in html
    assert f'<a href="#t-versions">Raw vs rendered ({differs})</a>' in html  # the tab counts them too


def test_the_head_page_shows_both_values_and_its_scripts_as_text(app: Any, site: str) -> None:
    html = app.test_client().get(_path(site, "head")).get_data(as_text=True)
    title = html.split('data-field="title"', 1)[1].split("</tr>", 1)[0]
    assert "JavaScript head" in title and "Scripted title" in title and "changed" in title
    h1 = html.split('data-field="h1s"', 1)[1].split("</tr>", 1)[0]
    assert "Sent heading" in h1 and "Scripted heading" in h1
    # the page's scripts are in the line diff as escaped text, never as markup
    diff = html.split('id="versions-diff"', 1)[1].split("</table>", 1)[0]
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in diff
    assert "<script>" not in diff and "window.pwned" not in diff.replace("&lt;script&gt;window.pwned", "")
    changed = re.findall(r'data-change="([a-z]+)"', diff)
    assert "changed" in changed and "equal" in changed
    # the title line as sent beside the rendered one on one changed row, what differs marked on each side
    rows = re.findall(r'<tr class="v-changed".*?</tr>', diff, re.S)
    mark = '&lt;title&gt;<mark class="v-diff-part">{}</mark>&lt;/title&gt;'
    assert sum(mark.format("JavaScript head") in r and mark.format("Scripted title") in r for r in rows) == 1
    assert all("<mark" not in r for r in re.findall(r'<tr class="v-equal".*?</tr>', diff, re.S))


def test_the_query_gives_both_versions_and_their_records(app: Any, site: str) -> None:
    url = quote(f"{site}{J}/head", safe="")
    found = app.test_client().get(f"/api/page-versions?url={url}&max_chars=50").get_json()
    assert found["unrendered"] is None and found["source_omitted"] is None
    sent, rendered = found["sent"], found["rendered"]
    assert (sent["record"]["title"], rendered["record"]["title"]) == ("JavaScript head", "Scripted title")
    assert (sent["record"]["h1s"], rendered["record"]["h1s"]) == (["Sent heading"], ["Scripted heading"])
    assert sent["truncated"] and len(sent["html"]) == 50 and sent["length"] > 50  # the record read it all
    assert sent["record"]["main_words"] == rendered["record"]["main_words"] == 62


def test_links_only_in_one_version_are_listed_with_their_count(app: Any, site: str) -> None:
    html = app.test_client().get(_path(site, "links")).get_data(as_text=True)
    rendered = html.split('id="versions-only-rendered"', 1)[1].split("</section>", 1)[0]
    assert "(1)" in rendered and f"{site}{J}/hidden" in rendered
    raw = html.split('id="versions-only-raw"', 1)[1].split("</section>", 1)[0]
    assert "(0)" in raw and 'data-list="versions-only-raw"' not in raw
    static = app.test_client().get(_path(site, "static")).get_data(as_text=True)
    assert 'data-list="versions-only-rendered"' not in static


def test_a_page_left_unrendered_says_so(js_site_unrendered: Path, viewer_over: Any, site: str) -> None:
    with viewer_over(js_site_unrendered) as unrendered:
        client = unrendered.test_client()
        html = client.get(_path(site, "head")).get_data(as_text=True)
        assert 'id="versions-none" data-state="unrendered"' in html
        assert "This page was not rendered" in html and "--render never" in html
        assert 'id="versions-fields"' not in html and '<a href="#t-versions">Raw vs rendered</a>' in html
        found = client.get(f"/api/page-versions?url={quote(f'{site}{J}/head', safe='')}").get_json()
        assert found["rendered"] is None and found["unrendered"].startswith("--render never")
        client.get("/lang/ja?next=/")
        ja = client.get(_path(site, "head")).get_data(as_text=True)
        assert "送信時とレンダリング後" in ja and "このページはレンダリングされていないため" in ja


def test_a_missing_version_is_named_not_compared() -> None:
    html = "<html><head><title>T</title></head><body><main><p>one</p></main></body></html>"
    kept = {
        "html": html,
        "length": len(html),
        "truncated": False,
        "record": version_record("http://a.test/", html),
    }
    assert versions.comparison({"unrendered": None, "sent": kept, "rendered": None})["state"] == "no_rendered"
    omitted = {"unrendered": None, "source_omitted": "over 5000000 bytes", "sent": None, "rendered": kept}
    assert versions.comparison(omitted) == {"state": "no_sent", "reason": "over 5000000 bytes"}
    unreadable = {**kept, "record": None}
    assert (
        versions.comparison({"unrendered": None, "sent": unreadable, "rendered": kept})["state"]
        == "unreadable"
    )
    assert versions.comparison({"unrendered": None, "sent": kept, "rendered": kept})["identical"] is True


def test_long_pages_are_cut_and_missing_versions_named_in_the_page(tmp_path: Path, viewer_over: Any) -> None:
    from nitpicker_testing.archives import archive_builder, page

    site = "https://versions.test"
    body = "\n".join(f"<p>line {i}</p>" for i in range(versions.MAX_LINES + 100))
    sent_links = "\n".join(f'<a href="/sent/{i}">s</a>' for i in range(250))
    rendered_links = "\n".join(f'<a href="/rendered/{i}">r</a>' for i in range(210))
    sent = f"<html><head><title>Long</title></head><body><main>{sent_links}\n{body}</main></body></html>"
    rendered = (
        f"<html><head><title>Long</title></head><body><main>{rendered_links}\n{body}</main></body></html>"
    )
    path = tmp_path / "versions.nitpicker"
    with archive_builder(path, roots=[site + "/"]) as build:
        build.page(page(f"{site}/long", rendered, source=sent))
        build.page(
            page(f"{site}/kept", "<html><body><p>x</p></body></html>", extra={"source_omitted": "too large"})
        )
        build.page(page(f"{site}/logo.png", content_type="image/png"))
    with viewer_over(path) as app:
        client = app.test_client()
        html = client.get(f"/page?url={quote(site + '/long', safe='')}").get_data(as_text=True)
        assert 'id="versions-cut"' in html and "Only the first 200000 characters and 3000 lines" in html
        only_rendered = html.split('id="versions-only-rendered"', 1)[1].split("</section>", 1)[0]
        assert "(210)" in only_rendered and only_rendered.count('class="url"') == 200
        assert "… and 10 more." in only_rendered
        only_raw = html.split('id="versions-only-raw"', 1)[1].split("</section>", 1)[0]
        assert "(250)" in only_raw and "… and 50 more." in only_raw
        rows = re.findall(r'data-change="([a-z]+)"', html.split('id="versions-diff"', 1)[1])
        assert len(rows) < 500 and rows.count("fold") == 1  # 3,000 identical lines folded into one row
        kept = client.get(f"/page?url={quote(site + '/kept', safe='')}").get_data(as_text=True)
        assert (
            'data-state="no_sent"' in kept and "was not kept for this page" in kept and "(too large)" in kept
        )
        image = client.get(f"/page?url={quote(site + '/logo.png', safe='')}").get_data(as_text=True)
        assert 'data-state="no_rendered"' in image and "No rendered HTML was stored" in image


def test_the_japanese_tab(app: Any, site: str) -> None:
    client = app.test_client()
    client.get("/lang/ja?next=/")
    html = client.get(_path(site, "noindex-removed")).get_data(as_text=True)
    assert "送信時とレンダリング後" in html and "送信時のみ" in html and "メタ robots" in html


def test_the_comparison_is_bounded_and_says_so() -> None:
    sent = "\n".join(f"<p>line {i}</p>" for i in range(versions.MAX_LINES + 50))
    rendered = sent.replace("<p>line 20</p>", "<p>line twenty</p>")
    answer = {
        "unrendered": None,
        "sent": {
            "html": sent,
            "length": len(sent),
            "truncated": False,
            "record": version_record("http://a.test/", sent),
        },
        "rendered": {
            "html": rendered,
            "length": len(rendered),
            "truncated": False,
            "record": version_record("http://a.test/", rendered),
        },
    }
    found = versions.comparison(answer)
    assert found["cut"] and found["line_changes"] == 1
    changes = [row["change"] for row in found["lines"]]
    # 3 lines of context each side of the change, the rest of the identical lines folded
    assert (
        changes
        == ["equal"] * 3 + ["fold"] + ["equal"] * 3 + ["changed"] + ["equal"] * 3 + ["fold"] + ["equal"] * 3
    )
    assert found["lines"][3]["count"] == 14 and found["lines"][-4]["count"] == versions.MAX_LINES - 21 - 6
    assert found["lines"][7] == {
        "change": "changed",
        "a": 21,
        "left": "<p>line 20</p>",
        "b": 21,
        "right": "<p>line twenty</p>",
        "left_parts": ("<p>line ", "20", "</p>"),
        "right_parts": ("<p>line ", "twenty", "</p>"),
    }
    assert found["aligned"] is True
    many = {"items": [], "total": 0, "more": 0}
    assert versions.only_in([f"http://a.test/{i}" for i in range(250)], []) == {
        **many,
        "items": [f"http://a.test/{i}" for i in range(versions.LINKS_SHOWN)],
        "total": 250,
        "more": 50,
    }


def test_lines_too_slow_to_align_are_paired_by_position() -> None:
    # rows of repeated lines: difflib takes 5 s to align these (2 minutes with autojunk off)
    sent = [f"<i>{i % 300}</i>" for i in range(versions.MAX_LINES)]
    rendered = [f"<i>{(i * 3) % 300}</i>" for i in range(versions.MAX_LINES - 10)]
    codes, aligned = versions.opcodes(sent, rendered)
    assert aligned is False
    rows = list(versions.line_rows(sent, rendered, codes))
    paired = [row for row in rows if row["change"] != "fold"]
    assert all(row["a"] == row["b"] for row in paired if row["change"] in ("equal", "changed"))
    assert [row["a"] for row in paired if row["change"] == "removed"] == list(
        range(versions.MAX_LINES - 9, versions.MAX_LINES + 1)
    )
    assert not any(row["change"] == "inserted" for row in rows)
    # small inputs align as before
    assert versions.opcodes(["a", "b"], ["b"]) == ([("delete", 0, 1, 0, 0), ("equal", 1, 2, 0, 1)], True)


def test_every_state_field_and_reason_has_its_words() -> None:
    from nitpicker_viewer import i18n

    keys = {f"versions.field.{field}" for field, _ in versions.FIELDS}
    keys |= {f"versions.state.{s}" for s in ("same", "changed", "only_rendered", "only_raw")}
    keys |= {f"versions.line.{c}" for c in ("changed", "removed", "inserted")}
    keys |= {f"versions.none.{s}" for s in ("unrendered", "no_rendered", "no_sent", "unreadable")}
    for language in ("en", "ja"):
        assert sorted(keys - set(i18n.catalog(language))) == [], language


@pytest.mark.browser
def test_the_tab_in_chromium_shows_the_comparison_and_runs_nothing_of_the_page(
    app: Any, serving: Any, browser: Any, site: str
) -> None:
    context = browser.new_context(locale="en-US", reduced_motion="reduce")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        with serving(app) as base:
            page.goto(base + _path(site, "head") + "#t-versions")
            panel = page.locator("#t-versions")
            assert (
                panel.is_visible()
                and page.locator("#t-versions-tab").get_attribute("aria-selected") == "true"
            )
            rows = panel.locator("#versions-fields tbody tr")
            assert rows.evaluate_all("rs => rs.map(r => [r.dataset.field, r.dataset.state])") == [
                [field, STATES["head"][field]] for field, _ in versions.FIELDS
            ]
            title = panel.locator("#versions-fields tr[data-field=title] td")
            assert title.all_inner_texts() == ["JavaScript head", "Scripted title", "≠ changed"]
            # the page's source is text in the viewer: its script element is not there, and it never ran
            assert panel.locator(".v-code", has_text="window.pwned = 1").count() >= 1
            assert page.locator("#t-versions script").count() == 0
            assert page.evaluate("window.pwned") is None
            page.goto(base + _path(site, "static") + "#t-versions")
            states = page.locator("#versions-fields tbody tr td.v-state").all_inner_texts()
            assert states == ["= same"] * len(versions.FIELDS)
            assert (
                page.locator("#versions-summary").inner_text()
                == "Every field below is the same in both versions."
            )
            assert page.evaluate("window.pwned") is None
        assert errors == []
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_tab_has_no_serious_axe_findings(
    app: Any, serving: Any, browser: Any, axe_serious: Any, site: str, theme: str
) -> None:
    paths = [_path(site, name) + "#t-versions" for name in ("head", "links", "noindex-removed")]
    with serving(app) as base:
        assert axe_serious(browser, base, paths, theme) == {}
