"""The Issues overview names what changed against the base: the new, fixed and regressed findings by check
with their URLs, a few each, then "and N more" leading to the list filtered by state."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import lxml.html
from archives import SITE

import nitpicker_viewer.changes as changes_view


def doc(client, path: str, lang: str = "en"):
    response = client.get(path, headers={"Accept-Language": lang})
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    return lxml.html.fromstring(response.get_data(as_text=True))


def text(node) -> str:
    return " ".join(node.text_content().split())


def checks(section, change: str) -> dict:
    """check id → (the line's text without its URL list, [(URL, note)], its links' targets by class)."""
    out = {}
    for item in section.xpath(f'ul[@data-change="{change}"]/li'):
        urls = [
            (
                text(li.xpath('a[@class="url"]')[0]),
                text(li.xpath('span[@class="detail"]')[0]) if li.xpath('span[@class="detail"]') else "",
            )
            for li in item.xpath('ul[@class="url-list"]/li')
        ]
        links = {a.get("class"): a.get("href") for a in item.xpath("a")}
        out[item.get("data-changed-check")] = (urls, links, text(item))
    return out


def query_of(href: str) -> dict:
    return {key: value[0] for key, value in parse_qs(urlsplit(href).query).items()}


def test_home_lists_new_fixed_and_regressed_findings_by_check_with_their_urls(issues_client):
    page = doc(issues_client, "/")  # commit 3 against its parent, 2: /missing and /old are back
    [section] = page.xpath('//section[@id="issue-changes"]')
    assert text(section.xpath("h2")[0]) == "What changed since commit 2"
    answer = issues_client.get("/api/issues").get_json()["items"]
    headings = [text(h) for h in section.xpath("h3")]
    new = sum(row["new"] or 0 for row in answer)
    assert headings[0] == f"New findings ({new})" and headings[-1].startswith(
        "Regressed: fixed before, back now"
    )
    broken_urls, links, line = checks(section, "new")["broken-link"]
    # the link's page, then its target: which link broke
    assert broken_urls == [(SITE + "/", SITE + "/missing"), (SITE + "/", SITE + "/old")]
    assert line.startswith("High broken-link Internal links to pages that answer 4xx (2)")
    assert query_of(links["check-link"]) == {"check": "broken-link", "state": "new"}
    assert "more" not in links  # all of them are listed
    regressed, _, _ = checks(section, "regressed")["broken-link"]
    assert regressed == broken_urls
    # the most severe check first
    assert section.xpath('ul[@data-change="new"]/li')[0].get("data-changed-check") == "broken-link"
    # the priority filter of the overview applies to them too
    high = doc(issues_client, "/?priority=high").xpath('//section[@id="issue-changes"]')[0]
    listed = high.xpath("ul/li[@data-changed-check]")
    assert "broken-link" in {item.get("data-changed-check") for item in listed}
    assert {item.xpath('span[contains(@class, "priority")]')[0].get("class") for item in listed} <= {
        "priority p-critical",
        "priority p-high",
    }


def test_past_the_first_urls_and_checks_the_lists_link_to_the_rest(issues_client, monkeypatch):
    monkeypatch.setattr(changes_view, "URLS_PER_CHECK", 1)
    monkeypatch.setattr(changes_view, "CHECKS_PER_CHANGE", 1)
    page = doc(issues_client, "/?base=2")
    [section] = page.xpath('//section[@id="issue-changes"]')
    new = checks(section, "new")
    assert list(new) == ["broken-link"]
    urls, links, line = new["broken-link"]
    assert urls == [(SITE + "/", SITE + "/missing")] and line.endswith("and 1 more")
    assert query_of(links["more"]) == {"check": "broken-link", "state": "new", "base": "2"}
    listed = doc(issues_client, links["more"])  # the check's list filtered by state lists both
    rows = listed.xpath('//section[@aria-labelledby="issue-urls-h"]//table[@class="data"]/tbody/tr')
    assert len(rows) == 2 and all("New" in text(row) for row in rows)
    more_checks = section.xpath('p/a[@class="more-checks"]')[0]
    assert re.fullmatch(r"and \d+ more checks", text(more_checks))
    assert query_of(more_checks.get("href")) == {"show": "new", "base": "2"}


def test_the_first_commit_has_nothing_to_name_and_japanese_labels_are_translated(issues_client):
    assert doc(issues_client, "/?commit=1").xpath('//section[@id="issue-changes"]') == []
    page = doc(issues_client, "/", lang="ja")
    assert text(page.xpath('//section[@id="issue-changes"]/h2')[0]) == "コミット 2 からの変化"
    assert text(page.xpath('//section[@id="issue-changes"]/h3')[0]).startswith("新しい指摘")
