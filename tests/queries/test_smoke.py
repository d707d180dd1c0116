"""The shared query archive is real: crawled, analyzed, with commits to read."""

from __future__ import annotations


def test_archive_fixture(query, qsite):
    commits = query("commits")
    assert commits["total"] == 1 and commits["items"][0]["status"] == "complete"
    info = query("info")
    assert info["roots"][0] == qsite + "/"
