"""An unchanged static site crawled again is unchanged (issue 33: `crawl --update --full` of one reported 26
pages modified, and images were stored as 304 with no type or size)."""

from __future__ import annotations

import pytest

from nitpicker_core.archive import open_archive
from test_server.routes.static_site import PNG_1X1

pytestmark = pytest.mark.browser


def test_an_unchanged_static_site_recrawled_is_unchanged_and_its_files_keep_their_type(
    crawl, site, cli, tmp_path
):
    c = crawl(f"{site}/static-site/")
    result = cli("crawl", "--update", str(c.archive), "--full", "--parallels", "2", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    logo = f"{site}/static-site/logo.png"
    with open_archive(c.archive) as reader:
        changes = reader.diff(1, 2)
        for commit in (1, 2):
            files = {r["url"]: r for r in reader.resources(commit)}
            # every page after the first asks for the logo again (no-cache) and gets 304: the browser's
            # revalidation of its copy, not what the file is
            assert (files[logo]["status"], files[logo]["content_type"], files[logo]["content_length"]) == (
                200,
                "image/png",
                len(PNG_1X1),
            ), commit
            # the logo, three lazy images a page and the favicon every page names (asked by the crawler)
            assert len(files) == 1 + 8 * 3 + 1 and {r["status"] for r in files.values()} == {200}, commit
    assert (changes["added"], changes["removed"], changes["modified"]) == ([], [], [])
    assert changes["resources"] == {"added": [], "removed": [], "modified": []}
