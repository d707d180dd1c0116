"""An unchanged site whose files arrive at their own pace is recorded the same by every crawl, on a loaded machine
too (issue 33: `crawl --update --full` of an unchanged static site reported pages modified, because whether the
favicon, the lazy images and what scripts added were recorded depended on timing)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from nitpicker_core.archive import open_archive
from test_server.routes.stable_site import PAGES

pytestmark = pytest.mark.browser


@contextlib.contextmanager
def _loaded(processes: int) -> Iterator[None]:
    """``processes`` children spinning on the CPU for as long as the block runs: a busy machine."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for child in spinning:
            child.kill()
            child.wait()


def _recorded(reader, commit: int, url: str) -> tuple:  # noqa: ANN001 - an ArchiveReader
    """What a commit holds of one page: its images per preset, its resources, its errors."""
    images = sorted(
        (i["viewport_width"], i["alt"] or "", i["current_src"], i["natural_width"])
        for i in reader.images(url, commit)
    )
    errors = sorted(e["message"] for e in reader.page_errors(url, commit))
    return images, sorted(reader.page_resources(url, commit)), errors


def test_an_unchanged_site_is_recorded_the_same_by_every_crawl_however_busy_the_machine(
    crawl, site, cli, tmp_path
):
    c = crawl(f"{site}/stable-site/")
    with _loaded(2):  # two spinning processes on two cores: everything the browser does comes late
        for _ in range(2):
            result = cli(
                "crawl", "--update", str(c.archive), "--full", "--parallels", "2", cwd=tmp_path, timeout=300
            )
            assert result.returncode == 0, result.stderr
    at = f"{site}/stable-site/"
    pages = [at + name for name in PAGES]
    with open_archive(c.archive) as reader:
        first = {url: _recorded(reader, 1, url) for url in pages}
        for commit in (2, 3):
            changes = reader.diff(1, commit)
            assert (changes["added"], changes["removed"], changes["modified"]) == ([], [], []), commit
            assert changes["resources"] == {"added": [], "removed": [], "modified": []}, commit
            assert {url: _recorded(reader, commit, url) for url in pages} == first, commit
        files = {r["url"]: r for r in reader.resources(1)}
    images, resources, _errors = first[at]
    # what is recorded is the page as read, whole: the lazy images below the fold (the broken one a 404), the
    # file each device preset picked, the image a script added once its fetch answered, the favicon
    wanted = {
        "logo.png", "wide.png", "art-large.png", "art-small.png", "data/home.json",
        "fetched-home.png", "lazy-home-0.png", "lazy-home-1.png", "lazy-home-2.png", "gone-lazy.png", "icon.png",
    }  # fmt: skip
    assert set(resources) == {at + name for name in wanted}
    assert files[at + "gone-lazy.png"]["status"] == 404 and files[at + "icon.png"]["status"] == 200
    # …and not what a timer added after it was read, nor the image of a menu nobody opened (never loaded)
    alts = {"logo", "responsive", "art", "menu", "fetched", "lazy 0", "lazy 1", "lazy 2", "broken"}
    assert {alt for _, alt, _, _ in images} == alts
    shown = {(width, alt): (src, loaded) for width, alt, src, loaded in images}
    assert shown[(1280, "responsive")] == (at + "wide.png", 2)
    assert shown[(1280, "art")] == (at + "art-large.png", 2)
    assert shown[(320, "art")] == (at + "art-small.png", 1)
    assert shown[(1280, "fetched")] == (at + "fetched-home.png", 1)
    assert shown[(1280, "lazy 2")] == (at + "lazy-home-2.png", 1) and shown[(1280, "broken")][1] is None
    assert shown[(1280, "menu")][1] is None
    # a broken favicon is a broken resource of its page; a page naming none has none (the /favicon.ico
    # Chromium asks for it by itself is not the page's)
    assert at + "missing-icon.png" in first[at + "p2"][1] and files[at + "missing-icon.png"]["status"] == 404
    assert not any("icon" in url for url in first[at + "plain"][1])
