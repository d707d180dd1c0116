"""`--render always`: Chromium starts while robots.txt and the sitemaps are read, not after them.

A real HTTP server on 127.0.0.1 holds the site's sitemap until a Chromium process of this test's process tree
has started since the sitemap was asked for, or until a deadline. The crawler used to start the browser only
once the sitemaps were read: the server waited out its deadline. Now the launch runs meanwhile and lets the
sitemap go.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import run_cli, serving

from nitpicker_core.analyze.pool import descendants

pytestmark = pytest.mark.browser

HOLD = 60.0  # seconds the sitemap is held at most (the crawl goes on either way)
PAGE = '<!DOCTYPE html><html lang="en"><head><title>{title}</title></head><body><h1>{title}</h1>{links}</body></html>'


def _chromium(pid: int) -> bool:
    try:
        return "chrom" in Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").lower()
    except OSError:
        return False


def _browsers() -> set[int]:
    return {pid for pid in descendants(os.getpid()) if _chromium(pid)}


class _Holding(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass

    def do_GET(self) -> None:
        state = self.server.state  # type: ignore[attr-defined]
        base = f"http://127.0.0.1:{self.server.server_address[1]}"  # type: ignore[attr-defined]
        if self.path == "/robots.txt":
            body, kind = f"User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\n", "text/plain"
        elif self.path == "/sitemap.xml":
            before, deadline = _browsers(), time.monotonic() + HOLD
            while time.monotonic() < deadline and not (_browsers() - before):
                state["polled"].wait(0.05)  # polls the process table: the launch says nothing to this server
            state["released_by"] = "browser" if _browsers() - before else "deadline"
            body = (
                '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{base}/about</loc></url></urlset>"
            )
            kind = "application/xml"
        elif self.path == "/":
            body, kind = PAGE.format(title="Home", links='<a href="/about">about</a>'), "text/html"
        elif self.path == "/about":
            body, kind = PAGE.format(title="About", links='<a href="/">home</a>'), "text/html"
        else:
            self.send_error(404)
            return
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def holding_site() -> Iterator[tuple[str, dict]]:
    state = {"released_by": None, "polled": threading.Event()}
    with serving(_Holding, state) as site:
        yield site, state


def test_the_browser_starts_while_the_sitemaps_are_read(holding_site, tmp_path):
    site, state = holding_site
    out = tmp_path / "warm.nitpicker"
    result = run_cli(
        "crawl", f"{site}/", "--no-image", "--parallels", "2", "-o", str(out), "--json", timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert state["released_by"] == "browser"
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["rendered"] == 2  # the sitemap's page and the root, both rendered
