"""Writer and reader round trips: content addressing, commits, HEAD, placeholders, analysis and gc."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from archive_testdata import page

from nitpicker_core.archive import FORMAT_VERSION, ArchiveWriter, open_archive, stub_path
from nitpicker_core.errors import ArchiveError
from nitpicker_core.records import Anchor, CrawlErrorRecord, Resource, ScrapeResult
from nitpicker_core.types import Cell, PageReport, Violation


def build(target: Path, pages: list[ScrapeResult], *, status: str = "complete") -> int:
    w = ArchiveWriter.open(target)
    c = w.begin_commit(options={"roots": ["https://example.org/"]}, environment={"chromium": "156"})
    w.put_pages(c, pages)
    w.finish_commit(c, status, {"pages": len(pages)})
    w.write()
    w.close()
    return c


def test_round_trip(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    pages = [page(i, 20) for i in range(20)]
    build(target, pages)
    assert not stub_path(target).exists()  # written and complete: the working directory is gone
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION == 8
        info = r.info()
        assert info["created_by"].startswith("nitpicker ") and info["format_version"] == FORMAT_VERSION
        assert [c["status"] for c in r.commits()] == ["complete"]
        got = r.page("https://example.org/p/3")
        assert got is not None
        assert got["title"] == "Page 3" and got["content_type"] == "text/html" and got["noindex"] is False
        assert got["extra"] == {"hreflang": [{"en": "https://example.org/p/3"}]}
        assert got["headers"]["server"] == "test" and got["order"] == 4
        assert [a["href"] for a in r.anchors("https://example.org/p/3")][:2] == [
            "https://example.org/p/4",
            "https://example.org/p/5",
        ]
        assert r.html("https://example.org/p/3") == pages[3].html
        assert r.images("https://example.org/p/3")[0]["alt"] == "img 3"
        assert r.jsonld("https://example.org/p/3")[0]["types"] == ["WebPage"]
        assert r.tags("https://example.org/p/3")[0]["external_id"] == "GTM-1234"
        assert r.page_errors("https://example.org/p/0")[0]["step"] == "mobile"
        assert r.page_resources("https://example.org/p/3") == [
            "https://example.org/site.css",
            "https://example.org/app.js",
        ]
        urls = [p["url"] for p in r.pages()]
        assert len(urls) == 21 and urls[-1] == "https://external.example/"  # placeholder, no order, last
        assert len(list(r.pages(scraped=True))) == 20


def test_hashes_independent_of_order_and_archive(tmp_path: Path) -> None:
    pages = [page(i, 30) for i in range(30)]
    build(tmp_path / "a.nitpicker", pages)
    build(tmp_path / "b.nitpicker", list(reversed(pages)))
    with open_archive(tmp_path / "a.nitpicker") as a, open_archive(tmp_path / "b.nitpicker") as b:
        assert a.row_hashes() == b.row_hashes()
        assert len(a.row_hashes()) == 31


def _bytes_by_kind(target: Path) -> tuple[int, int]:
    """Bytes of the database in content tables and in the per-commit aggregate tables.

    Stored check findings (finding* tables, findings_store.py) are per-commit derived data measured on their
    own (benchmarks/issues_latency.py): they count as neither.
    """
    with open_archive(target) as r:
        rows = r.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
    findings = sum(size for name, size in rows if "finding" in name)
    derived = sum(size for name, size in rows if name.startswith("agg_"))
    return sum(size for _, size in rows) - derived - findings, derived


def test_second_identical_commit_grows_little(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    pages = [page(i) for i in range(200)]
    build(target, pages)
    content1, derived1 = _bytes_by_kind(target)
    build(target, pages)
    content2, derived2 = _bytes_by_kind(target)
    assert (content2 - content1) / content1 < 0.05, (content1, content2)
    # The second commit's aggregates (agg_* tables) are the first's set: one agg_commit row, no copy.
    assert 0 < derived1 <= derived2 <= derived1 + 4096 < 0.25 * content2, (derived1, derived2, content2)
    with open_archive(target) as r:
        assert r.head() == 2 and r.diff(1, 2) == {
            "added": [],
            "removed": [],
            "modified": [],
            "resources": {"added": [], "removed": [], "modified": []},
        }


def test_head_moves_only_to_complete_commits(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c1 = w.begin_commit()
    w.put_page(c1, page(1, 5))
    assert w.head() is None
    w.finish_commit(c1, "interrupted")
    assert w.head() is None and w.latest_commit("interrupted") == c1
    w.write()
    with open_archive(target) as r:
        assert r.resolve(None) == c1 and r.resolved_fallback
    w.resume_commit(c1)
    w.finish_commit(c1, "complete")
    assert w.head() == c1
    c2 = w.begin_commit(kind="update")
    assert w.commit_status(c2) == "running" and w.head() == c1
    w.finish_commit(c2, "interrupted")
    assert w.head() == c1
    w.write()
    w.close()
    assert stub_path(target).exists()  # the last commit is not complete: keep the working directory
    with open_archive(target) as r:
        assert r.resolve("HEAD") == c1 and not r.resolved_fallback
        assert r.commits()[0]["parent_id"] == c1
        with pytest.raises(ArchiveError, match="has no commit 99"):
            r.resolve(99)


def test_reopen_extracts_target_into_stub_and_resumes(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    build(target, [page(i, 5) for i in range(5)])
    w = ArchiveWriter.open(target)
    assert w.head() == 1 and w.latest_commit() == 1
    c2 = w.begin_commit(kind="update")
    w.put_page(c2, page(0, 5, variant="changed"))
    w.close()  # interrupted without write: the stub keeps the work
    w = ArchiveWriter.open(target)
    assert w.latest_commit("running") == c2
    w.put_pages(c2, [page(i, 5) for i in range(1, 5)])
    w.finish_commit(c2, "complete")
    w.write()
    w.close()
    with open_archive(target) as r:
        assert r.diff(1, 2)["modified"] == ["https://example.org/p/0"]
        changed = r.changed_fields("https://example.org/p/0", 1, 2)
        assert set(changed) == {"html_sha256", "content_length"}


def test_degraded_scrape_keeps_anchors_and_empty_list_replaces(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    url = "https://example.org/"
    w.put_page(c, ScrapeResult(url=url, anchors=[Anchor("https://example.org/a")], images=[]))
    w.put_page(c, ScrapeResult(url=url, status=500))  # anchors=None: a degraded scrape
    w.finish_commit(c)
    w.write()
    with open_archive(target) as r:
        assert [a["href"] for a in r.anchors(url)] == ["https://example.org/a"]
        assert r.page(url)["status"] == 500
    w.put_page(c, ScrapeResult(url=url, anchors=[]))
    w.write()
    w.close()
    with open_archive(target) as r:
        assert r.anchors(url) == []
        # the placeholder of the old target stays a member of the commit
        assert r.page("https://example.org/a")["scraped"] is False


def test_placeholders_redirects_and_skips(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target, is_external=lambda u: not u.startswith("https://example.org/"))
    c = w.begin_commit()
    w.put_page(
        c,
        ScrapeResult(
            url="https://example.org/",
            anchors=[Anchor("https://other.example/x"), Anchor("https://example.org/b")],
        ),
    )
    w.put_page(
        c,
        ScrapeResult(
            url="http://example.org/b", status=301, redirect_chain=["https://example.org/b"], anchors=[]
        ),
    )
    w.put_page(c, ScrapeResult(url="https://example.org/b", status=200, anchors=[]))
    w.put_skipped(c, "https://example.org/private", "robots.txt")
    w.put_placeholder(c, "https://example.org/orphan")
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(target) as r:
        ext = r.page("https://other.example/x")
        assert ext["is_external"] is True and ext["scraped"] is False and ext["is_target"] is False
        b = r.page("https://example.org/b")
        assert b["scraped"] is True and b["order"] == 3  # the real page replaced its placeholder
        assert r.page("http://example.org/b")["redirect_dest"] == "https://example.org/b"
        skipped = r.page("https://example.org/private")
        assert skipped["is_skipped"] and skipped["skip_reason"] == "robots.txt" and skipped["scraped"]
        assert r.page("https://example.org/orphan")["scraped"] is False


def test_resources_errors_inventory(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    css = Resource(
        "https://example.org/site.css", 200, content_type="Text/CSS; charset=utf-8", compression="br"
    )
    # the pages that loaded it are the pages whose state lists it
    w.put_pages(
        c,
        [
            ScrapeResult(url=f"https://example.org/{path}", status=200, resources=[css.url])
            for path in ("", "about")
        ],
    )
    w.put_resource(c, css, "https://example.org/")
    w.put_resource(c, css, "https://example.org/about")
    w.put_crawl_error(c, CrawlErrorRecord("https://example.org/x", "dns", "no such host", "fetch"))
    w.add_inventory_run(c, "ab" * 32, {"urls": 3})
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(target) as r:
        (res,) = r.resources()
        assert res["content_type"] == "text/css" and res["referrers"] == 2 and res["compression"] == "br"
        assert r.crawl_errors()[0]["kind"] == "dns"
        assert r.inventory_runs()[0]["counts"] == {"urls": 3}


def test_analysis_put_replace_done(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    c = build(target, [page(i, 3) for i in range(3)])
    w = ArchiveWriter.open(target)
    w.begin_analysis(c, "seo", "1.0", {"max": 60})
    url = "https://example.org/p/1"
    w.put_analysis(c, "seo", url, {"words": 10, "score": Cell(0.5, "low")}, [Violation("r1", "bad")])
    w.put_analyzer_error(c, "seo", url, "boom")
    w.put_analysis(c, "seo", url, {"words": 12}, [Violation("r2", "worse", "warning")])
    w.put_analyzer_error(c, "seo", None, "global")
    assert w.done_urls(c, "seo") == {url}
    w.finish_analysis(c, "seo", "complete")
    w.write()
    w.close()
    with open_archive(target) as r:
        assert [(a["column"], a["value"]) for a in r.analysis(analyzer="seo")] == [("words", 12)]
        assert [(v["rule"], v["severity"]) for v in r.violations()] == [("r2", "warning")]
        assert [e["message"] for e in r.analyzer_errors()] == ["global"]
        assert r.analyzer_runs()[0]["status"] == "complete"


def test_gc_removes_unreachable_states_and_blobs(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_page(c, page(1, 3, variant="old"))
    w.put_page(c, page(1, 3, variant="new"))  # re-pointing leaves the old state unreferenced
    old_html, new_html = w._conn.execute(
        "SELECT html_sha256 FROM page_state WHERE url_id = (SELECT id FROM url WHERE url = ?) ORDER BY id",
        ("https://example.org/p/1",),
    ).fetchall()
    key = ("words", "1", "settings-hash")
    w.put_cached_reports(
        key, [(old_html[0], PageReport({"words": 3})), (new_html[0], PageReport({"words": 4}))]
    )
    counts = w.gc()
    assert counts == {
        "page_states": 1,
        "resource_states": 0,
        "blobs": 1,
        "finding_sets": 0,
        "fact_sets": 0,
        "screenshots": 0,
        "aggregate_sets": 0,
        "manifests": 0,
        "analysis_cache": 1,
    }
    assert w.cached_report(old_html[0], key) is None
    assert w.cached_report(new_html[0], key).cells == {"words": 4}
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(target) as r:
        assert "new" in r.html("https://example.org/p/1")
        assert r.execute("SELECT COUNT(*) FROM page_state")[0][0] == len(r.row_hashes())
        assert r.execute("SELECT COUNT(*) FROM blob")[0][0] == 1


def test_never_analyze_or_optimize() -> None:
    package = Path(__file__).resolve().parents[2] / "nitpicker_core" / "archive"
    for path in package.glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\bANALYZE\b", text, re.IGNORECASE), path
        assert not re.search(r"PRAGMA\s+optimize", text, re.IGNORECASE), path


def test_a_resource_named_again_keeps_its_row_and_a_changed_one_replaces_it(tmp_path: Path) -> None:
    """Every page names the site's style sheet: stored once, unchanged after; a change, and back, are kept."""
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    css = "https://example.org/site.css"
    first, second = Resource(css, 200, content_length=10), Resource(css, 200, content_length=20)
    states = []
    for resource in (first, first, second, second, first):
        w.put_resource(c, resource, "https://example.org/")
        states.append(
            w.pages._store.conn.execute(
                "SELECT s.content_length FROM commit_resource r JOIN resource_state s ON s.id = r.state_id "
                "WHERE r.commit_id = ?",
                (c,),
            ).fetchall()
        )
    assert states == [[(10,)], [(10,)], [(20,)], [(20,)], [(10,)]]
    w.finish_commit(c)
    d = w.begin_commit()  # the next commit stores it too, though its state is in the archive already
    w.put_resource(d, first, "https://example.org/")
    w.finish_commit(d)
    w.write()
    w.close()
    with open_archive(target) as r:
        assert r.execute("SELECT COUNT(*) FROM resource_state")[0][0] == 2
        rows = r.execute("SELECT commit_id FROM commit_resource ORDER BY commit_id")
        assert [tuple(row) for row in rows] == [(c,), (d,)]


def test_a_304_never_replaces_a_resource_answer(tmp_path: Path) -> None:
    """A 304 is a browser revalidating its copy (no type, no length): kept only when nothing else came."""
    target = tmp_path / "site.nitpicker"
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    logo, icon = "https://example.org/logo.png", "https://example.org/icon.png"
    full = Resource(logo, 200, content_type="image/png", content_length=70)
    w.put_resource(c, full, "https://example.org/")
    w.put_resource(c, Resource(logo, 304), "https://example.org/about")  # a later page
    w.put_resource(c, Resource(icon, 304), "https://example.org/")  # only ever revalidated: kept
    w.put_resources(c, [(Resource(icon, 304), None), (Resource(icon, 200, content_type="image/png"), None)])
    w.finish_commit(c)
    w.write()
    w.close()
    with open_archive(target) as r:
        assert {x["url"]: (x["status"], x["content_type"]) for x in r.resources()} == {
            logo: (200, "image/png"),
            icon: (200, "image/png"),
        }
        # the logo's 304 was not stored at all (the icon's was, while it was all there was)
        assert r.execute("SELECT COUNT(*) FROM resource_state WHERE status = 304")[0][0] == 1
