"""The viewer's diff view, page diff, page history and commit manifest over an archive of three commits."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import lxml.html
import pytest
from archives import SITE, build_archive, page_html

from nitpicker_core import Analyzer, Anchor, PageReport, ScrapeResult, hookimpl

HOME, ABOUT, CONTACT, PDF = SITE + "/", SITE + "/about", SITE + "/contact", SITE + "/file.pdf"
# The crawled page's own markup and script: the viewer must show them as text, never run or render them.
TITLE_3 = "Home <b>page</b>"
SCRIPT = "<script>window.pwned = 1</script>"


def home(title: str, links: tuple[str, ...], resources: tuple[str, ...], extra: str = "") -> ScrapeResult:
    html = page_html(title, "Welcome." + extra, list(links))
    return ScrapeResult(
        url=HOME,
        status=200,
        content_type="text/html",
        metadata={"title": title},
        html=html,
        headers={"content-type": "text/html"},
        anchors=[Anchor(SITE + h, h) for h in links],
        resources=[SITE + r for r in resources],
    )


def leaf(url: str, title: str) -> ScrapeResult:
    return ScrapeResult(
        url=url,
        status=200,
        content_type="text/html",
        metadata={"title": title},
        html=page_html(title, "Text.", []),
        anchors=[],
    )


def pdf(status: int) -> ScrapeResult:
    """A document with no HTML stored: it can change (its status) but has no HTML to diff."""
    return ScrapeResult(url=PDF, status=status, content_type="application/pdf", anchors=[])


class Lint(Analyzer):
    name = "lint"
    version = "1.0+lint-rules.2.1"  # the rule set is named after '+'

    def each_page(self, page):
        return PageReport({}, [])


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """1: home "Home"; 2: home links /contact too (title unchanged), /contact added; 3: title "Home <b>page</b>",
    old.js replaced by new.js, a script in the body, no link to /about, which is gone; /file.pdf (no HTML)
    answers 200 in 2 and 500 in 3. Commit 3 is analysed by `lint`."""
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    path = tmp_path_factory.mktemp("diffview") / "site.nitpicker"
    build_archive(path, [home("Home", ("/about",), ("/a.css", "/old.js")), leaf(ABOUT, "About")])
    build_archive(
        path,
        [
            home("Home", ("/about", "/contact"), ("/a.css", "/old.js")),
            leaf(ABOUT, "About"),
            leaf(CONTACT, "Contact"),
            pdf(200),
        ],
    )
    build_archive(
        path,
        [home(TITLE_3, ("/contact",), ("/a.css", "/new.js"), SCRIPT), leaf(CONTACT, "Contact"), pdf(500)],
    )

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Lint())

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "lint-plugin")
    run_analyze(pm, load_config(pm, data={}), path, ["lint"], commit=3)
    return path


@pytest.fixture(scope="module")
def app(archive, viewer_over):
    with viewer_over(archive) as app:
        yield app


def get(app, path: str, lang: str = "en"):
    response = app.test_client().get(path, headers={"Accept-Language": lang})
    assert response.status_code == 200, response.get_data(as_text=True)[-500:]
    return response.get_data(as_text=True)


def doc(app, path: str):
    return lxml.html.fromstring(get(app, path))


def texts(nodes) -> list[str]:
    return [" ".join(node.text_content().split()) for node in nodes]


def test_diff_view_explains_each_modified_page_fields_links_and_resources(app):
    page = doc(app, "/diff")  # HEAD (3) against its parent (2)
    assert texts(page.xpath("//h1"))[0].endswith("2 → 3")
    assert texts(page.xpath('//section[@aria-labelledby="diff-removed"]//li')) == [ABOUT]
    # the page that became an error page first, then the others in URL order
    assert [d.get("data-url") for d in page.xpath('//details[@class="page-change"]')] == [PDF, HOME]
    change = page.xpath(f'//details[@data-url="{HOME}"]')[0]
    title = change.xpath('.//tr[@data-field="title"]')[0]
    assert texts(title.xpath("td")) == ["Home", TITLE_3]  # old → new, the markup as text
    resources = texts(change.xpath('.//div[@data-facet="resources"]//li'))
    assert resources == [f"+ {SITE}/new.js", f"− {SITE}/old.js"]
    assert "+1 −1" in texts(change.xpath('.//div[@data-facet="resources"]/h4'))[0]
    link = change.xpath('.//a[@class="html-diff-link"]')[0].get("href")
    assert (urlsplit(link).path, parse_qs(urlsplit(link).query)) == (
        "/diff/page",
        {"url": [HOME], "base": ["2"], "commit": ["3"]},
    )


def test_diff_view_says_what_changed_in_words_before_the_raw_fields(app):
    page = doc(app, "/diff")
    error = page.xpath(f'//details[@data-url="{PDF}"]')[0]
    assert texts(error.xpath("summary"))[0] == f"{PDF} — Now an error page: status 200 → 500"
    assert texts(error.xpath('ul[@class="change-words"]/li'))[0] == "Now an error page: status 200 → 500"
    home_page = page.xpath(f'//details[@data-url="{HOME}"]')[0]
    said = texts(home_page.xpath('ul[@class="change-words"]/li'))
    assert said[0] == f"Title changed from “Home” to “{TITLE_3}”"
    assert "Links: 1 removed" in said and "Resources: 1 added, 1 removed" in said
    # the fields, headers and hashes are there, closed, after the words; never leading
    [raw] = home_page.xpath('details[@class="raw-changes"]')
    assert raw.get("open") is None and raw.xpath('.//tr[@data-field="html_sha256"]')
    assert home_page.index(raw) > home_page.index(home_page.xpath('ul[@class="change-words"]')[0])
    assert "html_sha256" not in texts(home_page.xpath("summary"))[0]
    japanese = lxml.html.fromstring(get(app, "/diff", lang="ja"))
    assert "エラーページになりました: ステータス 200 → 500" in texts(
        japanese.xpath('//ul[@class="change-words"]/li')
    )


def test_page_diff_view_says_what_changed_in_words_first(app):
    page = doc(app, f"/diff/page?url={quote(PDF, safe='')}")
    section = page.xpath('//section[@aria-labelledby="changes"]')[0]
    assert texts(section.xpath('ul[@class="change-words"]/li'))[0] == "Now an error page: status 200 → 500"
    assert section.xpath('details[@class="raw-changes"]//tr[@data-field="status"]')


def test_diff_view_against_a_chosen_base_lists_links_added_and_the_added_page(app):
    page = doc(app, "/diff?base=1&commit=2")
    assert texts(page.xpath('//section[@aria-labelledby="diff-added"]//li')) == [CONTACT, PDF]
    home_change = f'//details[@data-url="{HOME}"]'
    anchors = texts(page.xpath(home_change + '//div[@data-facet="anchors"]//li'))
    assert anchors == [f"+ {CONTACT} “/contact”"]
    assert page.xpath(home_change + '//tr[@data-field="title"]') == []  # the title did not change


def test_page_diff_view_marks_added_and_removed_lines_and_never_renders_the_pages_markup(app):
    text = get(app, f"/diff/page?url={quote(HOME, safe='')}&base=2&commit=3")
    assert "<b>page</b>" not in text and SCRIPT not in text  # escaped: the crawled HTML never reaches the DOM
    page = lxml.html.fromstring(text)
    [pre] = page.xpath('//pre[@class="html-diff"]')
    assert pre.xpath(".//b | .//script") == []
    added, removed = texts(pre.xpath('span[@class="add"]')), texts(pre.xpath('span[@class="del"]'))
    assert "-<title>Home</title>" in removed
    assert any(line.startswith("+<title>Home <b>page</b>") for line in added)
    assert any("window.pwned" in line for line in added)
    assert texts(pre.xpath('span[@class="hunk"]'))[0].startswith("@@ ")
    assert page.xpath('//p[@data-status="modified"]')


def test_page_diff_of_a_changed_page_without_stored_html_shows_its_changes_and_says_why_no_html_diff(app):
    page = doc(app, f"/diff/page?url={quote(PDF, safe='')}")
    assert texts(page.xpath('//tr[@data-field="status"]/td')) == ["200", "500"]
    assert "no stored HTML in site.nitpicker@2" in texts(page.xpath('//p[@id="html-note"]'))[0]
    assert page.xpath('//pre[@class="html-diff"]') == []


def test_page_diff_of_an_added_page_says_so_and_an_unknown_url_is_a_400(app):
    page = doc(app, f"/diff/page?url={quote(CONTACT, safe='')}&base=1&commit=2")
    assert page.xpath('//p[@data-status="added"]') and page.xpath('//pre[@class="html-diff"]') == []
    response = app.test_client().get(f"/diff/page?url={quote(SITE + '/nowhere', safe='')}")
    assert response.status_code == 400 and "/nowhere is in neither" in response.get_data(as_text=True)
    assert app.test_client().get("/diff/page").status_code == 400


def test_page_history_answers_when_the_title_changed_with_old_new_and_commit(app):
    page = doc(app, f"/page?url={quote(HOME, safe='')}")
    rows = page.xpath('//table[@id="page-history"]/tbody/tr')
    title = [row for row in rows if row.get("data-field") == "title"]
    assert [(r.get("data-commit"), texts(r.xpath("td"))[2:4]) for r in title] == [("3", ["Home", TITLE_3])]
    assert [r.get("data-commit") for r in rows if r.get("data-field") == "anchors"] == ["3", "2"]
    assert rows[0].get("data-commit") == "3"  # newest first
    assert "In 3 of 3 commits" in texts(page.xpath('//section[@aria-labelledby="history"]/p'))[0]


def test_page_history_at_an_older_commit_stops_there_and_shows_where_a_page_appeared(app):
    page = doc(app, f"/page?url={quote(HOME, safe='')}&commit=2")
    assert {r.get("data-commit") for r in page.xpath('//table[@id="page-history"]/tbody/tr')} == {"2"}
    contact = doc(app, f"/page?url={quote(CONTACT, safe='')}")
    [row] = contact.xpath('//table[@id="page-history"]/tbody/tr')
    assert (row.get("data-commit"), row.get("data-field")) == ("2", "added")
    assert "In 2 of 3 commits" in texts(contact.xpath('//section[@aria-labelledby="history"]/p'))[0]
    about = doc(app, f"/page?url={quote(ABOUT, safe='')}&commit=2")
    assert texts(about.xpath('//table[@id="page-history"]/tbody/tr')) == [
        "The page did not change in these commits."
    ]


def test_commits_page_shows_the_tools_line_and_the_manifest_in_a_disclosure(app):
    page = doc(app, "/commits")
    rows = page.xpath('//table[@id="commits"]/tbody/tr')
    assert len(rows) == 3
    head = rows[0]
    tools = head.xpath('td[@class="tools"]')[0]
    assert re.match(r"nitpicker \S+.*lint-rules 2\.1", " ".join(tools.text.split()))
    details = tools.xpath('details[@class="manifest"]')[0]
    environment = dict(
        zip(texts(details.xpath(".//th[@scope='row']")), texts(details.xpath(".//tbody/tr/td")), strict=False)
    )
    import platform

    assert environment["Python"].startswith(platform.python_version())
    assert "archive-writer: nitpicker" in environment[[k for k in environment if k.startswith("Plugins")][0]]
    [run] = details.xpath('.//table[@class="data analyzers"]/tbody/tr')
    cells = texts(run.xpath("td"))
    assert cells[:3] == ["lint", "1.0+lint-rules.2.1", "lint-rules 2.1"] and len(cells[3]) >= 8
    assert rows[2].xpath('td[@class="tools"]/details//table[@class="data analyzers"]') == []  # not analysed


def test_diff_history_and_manifest_are_translated(app):
    text = get(app, "/diff", lang="ja") + get(app, f"/page?url={quote(HOME, safe='')}", lang="ja")
    text += get(app, f"/diff/page?url={quote(HOME, safe='')}", lang="ja") + get(app, "/commits", lang="ja")
    for label in (
        "変更前",
        "変更後",
        "HTML の差分",
        "履歴",
        "リソース",
        "環境とアナライザー",
        "ルールセット",
    ):
        assert label in text, label
    for label in ("Before", "After", "History", "Rule set", "Environment and analyzers"):
        assert f">{label}<" not in text, label


@pytest.mark.browser
def test_diff_view_in_chromium_opens_the_html_diff_as_inert_text(app, serving, browser):
    with serving(app) as base:
        context = browser.new_context(locale="en-US")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
        try:
            page.goto(base + "/diff")
            change = page.locator(f'details.page-change[data-url="{HOME}"]')
            assert change.get_attribute("open") is not None
            # what changed in words; the raw fields behind their toggle until it is opened
            words = change.locator('ul.change-words li[data-change="field_changed"]')
            assert words.inner_text() == f"Title changed from “Home” to “{TITLE_3}”"
            raw = change.locator('tr[data-field="title"] td.new')
            assert not raw.is_visible()
            change.locator("details.raw-changes > summary").click()
            raw.wait_for(state="visible")
            assert raw.inner_text() == TITLE_3
            change.locator("a.html-diff-link").click()
            page.wait_for_url(lambda url: urlsplit(url).path == "/diff/page")
            added = page.locator("pre.html-diff span.add")
            assert added.count() >= 3
            colour = added.first.evaluate("e => getComputedStyle(e).backgroundColor")
            assert colour not in ("rgba(0, 0, 0, 0)", "transparent")  # the added lines are marked
            assert page.locator("pre.html-diff b, pre.html-diff script").count() == 0
            assert page.evaluate("window.pwned") is None  # the crawled script never ran in the viewer
            assert errors == []
        finally:
            context.close()


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_diff_page_diff_history_and_commits_have_no_serious_axe_findings(
    app, serving, browser, axe_serious, theme
):
    home_url = quote(HOME, safe="")
    paths = ["/diff", f"/diff/page?url={home_url}", f"/page?url={home_url}", "/commits"]
    with serving(app) as base:
        assert axe_serious(browser, base, paths, theme) == {}


def test_modified_pages_past_the_explained_ones_are_listed_with_their_html_diff_links(app, monkeypatch):
    import nitpicker_viewer.blueprints.commits as commits_view

    monkeypatch.setattr(commits_view, "DIFF_EXPLAIN", 1)
    page = doc(app, "/diff")
    # the page gone since the base (200 → 500) is explained first, then the modified ones
    assert [d.get("data-url") for d in page.xpath('//details[@class="page-change"]')] == [PDF]
    [rest] = page.xpath('//ul[@id="modified-rest"]/li')
    assert rest.xpath("a")[0].text == HOME and rest.xpath('a[@class="html-diff-link"]')
    assert "first 1 modified pages" in texts(page.xpath('//section[@aria-labelledby="diff-modified"]/p'))[0]
