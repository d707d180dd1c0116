"""State hashes come from logical content: an unchanged re-crawl shares every state, one change is one."""

from __future__ import annotations

from nitpicker_core.archive import open_archive

# Rows that hold content: an unchanged re-crawl adds none of them (only the new commit's own bookkeeping).
CONTENT_TABLES = ("page_state", "resource_state", "blob", "anchor", "heading", "page_resource", "url",
                  "set_finding")  # the same findings again are not stored again either
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


def test_unchanged_recrawl_modifies_nothing_and_stores_no_content(gsite, recrawl) -> None:
    archive = recrawl(gsite.root)
    first_size, first_rows, first_tables = archive.stat().st_size, _rows(archive), _table_bytes(archive)
    for _ in range(2):  # two re-crawls: the racing sub-resources come in another order at least once
        recrawl(gsite.root, "--full")  # rendered again (no 304 shortcut): the hashes are what is tested
    with open_archive(archive) as reader:
        commits = sorted(c["id"] for c in reader.commits())
        assert len(commits) == 3
        pages = reader.pages(commits[-1], scraped=True)
        assert len([p for p in pages if p["status"] == 200]) == 31  # index and p1..p30, all rendered
        assert all(len(reader.page_resources(gsite.url(f"p{n}"))) == 3 for n in range(1, 31))
        diffs = [reader.diff(a, b) for a, b in zip(commits, commits[1:], strict=False)]
    assert [d["modified"] for d in diffs] == [[], []]
    assert [d["resources"]["modified"] for d in diffs] == [[], []]
    assert _rows(archive) == first_rows
    growth = (archive.stat().st_size - first_size) / 2
    tables = _table_bytes(archive)
    # the crawl checks' stored findings (finding*, check_result, set_*) have their own store, measured apart
    stored_findings = ("finding", "check_result", "set_")
    crawl = sum(v - first_tables.get(k, 0) for k, v in tables.items() if not k.startswith(stored_findings)) / 2
    print(f"growth per unchanged re-crawl: {growth:.0f} bytes ({growth / first_size:.2%} of {first_size}), "
          f"{crawl:.0f} of them outside the findings tables")
    assert crawl <= BOOKKEEPING_BYTES


def test_one_changed_page_is_the_one_modified_page(gsite, recrawl) -> None:
    archive = recrawl(gsite.root)
    gsite.change("p3")
    recrawl(gsite.root, "--full")
    with open_archive(archive) as reader:
        diff = reader.diff(1, 2)
        assert (diff["added"], diff["removed"], diff["modified"]) == ([], [], [gsite.url("p3")])
        assert reader.page(gsite.url("p3"), 2)["title"] == "Generations p3 v1"
        assert reader.page(gsite.url("p3"), 1)["title"] == "Generations p3"
