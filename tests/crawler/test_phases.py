"""Where a crawl's time went: per-phase totals in the commit's stats, never in the pages' stored data."""

from __future__ import annotations

import pytest
from support import crawl_subtree

from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.phases import ARCHIVE_WRITE_IN_PROCESS, SCRAPE_PHASES_KEY, PhaseClock

pytestmark = pytest.mark.browser


def test_phase_clock_sums_and_takes_the_scrape_phases_out():
    clock = PhaseClock()
    extra = {SCRAPE_PHASES_KEY: {"navigation": 0.25, "settle": 0.5}, "kept": 1}
    clock.add_scrape(extra, 1.0)
    clock.add("archive write", 0.5)
    clock.add("archive write", 0.25, count=0)  # the same page's resources
    assert extra == {"kept": 1}
    assert clock.as_dict() == {
        "navigation": {"seconds": 0.25, "count": 1, "mean_ms": 250.0},
        "settle": {"seconds": 0.5, "count": 1, "mean_ms": 500.0},
        "render other": {"seconds": 0.25, "count": 1, "mean_ms": 250.0},
        "archive write": {"seconds": 0.75, "count": 1, "mean_ms": 750.0},
    }


def test_a_crawl_records_its_phases_and_stores_none_per_page(site, tmp_path):
    archive = crawl_subtree(f"{site}/recursive/", tmp_path, "--no-image")
    with open_archive(archive) as reader:
        stats = reader.commits()[0]["stats"]
        pages = list(reader.pages(reader.resolve()))
    rendered = stats["rendered"]
    assert rendered >= 3
    phases = stats["phases"]
    for phase in ("navigation", "settle", "extraction", "render other", "links"):
        assert phases[phase]["count"] == rendered, (phase, phases[phase])
        assert phases[phase]["seconds"] > 0
    assert phases["preflight"]["count"] >= rendered
    # stored by the archive writer process by default (on the writer thread with NITPICKER_WRITER_PROCESS=0)
    assert phases.get(ARCHIVE_WRITE_IN_PROCESS, phases.get("archive write", {})).get("count", 0) >= rendered
    assert "images" not in phases  # --no-image
    assert not [p["url"] for p in pages if SCRAPE_PHASES_KEY in (p.get("extra") or {})]
