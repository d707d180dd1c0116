"""Who referenced a sub-resource is derived from the page states (format 3), so an unchanged re-crawl adds nothing.

The pages of a commit that loaded a resource are the pages whose state lists it; format 2 wrote them again
for every commit in a table of their own. A writer upgrades a format-2 archive on open (the rows it drops are
what the view gives back), and a reader still reads format 2's table as it is.
"""

from __future__ import annotations

from pathlib import Path

from archive_testdata import downgrade_to_format2, page

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.models import FORMAT_VERSION
from nitpicker_core.records import CrawlErrorRecord, Resource

CSS, JS, EXTRA = "https://example.org/site.css", "https://example.org/app.js", "https://example.org/extra.js"


def crawl(w: ArchiveWriter, pages: list, extra_on: int | None = None) -> int:
    """One commit as the crawler writes it: the pages, then each resource with the page that loaded it."""
    c = w.begin_commit()
    for result in pages:
        if extra_on is not None and result.url.endswith(f"/p/{extra_on}"):
            result.resources = [*result.resources, EXTRA]
    w.put_pages(c, pages)
    w.put_resources(
        c, [(Resource(url, 200, content_type="text/css"), p.url) for p in pages for url in p.resources]
    )
    w.finish_commit(c)
    return c


def referrers(r, commit: int) -> dict[str, list[str]]:
    rows = r.execute(
        "SELECT ru.url, pu.url FROM commit_resource_referrer x JOIN url ru ON ru.id = x.resource_url_id "
        "JOIN url pu ON pu.id = x.page_url_id WHERE x.commit_id = ? ORDER BY 1, 2",
        [commit],
    )
    found: dict[str, list[str]] = {}
    for resource, referrer in rows:
        found.setdefault(resource, []).append(referrer)
    return found


def counts(r, commit: int) -> dict[str, int]:
    return {row["url"]: row["referrers"] for row in r.resources(commit)}


def test_referrers_follow_each_commits_page_states(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    first = crawl(w, [page(i, 5) for i in range(5)])
    second = crawl(w, [page(i, 5) for i in range(5)])  # unchanged: the same states
    third = crawl(w, [page(i, 5) for i in range(4)], extra_on=2)  # p/4 gone, p/2 loads one more script
    w.write()
    w.close()
    every = [f"https://example.org/p/{i}" for i in range(5)]
    with open_archive(target) as r:
        kind = r.execute("SELECT type FROM sqlite_master WHERE name = 'commit_resource_referrer'")[0][0]
        assert kind == "view" and r.format_version == FORMAT_VERSION
        assert referrers(r, first) == referrers(r, second) == {CSS: every, JS: every}
        assert referrers(r, third) == {CSS: every[:4], JS: every[:4], EXTRA: ["https://example.org/p/2"]}
        assert counts(r, second) == {CSS: 5, JS: 5}
        assert counts(r, third) == {CSS: 4, EXTRA: 1, JS: 4}


def test_an_unchanged_commit_adds_no_referrer_rows(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    crawl(w, [page(i, 40) for i in range(40)])
    indexes = "SELECT COUNT(*) FROM page_resource"
    before = w._conn.execute(indexes).fetchone()[0]
    crawl(w, [page(i, 40) for i in range(40)])
    assert w._conn.execute(indexes).fetchone()[0] == before == 80  # two resources per state, stored once
    w.write()
    w.close()


def test_a_writer_upgrades_format_2_and_a_reader_reads_it_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    first = crawl(w, [page(i, 5) for i in range(5)])
    w.write()
    w.close()
    with open_archive(target) as r:
        expected = referrers(r, first)
    downgrade_to_format2(target)
    with open_archive(target) as r:  # readers never migrate: format 2's table answers
        assert r.format_version == 2
        assert (
            r.execute("SELECT type FROM sqlite_master WHERE name = 'commit_resource_referrer'")[0][0]
            == "table"
        )
        assert referrers(r, first) == expected and counts(r, first) == {CSS: 5, JS: 5}
    w = ArchiveWriter.open(target)
    assert w.info()["format_version"] == FORMAT_VERSION
    assert set(stored(w, first).values()) == {5}  # counted from format 2's table before it was dropped
    second = crawl(w, [page(i, 5) for i in range(3)])
    w.write()
    w.close()
    with open_archive(target) as r:
        assert (
            r.execute("SELECT type FROM sqlite_master WHERE name = 'commit_resource_referrer'")[0][0]
            == "view"
        )
        assert referrers(r, first) == expected
        assert counts(r, second) == {CSS: 3, JS: 3}


def stored(w: ArchiveWriter, commit: int) -> dict[int, int | None]:
    return dict(
        w._conn.execute("SELECT url_id, referrers FROM commit_resource WHERE commit_id = ?", (commit,))
    )


def test_counts_are_kept_when_a_commit_finishes_and_dropped_when_it_changes_again(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    pages = [page(i, 5) for i in range(3)]
    c = w.begin_commit()
    w.put_pages(c, pages)
    w.put_resources(c, [(Resource(url, 200), p.url) for p in pages for url in p.resources])
    w.write()
    assert set(stored(w, c).values()) == {None}  # running: nothing kept yet, readers count through the view
    with open_archive(target) as r:
        assert counts(r, c) == {CSS: 3, JS: 3}
    w.finish_commit(c, "interrupted")
    assert set(stored(w, c).values()) == {3}
    w.resume_commit(c)  # the same writer goes on with it: what it kept no longer holds
    assert set(stored(w, c).values()) == {None}
    more = [page(3, 5), page(4, 5)]
    w.put_pages(c, more)
    w.put_resources(c, [(Resource(url, 200), p.url) for p in more for url in p.resources])
    w.finish_commit(c)
    assert set(stored(w, c).values()) == {5}
    w.write()
    w.close()
    with open_archive(target) as r:
        assert counts(r, c) == {CSS: 5, JS: 5}
        assert referrers(r, c)[CSS] == [f"https://example.org/p/{i}" for i in range(5)]


def test_crawl_times_read_the_same_in_format_2_and_after_the_upgrade(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, [page(0, 2)], "2026-12-02T04:55:00.123Z")  # links to p/1: a placeholder, seen now
    w.put_crawl_error(
        c,
        CrawlErrorRecord("https://example.org/p/1", "dns", "no such host", "fetch"),
        at="2026-12-02T04:56:01.500Z",
    )
    w.finish_commit(c)
    stored_as = w._conn.execute(
        "SELECT typeof(first_seen_at), last_crawled_at FROM commit_page WHERE last_crawled_at IS NOT NULL"
    ).fetchone()
    assert tuple(stored_as) == ("integer", 1796187300123)  # 6 bytes a time, not 24
    w.write()
    w.close()

    def seen(r) -> tuple:
        first = r.page("https://example.org/p/0")
        placeholder = r.page("https://example.org/p/1")
        return (
            first["first_seen_at"],
            first["last_crawled_at"],
            placeholder["last_crawled_at"],
            r.crawl_errors()[0]["at"],
        )

    with open_archive(target) as r:
        now = seen(r)
        assert now[:3] == ("2026-12-02T04:55:00.123Z", "2026-12-02T04:55:00.123Z", None)
        assert now[3] == "2026-12-02T04:56:01.500Z"
    downgrade_to_format2(target)
    with open_archive(target) as r:
        assert r.format_version == 2 and seen(r) == now
    w = ArchiveWriter.open(target)  # upgraded on open
    w.write()
    w.close()
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION and seen(r) == now
