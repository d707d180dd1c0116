"""What bot-protection services put in every page they serve is no bot wall: only their challenge and block
pages are recorded as blocked (an ordinary page of a site behind Cloudflare's JavaScript detections, or behind
Imperva, was stored as blocked, its findings with it)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = (
    "/bot-walls/cloudflare-page",
    "/bot-walls/imperva-page",
    "/bot-walls/loading-page",
    "/bot-walls/turnstile-form",
    "/bot-walls/datadome-page",
    "/bot-walls/akamai-article",
)
WALLS = ("/bot-walls/cloudflare-challenge", "/bot-walls/imperva-block")


@pytest.mark.parametrize("render", ["always", "never"])
def test_only_challenge_and_block_pages_are_blocked(crawl, site, render):
    c = crawl(f"{site}/bot-walls/", "--no-image", "--render", render, name=f"bot-walls-{render}")
    for path in PAGES:
        row = c.page(site + path)
        assert row["status"] == 200 and not row["extra"].get("blocked"), (path, row["extra"])
    for path in WALLS:
        assert c.page(site + path)["extra"].get("blocked") is True, path
