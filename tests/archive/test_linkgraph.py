"""Link depth over a commit's link graph: redirects at no cost, unreached URLs left out, fast at 100,000 pages."""

from __future__ import annotations

import time

from nitpicker_core.archive.linkgraph import link_depths


def test_depth_is_the_fewest_clicks_from_any_root() -> None:
    edges = [("/", "/a"), ("/a", "/b"), ("/b", "/c"), ("/", "/c"), ("/other", "/d"), ("/d", "/e")]
    assert link_depths(edges, ["/", "/other"]) == {
        "/": 0,
        "/other": 0,
        "/a": 1,
        "/b": 2,
        "/c": 1,
        "/d": 1,
        "/e": 2,
    }


def test_a_redirect_costs_no_click_and_loops_end() -> None:
    edges = [("/", "/old"), ("/new", "/next"), ("/", "/loop-a")]
    depths = link_depths(edges, ["/"], {"/old": "/new", "/loop-a": "/loop-b", "/loop-b": "/loop-a"})
    assert depths == {"/": 0, "/old": 1, "/new": 1, "/next": 2, "/loop-a": 1, "/loop-b": 1}
    assert "/unlinked" not in depths


def test_a_100000_page_site_is_walked_quickly() -> None:
    # a tree ten links wide: every page linked from its parent and to the home page
    n = 100_000
    edges = [(f"/p{(i - 1) // 10}", f"/p{i}") for i in range(1, n)] + [(f"/p{i}", "/p0") for i in range(n)]
    started = time.perf_counter()
    depths = link_depths(edges, ["/p0"])
    assert len(depths) == n and depths[f"/p{n - 1}"] == 5
    assert time.perf_counter() - started < 30  # 2 s measured on the loaded 2-core test machine
