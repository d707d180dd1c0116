"""The next URL's preflight runs while the tabs render; its skip check is asked once; none ahead with --interval."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path

import pytest
import requests

from nitpicker_core import CrawlContext, hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.plugins import make_plugin_manager

pytestmark = pytest.mark.browser


class AskedToSkip:
    """Counts how often the crawler asks the skip hook about each URL."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    @hookimpl
    def crawl_should_skip(self, url: str, crawl: CrawlContext) -> str | None:
        self.asked[url] += 1
        return None


def _crawler(root: str, output: Path, *, interval: int = 0) -> tuple[Crawler, AskedToSkip]:
    counter = AskedToSkip()
    pm = make_plugin_manager()
    pm.add_plugin(counter, "asked-to-skip")
    options = CrawlOptions(
        roots=[root], parallels=1, interval=interval, image=False, user_agent="Nitpicker/test"
    )
    return Crawler(pm, options, output), counter


def test_one_tab_renders_while_the_next_url_is_preflighted_and_asked_once(site, tmp_path):
    run = uuid.uuid4().hex
    root = f"{site}/preflight-ahead/{run}/"
    crawler, counter = _crawler(root, tmp_path / "ahead.nitpicker")
    stats = asyncio.run(crawler.run())
    report = requests.get(f"{site}/preflight-ahead/{run}/report", timeout=30).json()
    with open_archive(tmp_path / "ahead.nitpicker") as reader:
        errors = reader.crawl_errors()
    assert stats.status == "complete" and stats.rendered == 3, errors
    # the leaf rendered first held its tab until the crawler asked the server for the other leaf
    assert report["holds"] == {"alpha": True, "bravo": True}, report
    leaves = {root + "alpha", root + "bravo"}
    assert leaves <= set(counter.asked) and set(counter.asked.values()) == {1}, counter.asked


def test_workers_ahead_of_the_tabs_only_without_interval(site, tmp_path):
    ahead, _ = _crawler(f"{site}/", tmp_path / "a.nitpicker")
    spaced, _ = _crawler(f"{site}/", tmp_path / "s.nitpicker", interval=200)
    assert ahead._worker_count(2) > 2 and ahead._worker_count(1) > 1
    assert spaced._worker_count(2) == 2 and spaced._worker_count(1) == 1
