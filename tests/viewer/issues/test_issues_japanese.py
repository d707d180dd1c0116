"""Checks in Japanese: the `issues` query's `lang`, and every place the viewer shows a check's title, description
and fix (home and Issues overview, issue page, page detail's Issues tab) in the viewer's language; category names
in both catalogs."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from archives import SITE

from nitpicker_core import Check, Finding, hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_viewer.i18n import CATALOG_DIR, LANGUAGES

JA = {
    "title": "About ページが見つかりました",
    "description": "About ページはテスト用の検出です。",
    "fix": "About ページを確認してください。",
}
TRANSLATED = Check(
    "about-page",
    "About page found",
    "content",
    "medium",
    "The about page is a test finding.",
    "Look at the about page.",
    findings=lambda ctx: [Finding(SITE + "/about", "about")],
    i18n={"ja": JA},
)
# a translation that gives only the title: description and fix stay English, field by field
TITLE_ONLY = Check(
    "home-page",
    "Home page found",
    "content",
    "low",
    "The home page is a test finding.",
    "Look at the home page.",
    findings=lambda ctx: [Finding(SITE + "/", "home")],
    i18n={"ja": {"title": "ホームページが見つかりました"}},
)


class JapaneseChecks:
    @hookimpl
    def register_checks(self, register):
        register(TRANSLATED)
        register(TITLE_ONLY)


@pytest.fixture(scope="module")
def pm():
    pm = make_plugin_manager()
    pm.add_plugin(JapaneseChecks(), "japanese-checks")
    return pm


@pytest.fixture(scope="module")
def app(issues_archive, pm):
    from nitpicker_viewer.app import create_app

    app = create_app(issues_archive, pm)
    yield app
    app.config["NITPICKER_CLOSE"]()


def _get(client, path: str, lang: str) -> str:
    client.set_cookie("nitpicker-lang", lang)
    response = client.get(path)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def test_the_issues_query_answers_in_the_language_asked(issues_archive, pm):
    with open_archive(issues_archive) as reader:
        rows = {
            lang: {
                row["id"]: row
                for row in run_query(
                    query_registry(pm), reader, "issues", {"lang": lang} if lang else {}, None
                )["items"]
            }
            for lang in (None, "en", "ja", "fr")
        }
    about, home = rows["ja"]["about-page"], rows["ja"]["home-page"]
    assert (about["title"], about["help"]["description"], about["help"]["fix"]) == (
        JA["title"],
        JA["description"],
        JA["fix"],
    )
    assert (home["title"], home["help"]["description"], home["help"]["fix"]) == (
        "ホームページが見つかりました",
        TITLE_ONLY.description,
        TITLE_ONLY.fix,
    )
    assert rows[None]["about-page"]["title"] == rows["en"]["about-page"]["title"] == "About page found"
    assert rows["fr"] == rows[None]  # no French anywhere: English throughout
    # the built-ins answer from their plugins' messages/ja.json
    assert rows["ja"]["broken-link"]["title"] == "4xx を返す内部ページへの内部リンク"
    assert rows["en"]["broken-link"]["title"] == "Internal links to pages that answer 4xx"
    # only the texts change with the language, never a count
    strip = {"title": None, "help": None}
    assert [{**row, **strip} for row in rows["ja"].values()] == [
        {**row, **strip} for row in rows["en"].values()
    ]


def test_the_viewer_shows_each_check_in_its_language(app):
    client = app.test_client()
    for path in ("/", "/?show=all"):
        page = _get(client, path, "ja")
        assert (
            JA["title"] in page and "ホームページが見つかりました" in page and "About page found" not in page
        )
        assert '<h2 id="cat-content">コンテンツ (' in page
        english = _get(client, path, "en")
        assert "About page found" in english and JA["title"] not in english
        assert '<h2 id="cat-content">Content (' in english

    issue = _get(client, "/issue?check=about-page", "ja")
    assert f"<h1>{JA['title']}</h1>" in issue
    assert f'<p id="issue-description">{JA["description"]}</p>' in issue
    assert f'<p id="issue-fix-text">{JA["fix"]}</p>' in issue
    assert "<td>コンテンツ</td>" in issue  # the category by its name, not its key
    partly = _get(client, "/issue?check=home-page", "ja")
    assert "<h1>ホームページが見つかりました</h1>" in partly
    assert f'<p id="issue-description">{TITLE_ONLY.description}</p>' in partly
    assert "<td>Content</td>" in _get(client, "/issue?check=about-page", "en")

    detail = _get(client, f"/page?url={quote(SITE + '/about', safe='')}", "ja")
    issues_tab = detail.split('id="page-issues"', 1)[1].split("</table>", 1)[0]
    assert JA["title"] in issues_tab and "About page found" not in issues_tab
    detail = _get(client, f"/page?url={quote(SITE + '/about', safe='')}", "en")
    assert "About page found" in detail.split('id="page-issues"', 1)[1].split("</table>", 1)[0]


def test_every_category_of_a_registered_check_has_a_label_in_every_language(pm):
    used = {check.category for check in check_registry(pm)}
    assert {"links", "metadata", "content", "security", "accessibility"} <= used
    for lang in LANGUAGES:
        catalog = json.loads((CATALOG_DIR / f"{lang}.json").read_text(encoding="utf-8"))
        assert sorted(c for c in used if not catalog.get("issue_category." + c)) == [], lang


@pytest.mark.browser
def test_the_language_switch_turns_the_checks_japanese(app, serving, browser):
    with serving(app) as base:
        context = browser.new_context(locale="en-US", reduced_motion="reduce")
        page = context.new_page()
        try:
            page.goto(base + "/issue?check=about-page")
            assert page.locator("main h1").inner_text() == "About page found"
            page.get_by_role("link", name="日本語").click()
            page.wait_for_selector("html[lang=ja]")
            assert page.locator("main h1").inner_text() == JA["title"]
            assert page.locator("#issue-fix-text").inner_text() == JA["fix"]
            page.get_by_role("link", name="問題", exact=True).first.click()
            page.wait_for_url(base + "/")
            assert page.get_by_role("link", name=JA["title"]).count() == 1
        finally:
            context.close()
