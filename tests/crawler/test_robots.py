"""robots.txt cache against the live test server."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

from flask import Flask

from nitpicker_core.crawler.robots import RobotsCache
from test_server import serve


def test_disallowed_and_allowed(site: str, counts) -> None:  # type: ignore[no-untyped-def]
    robots = RobotsCache("Nitpicker/0.1.0", timeout=5)
    assert not robots.allowed(f"{site}/private/page")
    assert not robots.allowed(f"{site}/private/")
    assert robots.allowed(f"{site}/about")
    assert robots.allowed(f"{site}/robots.txt")
    assert robots.crawl_delay(f"{site}/about") is None
    assert counts().get("/robots.txt") == 1  # cached per origin


def test_crawl_delay_for_its_user_agent(site: str) -> None:
    robots = RobotsCache("SlowBot/2.0", timeout=5)
    assert robots.crawl_delay(f"{site}/") == 2.0
    assert not robots.allowed(f"{site}/private/page")


def test_each_origin_fetched_once_even_in_parallel(site: str, external: str, counts) -> None:  # type: ignore[no-untyped-def]
    robots = RobotsCache("Nitpicker/0.1.0", timeout=5)
    urls = [f"{base}/private/page" for base in (site, external)] * 10
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(robots.allowed, urls))
    assert results == [False] * 20
    assert counts()["/robots.txt"] == 2
    assert robots.fetched_origins() == sorted([site, external])


def test_unreachable_or_missing_robots_allows_all() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    robots = RobotsCache("Nitpicker/0.1.0", timeout=2)
    assert robots.allowed(f"http://127.0.0.1:{port}/private/page")
    assert robots.crawl_delay(f"http://127.0.0.1:{port}/") is None
    # Not a rule, so the page's own fetch records what really happens there; asked again later
    assert robots.failure(f"http://127.0.0.1:{port}/") == "connection-refused"


def test_disabled_fetches_nothing(site: str, counts) -> None:  # type: ignore[no-untyped-def]
    robots = RobotsCache("Nitpicker/0.1.0", enabled=False)
    assert robots.allowed(f"{site}/private/page")
    assert "/robots.txt" not in counts()
    assert robots.allowed("mailto:someone@example.com")


def test_non_200_robots_allows_all() -> None:
    app = Flask("no-robots")  # every path, /robots.txt included, is a 404
    server, base = serve(app=app)
    try:
        robots = RobotsCache("Nitpicker/0.1.0", timeout=2)
        assert robots.allowed(f"{base}/private/page")
        assert robots.fetched_origins() == [base]
        assert robots.failure(f"{base}/") is None  # "no robots.txt" is an answer, not a failure
    finally:
        server.shutdown()


def test_files_keep_what_each_origin_answered(site: str) -> None:  # type: ignore[no-untyped-def]
    from test_server.routes.robots import ROBOTS_TXT

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = Flask("no-robots")  # every path, /robots.txt included, is a 404
    server, base = serve(app=app)
    try:
        robots = RobotsCache("Nitpicker/0.1.0", timeout=2)
        for origin in (site, base, f"http://127.0.0.1:{port}"):
            robots.allowed(f"{origin}/page")
        files = {f.origin: (f.status, f.failure, f.text) for f in robots.files()}
        assert files == {
            site: (200, None, ROBOTS_TXT),
            base: (404, None, ""),
            f"http://127.0.0.1:{port}": (None, "connection-refused", ""),
        }
    finally:
        server.shutdown()
