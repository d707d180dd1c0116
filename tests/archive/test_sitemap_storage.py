"""Sitemaps stored with a commit (format 4): written, read back by the checks, and absent from older archives."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from archive_testdata import _rewrite

from nitpicker_core import CheckContext
from nitpicker_core.archive import FORMAT_VERSION, ArchiveWriter, open_archive
from nitpicker_core.crawler.sitemaps import SitemapFile
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.archives import page

SITE = "https://example.org"


def _write(target: Path) -> int:
    w = ArchiveWriter.open(target)
    commit = w.begin_commit(options={"roots": [SITE + "/"]})
    w.put_pages(commit, [page(SITE + "/", title="Home", links=["/a"]), page(SITE + "/a", title="A")])
    w.put_sitemaps(
        commit,
        [
            SitemapFile(
                SITE + "/index.xml",
                "given",
                scope=SITE + "/",
                kind="index",
                status=200,
                entries=[(SITE + "/s.xml", None), (SITE + "/gone.xml", None)],
            ),
            SitemapFile(
                SITE + "/s.xml",
                "index",
                parent=SITE + "/index.xml",
                scope=SITE + "/",
                kind="urlset",
                status=200,
                entries=[(SITE + "/a", "2024-01-01"), (SITE + "/a", None)],
            ),
            SitemapFile(
                SITE + "/gone.xml",
                "index",
                parent=SITE + "/index.xml",
                scope=SITE + "/",
                status=404,
                problems=[("unreachable", "HTTP 404")],
            ),
        ],
    )
    w.finish_commit(commit)
    w.write()
    w.close()
    return commit


def _sitemap_findings(target: Path) -> dict[str, set[tuple[str, str]]]:
    pm = make_plugin_manager()
    checks = check_registry(pm)
    with open_archive(target) as reader:
        ctx = CheckContext(reader, reader.resolve(None), query_registry(pm))
        return {
            name: {(f.url, f.detail) for f in checks[name].findings(ctx)}  # type: ignore[misc]
            for name in ("sitemap-unreachable", "page-missing-from-sitemap", "sitemap-url-in-several")
        }


def test_sitemaps_are_stored_and_read_back(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    commit = _write(target)
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION
        rows = r.execute(
            "SELECT u.url, p.url, s.kind, s.entries FROM sitemap s JOIN url u ON u.id = s.url_id "
            "LEFT JOIN url p ON p.id = s.parent_url_id WHERE s.commit_id = ? ORDER BY s.id",
            [commit],
        )
        entries = r.execute("SELECT COUNT(*) FROM sitemap_entry WHERE commit_id = ?", [commit])[0][0]
    assert [tuple(row) for row in rows] == [
        (SITE + "/index.xml", None, "index", 2),
        (SITE + "/s.xml", SITE + "/index.xml", "urlset", 2),
        (SITE + "/gone.xml", SITE + "/index.xml", "", 0),
    ]
    assert entries == 3  # a URL listed twice in one file is one entry
    assert _sitemap_findings(target) == {
        "sitemap-unreachable": {(SITE + "/gone.xml", "HTTP 404")},
        "page-missing-from-sitemap": {(SITE + "/", "")},
        "sitemap-url-in-several": set(),
    }


def test_a_format_3_archive_reads_without_sitemaps_and_a_writer_upgrades_it(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    _write(target)

    def as_format3(conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE sitemap_entry")
        conn.execute("DROP TABLE sitemap")
        conn.execute("UPDATE info SET value = '3' WHERE key = 'format_version'")

    _rewrite(target, as_format3)
    with open_archive(target) as r:
        assert r.format_version == 3
    assert _sitemap_findings(target) == {
        "sitemap-unreachable": set(),
        "page-missing-from-sitemap": set(),
        "sitemap-url-in-several": set(),
    }
    w = ArchiveWriter.open(target)
    assert w.info()["format_version"] == FORMAT_VERSION
    assert w._conn.execute("SELECT COUNT(*) FROM sitemap").fetchone()[0] == 0
    w.close()
