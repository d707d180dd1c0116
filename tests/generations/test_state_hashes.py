"""State hashes come from logical content: an unchanged re-crawl shares every state, one change is one."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest
from support import run_cli

from nitpicker_core.archive import open_archive

# Rows that hold content: an unchanged re-crawl adds none of them (only the new commit's own bookkeeping).
CONTENT_TABLES = (
    "page_state",
    "resource_state",
    "blob",
    "anchor",
    "heading",
    "page_resource",
    "url",
    "set_finding",
)  # the same findings again are not stored again either
# The bookkeeping of one commit of the 31-page site: its commits row (options and environment shared with
# the parent's), 31 commit_page rows, the resource referrers and an agg_commit row pointing at the parent's
# aggregate set, measured at about 5 KiB (it was 10 KiB with a copy of the aggregates and manifest per commit).
BOOKKEEPING_BYTES = 7 * 1024


def _table_bytes(archive) -> dict[str, int]:
    """Bytes in use per table and index (SQLite's dbstat), to tell the crawl's growth from the checks'."""
    with open_archive(archive) as reader:
        rows = reader.execute("SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name")
    return {name: size for name, size in rows}


def _rows(archive) -> dict[str, int]:
    with open_archive(archive) as reader:
        return {t: reader.execute(f"SELECT COUNT(*) FROM {t}")[0][0] for t in CONTENT_TABLES}


@pytest.fixture(scope="module")
def history(site, tmp_path_factory) -> dict[str, Any]:
    """One site crawled, re-crawled twice unchanged, then once more after p3 changed (commits 1 to 4).

    Every re-crawl is ``--update --full``: rendered again (no 304 shortcut), so the hashes are what is
    tested. Both tests read this one history; the archive's sizes and rows are taken after commits 1 and 3.
    """
    root = f"{site}/generations/hashes-{uuid.uuid4().hex[:10]}/"  # a site of its own (see conftest.py)
    archive = tmp_path_factory.mktemp("hashes") / "gen.nitpicker"

    def crawl(*where: str) -> dict[str, Any]:
        result = run_cli("crawl", "--parallels", "2", "--no-image", *where, cwd=archive.parent, timeout=300)
        assert result.returncode == 0, result.stderr
        return {"size": archive.stat().st_size, "rows": _rows(archive), "tables": _table_bytes(archive)}

    first = crawl("-o", str(archive), root)
    for _ in range(2):  # two re-crawls: the racing sub-resources come in another order at least once
        unchanged = crawl("--full", "--update", str(archive))
    with urllib.request.urlopen(root + "__change/p3", timeout=30) as response:
        assert json.load(response)["version"] == 1
    crawl("--full", "--update", str(archive))
    return {"root": root, "archive": archive, "first": first, "unchanged": unchanged}


def test_unchanged_recrawl_modifies_nothing_and_stores_no_content(history) -> None:
    archive, first, unchanged = history["archive"], history["first"], history["unchanged"]
    with open_archive(archive) as reader:
        assert sorted(c["id"] for c in reader.commits()) == [1, 2, 3, 4]  # 2 and 3: the unchanged re-crawls
        pages = reader.pages(3, scraped=True)
        assert len([p for p in pages if p["status"] == 200]) == 31  # index and p1..p30, all rendered
        assert all(len(reader.page_resources(f"{history['root']}p{n}", 3)) == 3 for n in range(1, 31))
        diffs = [reader.diff(1, 2), reader.diff(2, 3)]
    assert [d["modified"] for d in diffs] == [[], []]
    assert [d["resources"]["modified"] for d in diffs] == [[], []]
    assert unchanged["rows"] == first["rows"]
    growth = (unchanged["size"] - first["size"]) / 2
    # the crawl checks' stored findings (finding*, check_result, set_*) have their own store, measured apart
    stored_findings = ("finding", "check_result", "set_")
    crawl = (
        sum(
            v - first["tables"].get(k, 0)
            for k, v in unchanged["tables"].items()
            if not k.startswith(stored_findings)
        )
        / 2
    )
    print(
        f"growth per unchanged re-crawl: {growth:.0f} bytes ({growth / first['size']:.2%} of {first['size']}), "
        f"{crawl:.0f} of them outside the findings tables"
    )
    assert crawl <= BOOKKEEPING_BYTES


def test_one_changed_page_is_the_one_modified_page(history) -> None:
    p3 = history["root"] + "p3"
    with open_archive(history["archive"]) as reader:
        diff = reader.diff(3, 4)
        assert (diff["added"], diff["removed"], diff["modified"]) == ([], [], [p3])
        assert reader.page(p3, 4)["title"] == "Generations p3 v1"
        assert reader.page(p3, 3)["title"] == "Generations p3"
