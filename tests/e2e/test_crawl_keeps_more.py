"""A real crawl keeps what an auditor needs: the sent HTML, hrefs as written with positions, headings."""

from __future__ import annotations

import hashlib
import json

from support import run_cli

from nitpicker_core.archive import open_archive
from test_server.routes.keeps_more import DOC, DOC_HEADINGS, DOC_POSITIONS


def _query(archive, *args: str) -> dict:
    result = run_cli("query", str(archive), *args, cwd=archive.parent, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_crawl_keeps_sent_html_raw_hrefs_positions_and_headings(crawl, site):
    done = crawl(site + "/keeps/", ok=(0, 1))
    start = done.page(site + "/keeps/")
    assert start["source_sha256"] == hashlib.sha256(DOC.encode()).hexdigest() != start["html_sha256"]
    with open_archive(done.archive) as reader:
        assert reader.source(site + "/keeps/") == DOC
        assert "Caf\xe9 cr\xe8me" in reader.source(site + "/keeps/latin1")
    anchors = done.anchors[site + "/keeps/"]
    assert [(a["raw_href"], a["line"], a["col"]) for a in anchors] == DOC_POSITIONS
    assert (anchors[0]["href"], anchors[0]["fragment"]) == (site + "/keeps/whatsnew/changelog.html", "id1")

    mine = _query(done.archive, "headings", "--url", site + "/keeps/")
    assert [(h["level"], h["text"]) for h in mine["items"]] == DOC_HEADINGS
    h2s = _query(done.archive, "headings", "--level", "2")
    assert {h["url"] for h in h2s["items"]} == {
        site + "/keeps/",
        site + "/keeps/noh1",
        site + "/keeps/whatsnew/changelog.html",
    }

    problems = _query(done.archive, "h1-problems")
    assert [(p["url"], p["problem"], p["h1"]) for p in problems["items"]] == [
        (site + "/keeps/noh1", "missing", []),
        (site + "/keeps/twoh1", "multiple", ["First", "Second"]),
    ]
    assert problems["not_recorded"] == 0
    assert _query(done.archive, "h1-problems", "--problem", "multiple")["total"] == 1
