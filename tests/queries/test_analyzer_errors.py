"""The analyzer-errors query: rows of a real analyze run, filters, paging, sorting, older archives."""

from __future__ import annotations

import json

import pytest
from archives import SITE, build_archive
from support import run_cli

from nitpicker_core import Analyzer, PageReport, ScrapeResult, hookimpl, query_registry, run_query
from nitpicker_core.analyze import analyze
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.config import load_config
from nitpicker_core.plugins import make_plugin_manager


class Raises(Analyzer):
    """Raises on pages whose path has "boom"; a str instead of a report on pages whose path has "wrong"."""

    name = "raises"

    def each_page(self, page):
        if "boom" in page.url:
            raise RuntimeError(f"cannot read {page.url.removeprefix(SITE)}")
        if "wrong" in page.url:
            return "oops"
        return PageReport({"ok": True})


class AlsoRaises(Raises):
    name = "also-raises"


class Plugin:
    @hookimpl
    def register_analyzers(self, register):
        register(Raises())
        register(AlsoRaises())


def page(path: str) -> ScrapeResult:
    html = f"<!doctype html><html lang='en'><head><title>{path}</title></head><body>{path}</body></html>"
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html),
        metadata={"title": path},
        html=html,
    )


PATHS = ("/a", "/boom-1", "/boom-2", "/wrong", "/z")


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory):
    """Two analyzers over five pages: each fails on three of them (two exceptions, one wrong type)."""
    archive = build_archive(tmp_path_factory.mktemp("errors") / "site.nitpicker", [page(p) for p in PATHS])
    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "raises-plugin")
    analyze(pm, load_config(pm, data={}), archive, ["raises", "also-raises"])
    return archive


def errors(archive, **params):
    with open_archive(archive) as reader:
        return run_query(query_registry(make_plugin_manager()), reader, "analyzer-errors", params)


def test_rows_name_analyzer_url_error_and_traceback(analyzed):
    found = errors(analyzed, analyzer="raises")
    assert found["total"] == 3 and found["next_offset"] is None
    rows = {row["url"].removeprefix(SITE): row for row in found["items"]}
    assert sorted(rows) == ["/boom-1", "/boom-2", "/wrong"]
    assert set(rows["/boom-1"]) == {"analyzer", "url", "error", "traceback"}
    assert rows["/boom-1"]["error"] == "RuntimeError: cannot read /boom-1"
    assert "in each_page" in rows["/boom-1"]["traceback"]
    assert rows["/boom-1"]["traceback"].rstrip().endswith("RuntimeError: cannot read /boom-1")
    assert rows["/wrong"]["error"] == (
        "each_page of analyzer 'raises' (plugin 'raises-plugin') returned a str, not a PageReport"
    )
    assert rows["/wrong"]["traceback"] is None


def test_filters_paging_and_sorting(analyzed):
    assert errors(analyzed)["total"] == 6
    by_url = errors(analyzed, url="boom")
    assert [(r["url"], r["analyzer"]) for r in by_url["items"]] == [
        (SITE + "/boom-1", "also-raises"),
        (SITE + "/boom-1", "raises"),
        (SITE + "/boom-2", "also-raises"),
        (SITE + "/boom-2", "raises"),
    ]
    first = errors(analyzed, limit=4)
    rest = errors(analyzed, limit=4, offset=first["next_offset"])
    assert (first["total"], first["next_offset"], len(first["items"]), len(rest["items"])) == (6, 4, 4, 2)
    assert rest["next_offset"] is None
    assert [r["analyzer"] for r in errors(analyzed, sort="analyzer", order="desc")["items"]] == [
        "raises"
    ] * 3 + ["also-raises"] * 3
    assert errors(analyzed, analyzer="nope")["total"] == 0


def test_through_the_cli_and_its_errors(analyzed):
    done = run_cli("query", str(analyzed), "analyzer-errors", "--analyzer", "raises", "--url", "wrong")
    assert done.returncode == 0, done.stderr
    assert [r["url"] for r in json.loads(done.stdout)["items"]] == [SITE + "/wrong"]
    bad = run_cli("query", str(analyzed), "analyzer-errors", "--sort", "error")
    assert bad.returncode == 1
    assert bad.stderr.splitlines() == [
        "nitpicker: error: parameter 'sort' must be one of analyzer, url, got 'error'"
    ]


def test_an_archive_without_error_rows(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a")])
    assert errors(archive) == {"total": 0, "limit": 100, "offset": 0, "items": [], "next_offset": None}


def test_older_archives_without_the_traceback_column_or_the_table(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a")])
    writer = ArchiveWriter.open(archive)  # rows as writers before tracebacks were kept left them
    writer._conn.execute(
        "INSERT INTO analyzer_error (commit_id, url_id, analyzer, message) "
        "SELECT 1, id, 'old', 'ValueError: old' FROM url WHERE url = ?",
        (SITE + "/a",),
    )
    writer._conn.execute(
        "INSERT INTO analyzer_error (commit_id, url_id, analyzer, message) "
        "VALUES (1, NULL, 'old', 'setup failed')"
    )
    writer.write()
    writer.close()
    with open_archive(archive) as reader:
        assert "traceback" not in {r[1] for r in reader.execute("PRAGMA table_info(analyzer_error)")}
    assert errors(archive)["items"] == [
        {"analyzer": "old", "url": None, "error": "setup failed", "traceback": None},
        {"analyzer": "old", "url": SITE + "/a", "error": "ValueError: old", "traceback": None},
    ]

    writer = ArchiveWriter.open(archive)
    writer._conn.execute("DROP TABLE analyzer_error")
    writer.write()
    writer.close()
    assert errors(archive)["total"] == 0
