"""A URL whose HEAD and GET time out like behind a middlebox gets one try in the browser."""

from __future__ import annotations

import asyncio

import pytest

from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.plugins import make_plugin_manager

pytestmark = pytest.mark.browser


def test_middlebox_timeouts_fall_back_to_the_browser(site, tmp_path):
    options = CrawlOptions(
        roots=[f"{site}/middlebox/"],
        parallels=1,
        retry=1,
        image=False,
        user_agent="Nitpicker/test",
        preflight_timeouts=(0.5,),
    )
    stats = asyncio.run(Crawler(make_plugin_manager(), options, tmp_path / "m.nitpicker").run())
    assert stats.status == "complete" and stats.internal_errors == 0 and stats.rendered == 1
    with open_archive(tmp_path / "m.nitpicker") as reader:
        page = reader.page(f"{site}/middlebox/")
    assert (page["title"], page["status"], page["is_target"]) == ("Behind A Middlebox", 200, True)
