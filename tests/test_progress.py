"""The crawl progress line."""

from __future__ import annotations

from nitpicker_cli.progress import progress_line
from nitpicker_core.crawler.queue import QueueCounts


def test_progress_line_format():
    counts = QueueCounts(internal_done=130, internal_rendered=85, internal_found=250, external_done=12,
                         external_found=20, pending=100, in_progress=8)
    assert progress_line(counts, 10) == (
        "Crawling: 130(85) done / 250 found URLs (+12/20 ext) (52%) [108 remaining] [10 parallel]")
