"""What robots.txt lets well-known crawlers fetch (nitpicker_core.crawler_access): the judging, no archive."""

from __future__ import annotations

from urllib.parse import urlsplit

from nitpicker_core.crawler_access import KINDS, RobotsFile, access, blocked_summary, crawlers, written_on

SITE = "https://example.org"
PAGES = [f"{SITE}/", f"{SITE}/blog/a", f"{SITE}/blog/b", f"{SITE}/shop/"]
RULES = """User-agent: *
Disallow: /shop/

User-agent: GPTBot
Disallow: /

User-agent: ClaudeBot
Allow: /
Disallow: /blog/

User-agent: CCBot
Disallow: /
Allow: /blog/
"""


def _rows(files, roots=(SITE + "/",), pages=PAGES, **kwargs):
    return {row["token"]: row for row in access(files, roots, pages, **kwargs)}


def test_the_data_file_names_each_crawler_once_with_its_vendors_documentation() -> None:
    found = crawlers()
    tokens = [c.token.lower() for c in found]
    assert len(tokens) == len(set(tokens)) == 30
    assert {"gptbot", "claudebot", "google-extended", "ccbot", "perplexitybot", "googlebot"} <= set(tokens)
    for crawler in found:
        assert crawler.kind in KINDS and urlsplit(crawler.source).scheme == "https", crawler
        assert crawler.ai == (crawler.kind != "search"), crawler
        assert crawler.renders_js in (True, False, None)
    assert written_on() == "2026-12-03"


def test_each_crawler_gets_the_group_naming_it_else_the_star_group() -> None:
    rows = _rows([RobotsFile(SITE, 200, None, RULES)])
    verdict = {
        t: (r["group"], r["site_wide"], r["pages_allowed"], r["pages_disallowed"]) for t, r in rows.items()
    }
    assert verdict["GPTBot"] == ("gptbot", False, 0, 4)
    assert rows["GPTBot"]["everything_blocked"]
    assert verdict["ClaudeBot"] == ("claudebot", True, 2, 2)
    # "/" is disallowed but /blog/ allowed again: blocked site-wide, not everywhere
    assert verdict["CCBot"] == ("ccbot", False, 2, 2)
    assert not rows["CCBot"]["everything_blocked"]
    assert verdict["Bingbot"] == ("*", True, 3, 1)
    assert rows["Bingbot"]["pages_unknown"] == 0


def test_one_agent_lists_its_disallowed_pages() -> None:
    rows = _rows([RobotsFile(SITE, 200, None, RULES)], tokens=["claudebot"], list_disallowed=True)
    assert list(rows) == ["ClaudeBot"]
    assert rows["ClaudeBot"]["disallowed"] == [f"{SITE}/blog/a", f"{SITE}/blog/b"]


def test_status_answers_read_as_rfc_9309_says() -> None:
    # a 4xx robots.txt allows everything; a 5xx disallows everything; no answer is unknown
    missing = _rows([RobotsFile(SITE, 404)])["GPTBot"]
    assert (missing["group"], missing["site_wide"], missing["pages_allowed"]) == (None, True, 4)
    failing = _rows([RobotsFile(SITE, 503, "503")])["GPTBot"]
    assert (failing["site_wide"], failing["pages_disallowed"], failing["everything_blocked"]) == (
        False,
        4,
        True,
    )
    silent = _rows([RobotsFile(SITE, None, "timeout")])["GPTBot"]
    assert (silent["site_wide"], silent["pages_allowed"], silent["pages_unknown"]) == (None, 0, 4)
    # nothing judged site-wide: the summary counts no crawler (the summary query then says none)
    assert blocked_summary(_rows([RobotsFile(SITE, None, "timeout")]).values())["crawlers"] == 0
    unread = _rows([])["GPTBot"]
    assert (unread["site_wide"], unread["pages_unknown"], unread["everything_blocked"]) == (None, 4, False)


def test_two_start_origins_that_disagree_read_partly() -> None:
    other = "https://shop.example.org"
    files = [RobotsFile(SITE, 200, None, RULES), RobotsFile(other, 200, None, "User-agent: *\nAllow: /\n")]
    rows = _rows(files, roots=(SITE + "/", other + "/x"), pages=[*PAGES, other + "/x"])
    assert rows["GPTBot"]["site_wide"] == "partly"
    assert (rows["GPTBot"]["pages_allowed"], rows["GPTBot"]["pages_disallowed"]) == (1, 4)
    summary = blocked_summary(rows.values())
    assert summary["ai_partly"] == ["GPTBot", "CCBot"]
    assert summary["blocked"] == []


def test_the_summary_names_the_blocked_in_the_data_files_order() -> None:
    summary = blocked_summary(access([RobotsFile(SITE, 200, None, RULES)], [SITE + "/"]))
    assert summary == {
        "crawlers": 30,
        "blocked": ["GPTBot", "CCBot"],
        "ai_crawlers": 24,
        "ai_blocked": ["GPTBot", "CCBot"],
        "ai_partly": [],
    }


def test_a_robots_txt_protego_cannot_read_allows_everything() -> None:
    rows = _rows([RobotsFile(SITE, 200, None, "\x00\x01 not rules at all\nDisallow /\n")])
    assert (rows["GPTBot"]["site_wide"], rows["GPTBot"]["pages_allowed"]) == (True, 4)
