"""Stored link aggregates answer exactly like the on-demand SQL, and follow the commit when it changes."""

from __future__ import annotations

import sqlite3

import pytest
from archives import SITE, build_archive

from nitpicker_core import Anchor, Resource, ScrapeResult
from nitpicker_core.archive import ArchiveWriter, aggregates, open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

# Parameter variants per link query: defaults, every sort in both directions, pages past the first.
VARIANTS: dict[str, list[dict]] = {
    "broken-links": [
        {},
        {"sort": "pages", "order": "desc"},
        {"sort": "anchors"},
        {"order": "desc"},
        {"limit": 1, "offset": 1, "per_group": 1},
        {"group": "source"},
        {"group": "source", "sort": "anchors", "order": "desc"},
        {"group": "source", "sort": "targets", "limit": 2, "offset": 1, "per_group": 2},
        {"group": "anchor"},
        {"group": "anchor", "sort": "href", "order": "desc"},
        {"group": "anchor", "sort": "url"},
        {"group": "anchor", "order": "desc"},
        {"group": "anchor", "limit": 1, "offset": 1},
    ],
    "external-links": [
        {},
        {"sort": "status", "order": "desc"},
        {"sort": "referrers"},
        {"sort": "anchors", "order": "desc"},
        {"order": "desc"},
        {"limit": 2, "offset": 1},
    ],
    "isolated-pages": [
        {},
        {"include_roots": False},
        {"sort": "title"},
        {"sort": "root", "order": "desc"},
        {"order": "desc"},
    ],
    "isolated-clusters": [
        {},
        {"singletons": True},
        {"rooted": True, "singletons": True},
        {"rooted": True},
        {"rooted": True, "singletons": True, "limit": 1, "offset": 1},
    ],
    "link-graph": [
        {"limit": 10000},
        {"sort": "target", "limit": 10000},
        {"sort": "anchors", "order": "desc"},
        {"order": "desc", "limit": 3, "offset": 2},
        {"limit": 1, "all_nodes": True},
    ],
    # Digests and list totals.
    "summary": [{}],
    "diff": [{}],
    "error-kinds": [{}, {"examples": 0}, {"examples": 100}],
    "pages": [
        {},
        {"sort": "status"},
        {"strict": True},
        {"order": "desc", "limit": 3, "offset": 1},
        {"external": True},
        {"outcome": "not_checked"},
        {"outcome": "answered", "sort": "status"},
    ],
    "images": [{}, {"missing_alt": True}, {"sort": "alt", "limit": 5}],
    "headers": [{}, {"missing": "csp"}, {"url": "a"}, {"limit": 2, "offset": 1}],
    "mismatches": [{}, {"kind": "og_title"}, {"limit": 2, "offset": 1}],
    "duplicates": [{}, {"field": "description"}, {"limit": 1, "offset": 1}],
    "tag-counts": [{}, {"category": "analytics"}, {"limit": 1, "offset": 1}],
}


@pytest.fixture(scope="module")
def registry():
    return query_registry(make_plugin_manager())


def answers(registry, path, monkeypatch, stored: bool) -> dict:
    monkeypatch.setenv(aggregates.ENV_SWITCH, "1" if stored else "0")
    with open_archive(path) as reader:
        assert (aggregates.stored(reader, reader.resolve(None)) is not None) == stored
        return {
            (name, repr(p)): run_query(registry, reader, name, p) for name, ps in VARIANTS.items() for p in ps
        }


def assert_same(registry, path, monkeypatch) -> dict:
    with_aggregates = answers(registry, path, monkeypatch, stored=True)
    on_demand = answers(registry, path, monkeypatch, stored=False)
    for key, expected in on_demand.items():
        assert with_aggregates[key] == expected, key
    return with_aggregates


def test_crawled_archive_aggregates_equal_on_demand(crawled, registry, monkeypatch):
    found = assert_same(registry, crawled, monkeypatch)
    assert found[("link-graph", repr({"limit": 10000}))]["total"] > 10
    assert found[("external-links", repr({}))]["total"] > 0
    for name in ("images", "mismatches", "tag-counts", "headers", "pages"):
        assert found[(name, repr({}))]["total"] > 0, name  # the comparison is not of empty lists


def _page(path: str, links: list[str], status: int = 200, title: str = "", **kw) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        content_type="text/html",
        metadata={"title": title or path},
        html="<html></html>",
        anchors=[
            Anchor(href if href.startswith("http") else SITE + href, href, raw_href=href) for href in links
        ],
        **kw,
    )


def _redirect(path: str, to: str, **kw) -> ScrapeResult:
    return ScrapeResult(
        url=path if path.startswith("http") else SITE + path,
        status=301,
        redirect_chain=[to if to.startswith("http") else SITE + to],
        **kw,
    )


def tricky_pages() -> list[ScrapeResult]:
    """Cycles, redirects (also onto a 404 and out of the site), 404s, duplicates, orphans, a PDF, externals."""
    return [
        _page(
            "/",
            [
                "/a",
                "/old",
                "/gone",
                "/c",
                "/doc.pdf",
                "https://ext.test/",
                "https://ext.test/r",
                "https://ext.test/",
                "/to-ext",
            ],
        ),
        _page("/a", ["/", "/b", "/a"]),
        _page("/b", ["/a", "/gone", "/gone"], title="Same"),
        _page("/c", ["/moved-gone", "/gone", "https://ext.test/r"], title="Same"),
        _redirect("/old", "/a"),
        _redirect("/moved-gone", "/gone"),
        _redirect("/to-ext", "https://ext.test/"),
        _page("/gone", [], status=404),
        _page("/x", ["/y", "/gone2"]),
        _page("/y", ["/z"]),
        _page("/gone2", [], status=404),
        _page("/z", []),
        _page("/lone", ["/lone"]),
        ScrapeResult(url=SITE + "/doc.pdf", status=200, content_type="application/pdf"),
        ScrapeResult(
            url="https://ext.test/", status=200, content_type="text/html", is_external=True, is_target=False
        ),
        _redirect("https://ext.test/r", "https://ext.test/final", is_external=True, is_target=False),
        ScrapeResult(
            url="https://ext.test/final",
            status=404,
            content_type="text/html",
            is_external=True,
            is_target=False,
        ),
    ]


@pytest.fixture
def tricky(tmp_path):
    return build_archive(tmp_path / "tricky.nitpicker", tricky_pages())


def test_hand_built_archive_aggregates_equal_on_demand(tricky, registry, monkeypatch):
    found = assert_same(registry, tricky, monkeypatch)
    broken = found[("broken-links", repr({"group": "anchor"}))]
    assert broken["total"] == 8
    assert [(r["source"], r["target"], r["url"]) for r in broken["items"]] == [
        (SITE + "/", SITE + "/gone", SITE + "/gone"),
        (SITE + "/", "https://ext.test/r", "https://ext.test/final"),
        (SITE + "/b", SITE + "/gone", SITE + "/gone"),
        (SITE + "/b", SITE + "/gone", SITE + "/gone"),
        (SITE + "/c", SITE + "/moved-gone", SITE + "/gone"),
        (SITE + "/c", SITE + "/gone", SITE + "/gone"),
        (SITE + "/c", "https://ext.test/r", "https://ext.test/final"),
        (SITE + "/x", SITE + "/gone2", SITE + "/gone2"),
    ]
    by_target = found[("broken-links", repr({}))]
    assert [(r["url"], r["pages"], r["anchors"], r["sources"]) for r in by_target["items"]] == [
        (SITE + "/gone", 3, 5, [SITE + "/", SITE + "/b", SITE + "/c"]),
        (SITE + "/gone2", 1, 1, [SITE + "/x"]),
        ("https://ext.test/final", 2, 2, [SITE + "/", SITE + "/c"]),
    ]
    # the href exactly as the page wrote it (here the relative path), in (source, document) order
    assert [link["href"] for link in by_target["items"][0]["links"]] == [
        "/gone",
        "/gone",
        "/gone",
        "/moved-gone",
        "/gone",
    ]
    assert [link["href"] for link in by_target["items"][2]["links"]] == ["https://ext.test/r"] * 2
    by_source = found[("broken-links", repr({"group": "source"}))]
    assert [(r["source"], r["targets"], r["anchors"]) for r in by_source["items"]] == [
        (SITE + "/", 2, 2),
        (SITE + "/b", 1, 2),
        (SITE + "/c", 2, 3),
        (SITE + "/x", 1, 1),
    ]
    assert by_source["items"][2]["urls"] == [SITE + "/gone", "https://ext.test/final"]
    external = {
        r["url"]: (r["referrers"], r["anchors"], r["status"])
        for r in found[("external-links", repr({}))]["items"]
    }
    assert external == {"https://ext.test/": (1, 2, 200), "https://ext.test/final": (2, 2, 404)}
    clusters = found[("isolated-clusters", repr({"singletons": True}))]
    assert [c["urls"] for c in clusters["items"]] == [
        [SITE + p for p in ("/gone2", "/x", "/y", "/z")],
        [SITE + "/lone"],
    ]
    assert clusters["singleton_total"] == 1
    rooted = found[("isolated-clusters", repr({"rooted": True}))]["items"]
    assert rooted[0]["roots"] == [SITE + "/"] and rooted[0]["size"] == 5  # /, /a, /b, /c, /gone
    isolated = [r["url"] for r in found[("isolated-pages", repr({}))]["items"]]
    assert isolated == [SITE + p for p in ("/lone", "/x")]
    graph = {
        (e["source"], e["target"]): e["anchors"]
        for e in found[("link-graph", repr({"limit": 10000}))]["items"]
    }
    assert graph[(SITE + "/", SITE + "/a")] == 2  # /a directly and through /old
    assert graph[(SITE + "/b", SITE + "/gone")] == 2
    assert (SITE + "/a", SITE + "/a") not in graph and (SITE + "/", SITE + "/doc.pdf") not in graph
    assert found[("duplicates", repr({}))]["items"] == [
        {"value": "Same", "count": 2, "urls": [SITE + "/b", SITE + "/c"]}
    ]


def test_appended_crawl_refreshes_aggregates(tricky, registry, monkeypatch):
    with ArchiveWriter.open(tricky) as writer:
        assert writer.commit_status(1) == "complete"
        writer.resume_commit(1)  # what --append and --resume do
        assert writer._conn.execute("SELECT COUNT(*) FROM agg_commit").fetchone()[0] == 0
        writer.put_page(1, _page("/new", ["/gone2", "/z", "https://ext.test/"]))
        writer.finish_commit(1)
        assert writer.aggregate_seconds[1] >= 0
        writer.write()
    found = assert_same(registry, tricky, monkeypatch)
    assert found[("broken-links", repr({"group": "anchor"}))]["total"] == 9
    clusters = found[("isolated-clusters", repr({"singletons": True}))]["items"]
    assert [c["urls"] for c in clusters] == [
        [SITE + p for p in ("/gone2", "/new", "/x", "/y", "/z")],
        [SITE + "/lone"],
    ]
    external = {r["url"]: r["referrers"] for r in found[("external-links", repr({}))]["items"]}
    assert external["https://ext.test/"] == 2


def test_writing_into_a_complete_commit_drops_its_aggregates(tricky, registry, monkeypatch):
    with ArchiveWriter.open(tricky) as writer:
        writer.put_page(1, _page("/late", ["/gone"]))
        assert writer._conn.execute("SELECT COUNT(*) FROM agg_commit").fetchone()[0] == 0
        writer.write()
    answers(registry, tricky, monkeypatch, stored=False)
    with ArchiveWriter.open(tricky) as writer:
        writer.build_aggregates(1)
        writer.write()
    assert (
        assert_same(registry, tricky, monkeypatch)[("broken-links", repr({"group": "anchor"}))]["total"] == 9
    )


def test_changing_a_parent_commit_refreshes_the_childs_diff(tricky, registry, monkeypatch):
    with ArchiveWriter.open(tricky) as writer:
        child = writer.begin_commit()
        writer.put_pages(
            child, [p for p in tricky_pages() if p.url != SITE + "/lone"] + [_page("/fresh", [])]
        )
        writer.finish_commit(child)
        writer.write()
    diff = assert_same(registry, tricky, monkeypatch)[("diff", repr({}))]
    assert (diff["base"], diff["added"], diff["removed"], diff["modified"]) == (
        1,
        [SITE + "/fresh"],
        [SITE + "/lone"],
        [],
    )
    with ArchiveWriter.open(tricky) as writer:
        writer.put_page(1, _page("/fresh", []))  # the parent gains the same page: it is no longer added
        writer.write()
    diff = assert_same(registry, tricky, monkeypatch)[("diff", repr({}))]
    assert (diff["added"], diff["removed"]) == ([], [SITE + "/lone"])


def test_archive_without_aggregate_tables_answers_on_demand(tricky, registry, monkeypatch):
    expected = answers(registry, tricky, monkeypatch, stored=False)
    with ArchiveWriter.open(tricky) as writer:
        for table in aggregates.TABLES:
            writer._conn.execute(f"DROP TABLE {table}")
        writer.write()
    monkeypatch.setenv(aggregates.ENV_SWITCH, "1")
    with open_archive(tricky) as reader:
        with pytest.raises(sqlite3.OperationalError):
            reader.execute("SELECT * FROM agg_commit")
        assert aggregates.stored(reader, 1) is None
        for name, params in VARIANTS.items():
            for p in params:
                assert run_query(registry, reader, name, p) == expected[(name, repr(p))]
    with ArchiveWriter.open(tricky) as writer:  # a writer adds the tables back; building fills them
        writer.build_aggregates(1)
        writer.write()
    assert_same(registry, tricky, monkeypatch)


def test_resource_referrers_streamed_or_sorted_agree(tmp_path, registry, monkeypatch):
    import nitpicker_core.archive.resource_lists as resources

    style = SITE + "/style.css"
    pages = [_page(f"/p{n}", ["/"], resources=[style]) for n in (3, 1, 4, 15, 9, 2, 6)]
    archive = build_archive(
        tmp_path / "res.nitpicker",
        pages,
        also=lambda pm, crawl: [
            pm.hook.crawl_resource_received(
                resource=Resource(style, 200, content_type="text/css"), referrer_url=p.url, crawl=crawl
            )
            for p in pages
        ],
    )
    variants = [
        {"url": style},
        {"url": style, "limit": 2, "offset": 3},
        {"url": style, "limit": 3, "offset": 5},
    ]
    with open_archive(archive) as reader:
        sorted_ = [run_query(registry, reader, "resource-referrers", p) for p in variants]
        monkeypatch.setattr(resources, "_STREAM_FROM", 0)
        streamed = [run_query(registry, reader, "resource-referrers", p) for p in variants]
    assert streamed == sorted_
    assert [i["url"] for i in sorted_[0]["items"]] == sorted(p.url for p in pages) and sorted_[0][
        "total"
    ] == 7
