"""The keys the core writes into ScrapeResult.extra are page_state columns (format 5); extra keeps plugins' data.

A reader shows a format-4 archive (the keys inside extra) the same columns without touching it, and a writer
moves them on open; either way every read, the read model's and ``page()``'s, gives what it gave before.
"""

from __future__ import annotations

from pathlib import Path

from archive_testdata import downgrade_to_format4, page

from nitpicker_core import read
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.models import FORMAT_VERSION, PROMOTED_NAMES
from nitpicker_core.records import ScrapeResult

FIELDS = ("url", "error_kind", "permanent", "blocked", "redirect_chain", "outside_scope", "large_images")
BLOCKED, FAILED, SCOPE = "https://example.org/p/1", "https://example.org/gone", "https://example.org/admin/"


def pages() -> list[ScrapeResult]:
    blocked = page(1, 4)
    blocked.status = 403
    blocked.extra = {"blocked": True, "large_images": [{"src": "a.png", "bytes": 900000}], "mine": {"k": 1}}
    return [
        page(0, 4),
        blocked,
        ScrapeResult(url=FAILED, extra={"error_kind": "dns", "permanent": True}),
        ScrapeResult(url=SCOPE, status=200, extra={"outside_scope": True}),
    ]


def crawl(target: Path) -> int:
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, pages())
    w.finish_commit(c)
    w.write()
    w.close()
    return c


def seen(target: Path, commit: int) -> tuple[dict, dict, dict, list]:
    """What every read gives: the read model's rows, page()'s extra, the commit's counts of failures, and the
    links to the blocked page from pages in scope."""
    with open_archive(target) as r:
        rows = {row["url"]: row for row in read.page_rows(r, commit, FIELDS)}
        extras = {url: r.page(url, commit)["extra"] for url in rows}
        counts = r.commits()[0]["stats"]
        failures = {k: v for k, v in counts.items() if "fail" in k or "error" in k}
        return rows, extras, failures, read.links_to(r, commit, [BLOCKED, SCOPE])


def test_new_archives_keep_the_core_keys_in_columns_and_plugins_keys_in_extra(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    commit = crawl(target)
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION == 8
        stored = r.execute(
            "SELECT ps.extra, ps.blocked, ps.large_images FROM page_state ps JOIN url u ON u.id = ps.url_id "
            "WHERE u.url = ?",
            [BLOCKED],
        )[0]
        hreflang = '"hreflang":[{"en":"https://example.org/p/1"}]'  # unknown metadata stays in extra too
        assert tuple(stored) == (f'{{{hreflang},"mine":{{"k":1}}}}', 1, '[{"bytes":900000,"src":"a.png"}]')
        assert r.page(BLOCKED, commit)["extra"] == {
            "blocked": True,
            "hreflang": [{"en": BLOCKED}],
            "large_images": [{"bytes": 900000, "src": "a.png"}],
            "mine": {"k": 1},
        }
        assert r.page(FAILED, commit)["extra"] == {"error_kind": "dns", "permanent": True}
    rows, _, failures, links = seen(target, commit)
    assert failures and links == [
        read.LinkRow("https://example.org/p/0", BLOCKED),
        read.LinkRow(BLOCKED, BLOCKED),
    ]
    assert rows[FAILED] == {**dict.fromkeys(FIELDS), "url": FAILED, "error_kind": "dns", "permanent": 1}
    assert rows[SCOPE]["outside_scope"] == 1 and rows[BLOCKED]["blocked"] == 1
    assert rows[BLOCKED]["large_images"] == '[{"bytes":900000,"src":"a.png"}]'


def test_a_format_4_archive_reads_the_same_and_a_writer_upgrades_it_keeping_its_states(
    tmp_path: Path,
) -> None:
    target = tmp_path / "site.nitpicker"
    commit = crawl(target)
    before = seen(target, commit)
    downgrade_to_format4(target)
    with open_archive(target) as r:  # readers never migrate: the keys are still in extra
        assert r.format_version == 4
        assert '"error_kind":"dns"' in r.execute("SELECT group_concat(extra) FROM main.page_state")[0][0]
    assert seen(target, commit) == before
    w = ArchiveWriter.open(target)
    assert w.info()["format_version"] == FORMAT_VERSION
    states = w._conn.execute("SELECT COUNT(*) FROM page_state").fetchone()[0]
    again = w.begin_commit()
    w.put_pages(again, pages())  # the same content: the hash saw the whole extra before and after
    w.finish_commit(again)
    assert w._conn.execute("SELECT COUNT(*) FROM page_state").fetchone()[0] == states
    extras = {e for (e,) in w._conn.execute("SELECT extra FROM page_state")}
    assert not any(name in e for e in extras for name in PROMOTED_NAMES)
    w.write()
    w.close()
    assert seen(target, commit) == before
