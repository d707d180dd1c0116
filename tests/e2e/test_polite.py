"""The polite governor, against test_server's /polite/ routes: Retry-After honoured on the preflight and on the
browser's navigation, a 503 asked again after a slowdown, and --max-rps spacing one host's requests.

The waits are measured from the server's own request log (when each request arrived), never slept for here.
"""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

from nitpicker_core.archive import open_archive
from test_server.routes.polite import BUSY, PAGES, RETRY_AFTER


def _log(site: str, name: str) -> list[tuple[str, str, float]]:
    with urllib.request.urlopen(f"{site}/polite/{name}/__log", timeout=10) as answer:
        return [tuple(entry) for entry in json.load(answer)]


def _times(log: list[tuple[str, str, float]], path: str) -> list[float]:
    return [t for _, p, t in log if p == path]


@pytest.fixture
def name() -> str:
    return uuid.uuid4().hex[:12]


def test_retry_after_of_a_429_is_waited_for_and_the_page_ends_200(crawl, site, name):
    url = f"{site}/polite/{name}/busy"
    crawled = crawl("--single", "--no-image", url)
    page = crawled.page(url)
    assert page["status"] == 200 and page["title"] == "Busy Page"
    assert not page["extra"].get("blocked")
    times = _times(_log(site, name), f"/polite/{name}/busy")
    assert len(times) >= BUSY + 1  # two 429s, then the 200 (the preflight's), then the browser's GET
    for before, after in zip(times[:BUSY], times[1 : BUSY + 1], strict=True):
        assert after - before >= RETRY_AFTER - 0.1, times  # no request before the Retry-After was over
    host = site.split("://")[1]
    waited = json.loads(crawled.result.stdout)["waited"]  # the crawl's JSON result, and its stored stats
    assert waited[host] >= BUSY * RETRY_AFTER - 0.2, waited
    with open_archive(crawled.archive) as reader:
        assert reader.commits()[0]["stats"]["waited"] == waited
    assert f"Waited: {waited[host]:.1f} s on {host}" in crawled.result.stderr


def test_a_503_without_retry_after_is_asked_again_after_a_slowdown(crawl, site, name):
    url = f"{site}/polite/{name}/unavailable"
    crawled = crawl("--single", "--no-image", url)
    page = crawled.page(url)
    assert page["status"] == 200 and page["title"] == "Available Again"
    times = _times(_log(site, name), f"/polite/{name}/unavailable")
    # the HEAD's 503 falls back to a GET at once; that GET's 503 slows the host down before the next GET
    assert len(times) >= BUSY + 1
    assert times[BUSY] - times[BUSY - 1] >= 0.4, times


def test_a_429_on_the_browsers_navigation_is_rendered_again_after_retry_after(crawl, site, name):
    url = f"{site}/polite/{name}/browser-busy"
    crawled = crawl("--single", "--no-image", url)
    page = crawled.page(url)
    assert page["status"] == 200 and page["title"] == "Browser Busy Page"
    gets = [t for method, p, t in _log(site, name) if method == "GET" and p == f"/polite/{name}/browser-busy"]
    assert len(gets) == 2, gets  # the navigation answered 429, then 200 once Retry-After was over
    assert gets[1] - gets[0] >= RETRY_AFTER - 0.1, gets


@pytest.mark.parametrize(("render", "given"), [("always", "flag"), ("never", "config")])
def test_max_rps_spaces_the_requests_to_one_host(crawl, site, name, render, given, tmp_path):
    if given == "config":  # [crawl] max_rps in the config file of the working directory
        (tmp_path / "nitpicker.toml").write_text("[crawl]\nmax_rps = 2\n", encoding="utf-8")
    flag = ("--max-rps", "2") if given == "flag" else ()
    crawled = crawl(*flag, "--render", render, "--no-image", f"{site}/polite/{name}/")
    assert len([u for u in crawled.pages if f"/polite/{name}/p" in u]) == PAGES
    times = sorted(t for _, p, t in _log(site, name) if p.startswith(f"/polite/{name}/"))
    assert len(times) >= PAGES + 1
    # each request starts on its turn, 0.5 s after the one before; when it reaches the server varies a little
    # (a thread to start, Chromium to send the navigation), so the arrivals are spaced on average
    assert times[-1] - times[0] >= (len(times) - 1) * 0.5 - 0.6, times
    if render == "never":  # one GET per page from the crawler itself: each one is spaced from the one before
        gaps = [after - before for before, after in zip(times, times[1:], strict=False)]
        assert min(gaps) >= 0.3, gaps
