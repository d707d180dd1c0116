"""What robots.txt lets well-known crawlers fetch, judged from the robots.txt a real crawl stored (issue 32).

The test site's robots.txt (test_server/routes/robots.py) disallows everything to GPTBot, CCBot and
Google-Extended and /ai-crawlers/members/ to ClaudeBot; /ai-crawlers/ has four pages, two of them there.
"""

from __future__ import annotations

import json

from support import run_cli

SECTION = "/ai-crawlers/"


def _crawled(crawl, site):
    return crawl(site + SECTION, "--render", "never", "--no-image", shared=True)


def _query(archive, *args: str) -> dict:
    result = run_cli("query", str(archive), "crawlers", *args, cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_crawlers_query_judges_each_crawler_site_wide_and_per_page(crawl, site):
    crawled = _crawled(crawl, site)
    found = _query(crawled.archive)
    assert found["robots_txt"] == [{"url": f"{site}/robots.txt", "status": 200, "failure": None}]
    rows = {row["token"]: row for row in found["crawlers"]}
    verdict = {
        token: (
            row["group"],
            row["site_wide"],
            row["pages_allowed"],
            row["pages_disallowed"],
            row["everything_blocked"],
        )
        for token, row in rows.items()
    }
    assert verdict["GPTBot"] == ("gptbot", False, 0, 4, True)
    assert verdict["CCBot"] == ("ccbot", False, 0, 4, True)
    assert verdict["Google-Extended"] == ("google-extended", False, 0, 4, True)
    assert verdict["ClaudeBot"] == ("claudebot", True, 2, 2, False)
    # everyone else falls to the * group, which forbids only /private/ (no page of the section)
    for token in set(rows) - {"GPTBot", "CCBot", "Google-Extended", "ClaudeBot"}:
        assert verdict[token] == ("*", True, 4, 0, False), token
    assert rows["GPTBot"]["company"] == "OpenAI" and rows["GPTBot"]["source"].startswith("https://")
    assert "disallowed" not in rows["GPTBot"]


def test_crawlers_query_lists_one_agents_disallowed_pages(crawl, site):
    crawled = _crawled(crawl, site)
    found = _query(crawled.archive, "--agent", "claudebot")
    (row,) = found["crawlers"]
    assert row["token"] == "ClaudeBot"
    assert row["disallowed"] == [f"{site}/ai-crawlers/members/", f"{site}/ai-crawlers/members/page"]
    unknown = run_cli(
        "query", str(crawled.archive), "crawlers", "--agent", "NoSuchBot", cwd=crawled.archive.parent
    )
    assert unknown.returncode != 0 and "NoSuchBot" in unknown.stderr


def test_summary_names_the_ai_crawlers_blocked_site_wide(crawl, site):
    crawled = _crawled(crawl, site)
    summary = json.loads(run_cli("query", str(crawled.archive), "summary").stdout)
    crawlers = summary["crawlers"]
    assert crawlers["ai_blocked"] == ["Google-Extended", "GPTBot", "CCBot"]
    assert crawlers["blocked"] == ["Google-Extended", "GPTBot", "CCBot"]
    assert crawlers["ai_partly"] == []
    assert (crawlers["crawlers"], crawlers["ai_crawlers"]) == (30, 24)
    # the crawl's own summary says it in a line (JSON on stdout, the lines for people on stderr)
    line = (
        "AI crawlers: 3 of 24 blocked site-wide by robots.txt (Google-Extended, GPTBot, CCBot); "
        "search crawlers: 0 of 6 (query crawlers)"
    )
    assert line in crawled.result.stderr
    assert json.loads(crawled.result.stdout)["crawlers"] == crawlers


def test_a_crawl_that_ignores_robots_txt_judges_nothing(crawl, site):
    crawled = crawl(site + SECTION, "--render", "never", "--no-image", "--ignore-robots", name="ignored")
    found = _query(crawled.archive)
    assert found["robots_txt"] == []
    assert {row["site_wide"] for row in found["crawlers"]} == {None}
    assert {row["pages_unknown"] for row in found["crawlers"]} == {4}
    summary = json.loads(run_cli("query", str(crawled.archive), "summary").stdout)
    assert summary["crawlers"] is None
    assert "AI crawlers:" not in crawled.result.stderr
    # the viewer's summary says why it names none
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    app = create_app(crawled.archive, make_plugin_manager())
    try:
        html = app.test_client().get("/summary").get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()
    assert 'id="crawlers-none"' in html and 'id="crawlers-ai"' not in html
    assert "No robots.txt of the start URLs&#39; hosts was read or answered" in html


def test_an_archive_without_the_robots_txt_table_judges_nothing_and_a_writer_adds_it(crawl, site):
    from archive.archive_testdata import _rewrite

    crawled = _crawled(crawl, site)
    _rewrite(crawled.archive, lambda conn: conn.execute("DROP TABLE robots_txt"))
    found = _query(crawled.archive)
    assert found["robots_txt"] == [] and {row["site_wide"] for row in found["crawlers"]} == {None}
    assert json.loads(run_cli("query", str(crawled.archive), "summary").stdout)["crawlers"] is None
    # the next crawl into it creates the table and stores its robots.txt with its own commit
    again = crawl(site + SECTION, "--render", "never", "--no-image", name=crawled.archive.stem)
    assert again.archive == crawled.archive
    assert [row["token"] for row in _query(again.archive, "--agent", "GPTBot")["crawlers"]] == ["GPTBot"]
    assert _query(again.archive)["robots_txt"] == [
        {"url": f"{site}/robots.txt", "status": 200, "failure": None}
    ]
