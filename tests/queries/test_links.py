"""broken-links, external-links, isolated pages/clusters and link-graph on real archives."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import Anchor, ScrapeResult


def test_broken_links_only_resolved_404(query, qsite):
    broken = query("broken-links", "--group", "anchor")
    assert broken["total"] == 1
    row = broken["items"][0]
    href = row["href"]  # as written where the crawl recorded it, else the absolute URL
    assert href in ("/error-status/not-found", "not-found", qsite + "/error-status/not-found")
    assert row == {
        "source": qsite + "/error-status/",
        "href": href,
        "target": qsite + "/error-status/not-found",
        "fragment": "",
        "text": "Not found",
        "url": qsite + "/error-status/not-found",
        "status": 404,
        "line": row["line"],
        "col": row["col"],
    }
    grouped = query("broken-links")
    assert grouped["total"] == 1 and grouped["items"][0]["sources"] == [qsite + "/error-status/"]


def test_broken_links_show_the_href_as_written_with_its_position(query, tmp_path):
    """Anchors that recorded their written href and position show them; older rows fall back to URL#fragment."""
    pages = [
        ScrapeResult(
            url=SITE + "/docs/page.html",
            status=200,
            content_type="text/html",
            metadata={"title": "Page"},
            html="<html></html>",
            anchors=[
                Anchor(SITE + "/docs/gone.html", "Gone", "sec", raw_href="gone.html#sec", line=12, col=7),
                Anchor(SITE + "/docs/gone.html", "Old", "x"),
            ],
        ),
        ScrapeResult(
            url=SITE + "/docs/gone.html",
            status=404,
            content_type="text/html",
            metadata={"title": "Gone"},
            html="<html></html>",
        ),
    ]
    archive = build_archive(tmp_path / "written.nitpicker", pages)
    links = query("broken-links", archive=archive)["items"][0]["links"]
    assert [(a["href"], a["line"], a["col"]) for a in links] == [
        ("gone.html#sec", 12, 7),
        (SITE + "/docs/gone.html#x", None, None),
    ]
    anchors = query("broken-links", "--group", "anchor", archive=archive)["items"]
    assert [(a["href"], a["target"], a["fragment"]) for a in anchors] == [
        ("gone.html#sec", SITE + "/docs/gone.html", "sec"),
        (SITE + "/docs/gone.html#x", SITE + "/docs/gone.html", "x"),
    ]
    outbound = query("page-detail", "--url", SITE + "/docs/page.html", archive=archive)["outbound"]
    assert [(a["written"], a["href"], a["line"]) for a in outbound] == [
        ("gone.html#sec", SITE + "/docs/gone.html", 12),
        (SITE + "/docs/gone.html#x", SITE + "/docs/gone.html", None),
    ]


def test_self_links_are_not_inbound_links(query, orphans):
    """/lone links only to itself: no referring page, its self-link counted apart."""
    detail = query("page-detail", "--url", SITE + "/lone", archive=orphans)
    assert detail["inbound"] == {"total": 0, "items": [], "self_links": 1}


def test_external_links(query, qsite):
    external = {i["url"]: i for i in query("external-links")["items"]}
    refused = external["http://127.0.0.1:1/nothing"]
    assert (
        refused["referrers"] == 1
        and refused["error_kind"] == "connection-refused"
        and refused["status"] is None
    )
    other = qsite.replace("localhost", "127.0.0.1")
    assert external[other + "/external-like"]["status"] == 200
    # An external URL that redirects back in is grouped under its (internal) destination.
    assert external[qsite + "/clobber/target"]["is_external"] is False
    by_status = query("external-links", "--sort", "status", "--order", "desc")["items"]
    assert by_status[0]["status"] == 200 and by_status[-1]["status"] is None


def test_isolated_pages_are_unlinked_roots(query, qsite):
    isolated = {i["url"]: i for i in query("isolated-pages", "--limit", "1000")["items"]}
    assert isolated[qsite + "/scope/admin/"]["root"] is True
    assert qsite + "/scope/admin/settings" not in isolated
    assert qsite + "/" not in isolated  # /about links back to it
    assert qsite + "/redirect/dest" not in isolated  # reached through /redirect/start
    assert qsite + "/clobber/target" not in isolated  # reached through an external redirect
    assert all(i["root"] for i in isolated.values())
    assert query("isolated-pages", "--include-roots", "false")["total"] == 0


def test_isolated_clusters_on_the_crawl(query, qsite):
    assert query("isolated-clusters", "--singletons")["total"] == 0  # every component holds a root
    rooted = query("isolated-clusters", "--rooted", "--singletons", "--limit", "1000")["items"]
    admin = next(c for c in rooted if qsite + "/scope/admin/settings" in c["urls"])
    assert admin["urls"] == [qsite + "/scope/admin/", qsite + "/scope/admin/settings"]
    assert admin["roots"] == [qsite + "/scope/admin/"] and admin["size"] == 2
    redirect = next(c for c in rooted if qsite + "/redirect/dest" in c["urls"])
    assert qsite + "/redirect/" in redirect["urls"]
    assert any(c["singleton"] and c["urls"] == [qsite + "/lazy/"] for c in rooted)


def _page(path: str, links: list[str], **kw) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=kw.pop("status", 200),
        content_type="text/html",
        metadata={"title": path},
        html="<html></html>",
        anchors=[Anchor(SITE + href, href) for href in links],
        **kw,
    )


@pytest.fixture(scope="module")
def orphans(tmp_path_factory):
    """/ → /a; an orphan cluster /x ↔ /y (/z reaches /y through /old's redirect); a lone /lone."""
    pages = [
        _page("/", ["/a"]),
        _page("/a", ["/"]),
        _page("/x", ["/y"]),
        _page("/y", []),
        _page("/z", ["/old"]),
        _page("/lone", ["/lone"]),
        ScrapeResult(url=SITE + "/old", status=301, redirect_chain=[SITE + "/y"]),
    ]
    return build_archive(tmp_path_factory.mktemp("orphans") / "o.nitpicker", pages)


def test_isolated_clusters_find_orphans(query, orphans):
    clusters = query("isolated-clusters", archive=orphans)
    assert clusters["total"] == 1 and clusters["singleton_total"] == 1
    assert clusters["items"][0]["urls"] == [SITE + p for p in ("/x", "/y", "/z")]
    both = query("isolated-clusters", "--singletons", archive=orphans)["items"]
    assert [c["urls"] for c in both] == [[SITE + p for p in ("/x", "/y", "/z")], [SITE + "/lone"]]
    isolated = query("isolated-pages", archive=orphans)["items"]
    assert {i["url"]: i["root"] for i in isolated} == {
        SITE + "/x": False,
        SITE + "/z": False,
        SITE + "/lone": False,
    }
    detail = query("page-detail", "--url", SITE + "/y", archive=orphans)
    assert [(i["source"], i["hrefs"]) for i in detail["inbound"]["items"]] == [
        (SITE + "/x", [SITE + "/y"]),
        (SITE + "/z", [SITE + "/old"]),
    ]


def test_link_graph(query, qsite):
    graph = query("link-graph", "--limit", "1000")
    edges = {(e["source"], e["target"]): e["anchors"] for e in graph["items"]}
    assert edges[(qsite + "/query/", qsite + "/query/?kind=alpha")] == 2
    assert edges[(qsite + "/redirect/", qsite + "/redirect/dest")] == 1  # resolved through the redirect
    assert (qsite + "/redirect/dest", qsite + "/redirect/dest") not in edges  # no self loops
    assert edges[(qsite + "/redirect/", qsite + "/redirect/loop-a")] == 1  # failed pages are nodes
    assert not any("127.0.0.1" in s or "127.0.0.1" in t for s, t in edges)
    nodes = {n["url"]: n for n in graph["nodes"]}
    assert nodes[qsite + "/error-status/not-found"]["status"] == 404
    assert nodes[qsite + "/"]["title"] == "Test Top"
    page = query("link-graph", "--limit", "2", "--sort", "anchors", "--order", "desc")
    assert page["total"] == len(edges) and page["items"][0]["anchors"] == 2
    assert {n["url"] for n in page["nodes"]} == {u for e in page["items"] for u in (e["source"], e["target"])}
    everything = query("link-graph", "--limit", "1", "--all-nodes")
    assert qsite + "/lazy/" in {n["url"] for n in everything["nodes"]}
