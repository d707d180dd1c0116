"""The viewer's Issues views through Flask's test client: overview, base picker, affected URLs, page detail, priority."""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from urllib.parse import parse_qs, quote, urlsplit

from archives import SITE


def html(client, path: str, status: int = 200, **headers: str) -> str:
    response = client.get(path, headers=headers)
    assert response.status_code == status, response.get_data(as_text=True)[:800]
    return response.get_data(as_text=True)


def words(markup: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup))).strip()


def issue_row(page: str, check: str) -> dict[str, str]:
    """One overview row's cells by column (data-col), plus its priority badge and title cell as text."""
    row = re.search(rf'<tr data-check="{re.escape(check)}" data-state="(\w+)">(.*?)</tr>', page, re.S)
    assert row, f"no row for {check}"
    cells = {
        name: words(value)
        for name, value in re.findall(r'<td class="k-num" data-col="(\w+)">(.*?)</td>', row.group(2), re.S)
    }
    cells["state"] = row.group(1)
    cells["priority"] = re.search(r'<span class="priority p-(\w+)">', row.group(2)).group(1)
    cells["title"] = words(re.search(r"<th scope=\"row\">(.*?)</th>", row.group(2), re.S).group(1))
    cells["href"] = unescape(re.search(r'<th scope="row"><a href="([^"]+)"', row.group(2)).group(1))
    return cells


def categories(page: str) -> list[str]:
    return re.findall(r'<section aria-labelledby="cat-([\w-]+)" class="issue-category">', page)


def table_rows(page: str, table_id: str) -> list[list[str]]:
    body = re.search(rf'<table class="data[^"]*" id="{table_id}".*?<tbody>(.*?)</tbody>', page, re.S).group(1)
    return [
        [words(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_home_is_the_issues_overview_grouped_by_category_against_the_parent(issues_client):
    page = html(issues_client, "/")
    assert "<h1>Issues</h1>" in page
    assert "Commit 3 compared with base commit 2." in words(page)
    # categories in the order of their most severe row; each a headed section with a table of its own
    assert categories(page)[:2] == ["links", "accessibility"]
    # broken-link, isolated-page, no-internal-outlinks (the leaf pages link nowhere)
    assert (
        '<h2 id="cat-links">Links (3)</h2>' in page
        and '<caption class="visually-hidden">Issues: Links</caption>' in page
    )
    broken = issue_row(page, "broken-link")
    # % of URLs: 1 of the archive's 5 internal URLs, explained once above the tables
    assert broken == {
        "urls": "1",
        "share": "20.0%",
        "findings": "3",
        "new": "2 2 regressed",
        "fixed": "0",
        "persisting": "1",
        "state": "ok",
        "priority": "high",
        "title": broken["title"],
        "href": broken["href"],
    }
    assert broken["title"].startswith("Internal links to pages that answer 4xx broken-link")
    assert words(page).count("as a share of the 5 internal URLs") == 1
    assert parse_qs(urlsplit(broken["href"]).query) == {"check": ["broken-link"]}
    assert issue_row(page, "axe/region")["priority"] == "medium"  # axe moderate → medium
    assert issue_row(page, "axe/color-contrast")["priority"] == "high"  # axe serious → high
    # the same defect from several sources is one row naming them
    # the same defect from several sources is one row naming the sources that found it (axe ran, found none)
    assert "Found by: markup/duplicate-id" in issue_row(page, "duplicate-id")["title"]
    # checks that found nothing are not listed by default, and the page says how many
    assert 'data-check="title-missing"' not in page
    assert re.search(r"Not listed: \d+ checks that found nothing, \d+ checks not analysed", words(page))
    totals = {
        name: words(value)
        for name, value in re.findall(r'<span class="card-value" id="total-(\w+)">(.*?)</span>', page)
    }
    answer = issues_client.get("/api/issues").get_json()["items"]
    assert totals == {key: str(sum(row[key] or 0 for row in answer)) for key in ("findings", "new", "fixed")}
    # the base's findings that vanished are on pages gone since (an error now): gone, not fixed
    assert totals["new"] != "0" and sum(row["gone"] or 0 for row in answer) > 0


def test_the_base_picker_changes_the_counts_and_lives_in_the_url(issues_client):
    page = html(issues_client, "/?base=1")
    assert "Commit 3 compared with base commit 1." in words(page)
    assert '<option value="1" selected>' in page.split('id="f-base"')[1].split("</select>")[0]
    broken = issue_row(page, "broken-link")
    assert (broken["new"], broken["fixed"], broken["persisting"]) == ("1", "0", "2")
    assert parse_qs(urlsplit(broken["href"]).query) == {"check": ["broken-link"], "base": ["1"]}
    # commit 1 was never analysed: no new/fixed for axe, said so, never 0
    contrast = issue_row(page, "axe/color-contrast")
    assert (contrast["findings"], contrast["new"], contrast["fixed"]) == ("1", "—", "—")
    assert "axe did not run on the base: nothing to compare" in contrast["title"]
    older = html(issues_client, "/?commit=2&base=1")
    broken = issue_row(older, "broken-link")
    assert (broken["findings"], broken["new"], broken["fixed"], broken["persisting"]) == ("1", "1", "2", "0")
    assert parse_qs(urlsplit(broken["href"]).query) == {
        "check": ["broken-link"],
        "commit": ["2"],
        "base": ["1"],
    }


def test_not_analysed_checks_say_so_and_the_base_note_is_shown(issues_client):
    first = html(issues_client, "/?commit=1&show=all")
    assert "Commit 1 has no earlier commit: every finding is new." in words(first)
    row = issue_row(first, "axe/color-contrast")
    assert row["state"] == "not_analysed" and "Not analysed" in row["title"]
    assert (row["urls"], row["findings"], row["new"]) == ("—", "—", "—")
    hidden = words(html(issues_client, "/?commit=1"))
    assert re.search(
        r"checks not analysed on this commit\. \(never run: [a-z, -]*axe, [a-z, -]*markup", hidden
    )
    note = words(html(issues_client, "/"))
    assert (
        "Note on the base: analyzers ran with other versions or settings on the base: axe (4.9 → 4.10); "
        "new findings may come from the tool, not the site"
    ) in note


def test_priority_filter_keeps_that_priority_or_worse(issues_client):
    page = html(issues_client, "/?priority=high&show=all")
    assert 'data-check="broken-link"' in page and 'data-check="axe/color-contrast"' in page
    assert 'data-check="axe/region"' not in page and 'data-check="client-error-page"' not in page
    assert set(re.findall(r'<span class="priority p-(\w+)">', page)) == {"critical", "high"}
    assert "must be one of critical, high" in words(html(issues_client, "/?priority=urgent", 400))


def test_a_row_leads_to_its_urls_with_detail_description_fix_and_help(issues_client):
    page = html(issues_client, "/issue?check=broken-link")
    assert "<h1>Internal links to pages that answer 4xx</h1>" in page
    assert words(re.search(r'<p id="issue-description">(.*?)</p>', page, re.S).group(1)) != "—"
    assert words(re.search(r'<p id="issue-fix-text">(.*?)</p>', page, re.S).group(1)) != "—"
    # a link's row: the page it is on, the target, its anchor text, the target's status, line:col (not recorded)
    assert table_rows(page, "issue-urls") == [
        [f"{SITE}/", "New Regressed", f"{SITE}/missing", "/missing", "404", "—"],
        [f"{SITE}/", "New Regressed", f"{SITE}/old", "/old", "404", "—"],
        [f"{SITE}/", "Persisting", f"{SITE}/new", "/new", "404", "—"],
    ]
    assert f'<a href="/page?url={quote(SITE + "/", safe="")}" class="url">' in page
    fixed = html(issues_client, "/issue?check=broken-link&commit=2&base=1&state=fixed")
    # a fixed link is read where it was: on the base
    assert table_rows(fixed, "issue-urls") == [
        [f"{SITE}/", "Fixed", f"{SITE}/missing", "/missing", "404", "—"],
        [f"{SITE}/", "Fixed", f"{SITE}/old", "/old", "404", "—"],
    ]
    # the filter form keeps the check, commit and base; the pager too
    assert '<input type="hidden" name="check" value="broken-link">' in fixed
    assert '<input type="hidden" name="base" value="1">' in fixed
    paged = html(issues_client, "/issue?check=broken-link&pageSize=1")
    assert "Rows 1–1 of 3" in words(paged)
    nxt = unescape(re.search(r'<a href="([^"]+)" rel="next">', paged).group(1))
    assert parse_qs(urlsplit(nxt).query) == {"check": ["broken-link"], "pageSize": ["1"], "page": ["2"]}


def test_an_analyzer_issue_has_its_help_link_and_a_merged_one_lists_every_source(issues_client):
    contrast = html(issues_client, "/issue?check=axe/color-contrast")
    assert re.search(
        r'<a id="issue-help" href="https://dequeuniversity\.com/rules/axe/[^"]*color-contrast', contrast
    )
    assert table_rows(contrast, "issue-urls") == [
        [f"{SITE}/", "Persisting", '<p class="dim">', "axe/color-contrast"]
    ]
    merged = html(issues_client, "/issue?check=duplicate-id")
    assert table_rows(merged, "issue-urls") == [
        [f"{SITE}/about", "Persisting", '<b id="a">', "markup/duplicate-id"]
    ]
    assert "Found by: markup/duplicate-id" in words(merged)


def test_unknown_and_missing_checks_are_one_line_errors(issues_client):
    unknown = words(html(issues_client, "/issue?check=broken-links", 404))
    assert "no check 'broken-links'; closest: broken-link" in unknown
    assert "give ?check=" in words(html(issues_client, "/issue", 400))


def test_page_detail_lists_the_pages_issues_first(issues_client):
    page = html(issues_client, f"/page?url={quote(SITE + '/', safe='')}")
    sections = re.findall(r'<section aria-labelledby="([\w-]+)">', page)
    assert sections[0] == "issues"
    rows = table_rows(page, "page-issues")
    assert rows[:3] == [
        [
            "High",
            "Internal links to pages that answer 4xx",
            "New Regressed",
            f"{SITE}/missing",
            "broken-link",
        ],
        ["High", "Internal links to pages that answer 4xx", "New Regressed", f"{SITE}/old", "broken-link"],
        ["High", "Internal links to pages that answer 4xx", "Persisting", f"{SITE}/new", "broken-link"],
    ]
    assert [[row[0], row[2], row[3]] for row in rows if row[4] == "axe/region"] == [
        ["Medium", "New", '<div id="x">']
    ]
    priorities = [row[0] for row in rows]
    order = ["Critical", "High", "Medium", "Low", "Info"]
    assert priorities == sorted(priorities, key=order.index)
    # against another base the states follow
    older = table_rows(
        html(issues_client, f"/page?url={quote(SITE + '/', safe='')}&commit=2&base=1"), "page-issues"
    )
    assert [row[2:4] for row in older if row[4] == "broken-link"] == [
        ["New", f"{SITE}/new"],
        ["Fixed", f"{SITE}/missing"],
        ["Fixed", f"{SITE}/old"],
    ]


def test_page_detail_issues_are_every_finding_of_that_url(issues_client):
    states = {"new": "New", "persisting": "Persisting", "fixed": "Fixed"}
    # (/old answers 404 but is linked: its defect is the broken link on "/", not a finding of its own)
    for path in ("/", "/about"):
        url = SITE + path
        expected = set()
        for row in issues_client.get("/api/issues?base=1").get_json()["items"]:
            if row["findings"] or row["fixed"]:
                answer = issues_client.get(
                    f"/api/issue-urls?check={quote(row['id'])}&base=1&limit=1000"
                ).get_json()
                expected |= {
                    (states[item["state"]], item["detail"] or "—", ", ".join(item["sources"]))
                    for item in answer["items"]
                    if item["url"] == url
                }
        shown = table_rows(html(issues_client, f"/page?url={quote(url, safe='')}&base=1"), "page-issues")
        assert {(row[2].replace(" Regressed", ""), row[3], row[4]) for row in shown} == expected, path
        assert len(shown) == len(expected) and expected


def test_violations_filter_by_priority_reaches_axe_and_markup(issues_client):
    high = table_rows(html(issues_client, "/violations?priority=high"), "violations")
    assert [(row[1], row[2], row[3], row[4]) for row in high] == [
        ("axe", "High", "serious", "color-contrast"),
        ("markup", "High", "error", "duplicate-id"),
    ]
    medium = table_rows(html(issues_client, "/violations?priority=medium"), "violations")
    assert [(row[1], row[2], row[3]) for row in medium] == [("axe", "Medium", "moderate")]
    page = html(issues_client, "/violations")
    assert '<select id="f-priority" name="priority">' in page and 'id="f-severity"' not in page
    rules = table_rows(html(issues_client, "/violations/rules?priority=high"), "rules")
    assert sorted((row[0], row[1], row[2]) for row in rules) == [
        ("axe", "color-contrast", "High"),
        ("markup", "duplicate-id", "High"),
    ]


def test_summary_has_its_own_route_and_menu_entry_and_japanese_labels(issues_client):
    home = html(issues_client, "/")
    assert '<a href="/" aria-current="page">Issues</a>' in home and '<a href="/summary">Summary</a>' in home
    assert "<h1>Summary</h1>" in html(issues_client, "/summary")
    japanese = html(issues_client, "/?show=all", **{"Accept-Language": "ja"})
    assert "<h1>問題</h1>" in japanese and '<h2 id="cat-links">リンク' in japanese
    assert (
        '<span class="priority p-high">高</span>' in japanese
        and "未解析" not in words(japanese).split("リンク")[0]
    )
    assert '<label for="f-base">比較対象（ベース）</label>' in japanese


def test_links_to_page_detail_keep_the_commit_and_base(issues_client):
    page = html(issues_client, "/issue?check=broken-link&commit=2&base=1")
    assert f'<a href="/page?url={quote(SITE + "/", safe="")}&amp;commit=2&amp;base=1" class="url">' in page
    detail = html(issues_client, f"/page?url={quote(SITE + '/', safe='')}&commit=2&base=1")
    assert 'href="/issue?commit=2&amp;base=1&amp;check=broken-link"' in detail
    assert "States against base commit 1." in words(detail)


def test_a_bad_base_is_a_one_line_error(issues_client):
    assert "parameter 'base' must be a commit id" in words(html(issues_client, "/?base=yesterday", 400))


def test_a_failing_check_shows_its_error_not_a_count(issues_archive):
    from nitpicker_core import Check, hookimpl
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    def explode(ctx):
        raise RuntimeError("the check broke")

    class Broken:
        @hookimpl
        def register_checks(self, register):
            register(
                Check(
                    "exploding-check",
                    "Explodes",
                    "content",
                    "high",
                    "Always fails.",
                    "Fix the check.",
                    findings=explode,
                )
            )

    pm = make_plugin_manager()
    pm.add_plugin(Broken(), "broken-check")
    app = create_app(issues_archive, pm)
    try:
        page = html(app.test_client(), "/")
        row = issue_row(page, "exploding-check")
        assert row["state"] == "error" and "Error: RuntimeError: the check broke" in row["title"]
        assert (row["findings"], row["new"]) == ("—", "—")
        detail = html(app.test_client(), f"/page?url={quote(SITE + '/', safe='')}")
        assert 'data-check="exploding-check"' not in detail and 'data-check="broken-link"' in detail
    finally:
        app.config["NITPICKER_CLOSE"]()


def test_show_lists_only_checks_with_new_fixed_or_regressed_findings(issues_client):
    for show, where in (("new", "commit=2&base=1"), ("fixed", "commit=2&base=1"), ("regressed", "commit=3")):
        answer = issues_client.get(f"/api/issues?{where}").get_json()["items"]
        page = html(issues_client, f"/?{where}&show={show}")
        listed = re.findall(r'<tr data-check="([^"]+)"', page)
        assert sorted(listed) == sorted(row["id"] for row in answer if row[show]) and listed, show
        assert 'id="hidden-note"' not in page
    assert "broken-link" in re.findall(r'<tr data-check="([^"]+)"', html(issues_client, "/?show=regressed"))
    assert "parameter 'show' must be one of found, new, fixed, regressed, all" in words(
        html(issues_client, "/?show=worse", 400)
    )


def test_api_parameters_named_like_the_viewers_own_arguments_reach_the_query(issues_client):
    # `name` and `keep` were once keywords of the viewer's query helper: a 500, or a parameter silently dropped
    for param in ("name", "keep"):
        response = issues_client.get(f"/api/pages?{param}=x")
        assert response.status_code == 400, param
        assert response.get_json()["error"].startswith(f"query 'pages' has no parameter '{param}'")


def test_a_live_crawl_shows_its_issues_as_they_are_now(tmp_path, pm):
    from archives import demo_pages, storing

    from nitpicker_core import CrawlContext
    from nitpicker_viewer.app import create_app

    crawl = CrawlContext(output=tmp_path / "live.nitpicker", roots=[SITE + "/"], options={"parallels": 1})
    with storing(pm, crawl):
        pages = demo_pages()
        for result in pages[:4]:
            pm.hook.crawl_page_scraped(result=result, crawl=crawl)
        app = create_app(crawl.output, pm)
        try:
            client = app.test_client()
            assert app.extensions["nitpicker"]["immutable"] is False
            assert issue_row(html(client, "/"), "broken-link")["findings"] == "1"  # / → /missing (404)
            home = table_rows(html(client, f"/page?url={quote(SITE + '/', safe='')}"), "page-issues")
            assert [row[3] for row in home if row[4] == "broken-link"] == [f"{SITE}/missing"]
            # another page linking where "/" links: a second URL with a broken link
            pm.hook.crawl_page_scraped(result=dataclasses.replace(pages[0], url=SITE + "/more"), crawl=crawl)
            assert (
                issue_row(html(client, "/"), "broken-link")["urls"] == "2"
            )  # nothing of the first answer kept
        finally:
            app.config["NITPICKER_CLOSE"]()


def headers(page: str, table_id: str) -> list[str]:
    head = re.search(rf'<table class="data[^"]*" id="{table_id}".*?<thead>(.*?)</thead>', page, re.S).group(1)
    return [words(cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]


def test_issue_url_headers_name_their_columns_in_every_language_and_in_the_export(issues_client):
    import csv
    import io

    # "Source page" heads the page a link is on, never a check id; a finding's sources are "Found by"
    assert headers(html(issues_client, "/issue?check=broken-link"), "issue-urls") == [
        "Source page",
        "State",
        "Link target",
        "Anchor text",
        "Status",
        "Line:col",
    ]
    assert headers(html(issues_client, "/issue?check=duplicate-id"), "issue-urls") == [
        "Page",
        "State",
        "Detail",
        "Found by",
    ]
    ja = {"Accept-Language": "ja"}
    assert headers(html(issues_client, "/issue?check=broken-link", **ja), "issue-urls") == [
        "リンク元ページ",
        "状態",
        "リンク先",
        "アンカーテキスト",
        "ステータス",
        "行:列",
    ]
    assert headers(html(issues_client, "/issue?check=duplicate-id", **ja), "issue-urls") == [
        "ページ",
        "状態",
        "詳細",
        "検出元",
    ]
    assert (
        headers(html(issues_client, f"/page?url={quote(SITE + '/', safe='')}"), "page-issues")[-1]
        == "Found by"
    )
    exported = issues_client.get("/issue?check=broken-link&export=csv").get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0] == ["Source page", "State", "Link target", "Anchor text", "Status", "Line:col"]
    assert rows[1] == [f"{SITE}/", "new", f"{SITE}/missing", "/missing", "404", ""]
    # an element check: where its element is, and in which stored HTML (a missing description: the <head>)
    assert headers(html(issues_client, "/issue?check=description-missing"), "issue-urls") == [
        "Page",
        "State",
        "Detail",
        "Line:col",
        "In HTML",
        "Found by",
    ]
    assert headers(html(issues_client, "/issue?check=description-missing", **ja), "issue-urls")[3:5] == [
        "行:列",
        "行のあるHTML",
    ]
    located = issues_client.get("/issue?check=description-missing&export=csv").get_data(as_text=True)
    assert list(csv.reader(io.StringIO(located)))[1] == [
        f"{SITE}/",
        "persisting",
        "missing",
        "1:17",
        "rendered",
        "description-missing",
    ]
    merged = list(
        csv.reader(
            io.StringIO(issues_client.get("/issue?check=duplicate-id&export=csv").get_data(as_text=True))
        )
    )
    assert merged == [
        ["Page", "State", "Detail", "Found by"],
        [f"{SITE}/about", "persisting", '<b id="a">', "markup/duplicate-id"],
    ]
