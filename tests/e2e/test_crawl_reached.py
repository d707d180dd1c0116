"""How a page was reached belongs to the redirect, not to the page (issue 33: /final/, reached by a 301 → 302
chain and by a script redirect, came back "modified" between two crawls of an unchanged page)."""

from __future__ import annotations

import pytest

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

FINAL = "/reached/final/"


def test_a_destination_is_the_same_page_whichever_way_it_was_reached(crawl, site):
    states = {}
    for root in ("/reached/chain-start", "/reached/scripted", FINAL):
        # the same scope for the three roots: only the way into /final/ differs
        args = (site + root, "--scope", f"{site}/reached/", "--no-image", "--parallels", "1")
        c = crawl(*args, name=root.strip("/").replace("/", "-"))
        page = c.page(site + FINAL)
        assert page["title"] == "Reached Final", root
        assert {"redirect_status", "client_redirect"}.isdisjoint(page["extra"]), (root, page["extra"])
        with open_archive(c.archive) as reader:
            states[root] = reader.row_hashes()[site + FINAL]
        if root == "/reached/scripted":  # the script's move is the redirect's, on the URL that made it
            source = c.page(site + root)
            assert (source["status"], source["extra"].get("client_redirect")) == (200, True), source
        if root == "/reached/chain-start":
            assert c.page(site + root)["status"] == 301
    assert len(set(states.values())) == 1, states
