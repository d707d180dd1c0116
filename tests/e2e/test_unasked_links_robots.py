"""A link out of the site that is only recorded (``--no-fetch-external``) asks nothing of its host.

Its host's robots.txt was read for every such link before it was set aside: on Python's documentation, 327
hosts' robots.txt, most of a `--render never` crawl's wall time. Two real HTTP servers on 127.0.0.1 (two
ports: two origins) count the requests each answers.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import run_cli


class _Counting(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass

    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()

    def do_HEAD(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        super().do_HEAD()


def _serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Counting, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.paths = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def two_sites(tmp_path) -> Iterator[tuple[Path, str, list[str], str, list[str]]]:
    site, other = tmp_path / "site", tmp_path / "other"
    site.mkdir()
    other.mkdir()
    (other / "robots.txt").write_text("User-agent: *\nDisallow: /closed/\n", encoding="utf-8")
    (other / "page.html").write_text("<!DOCTYPE html><title>Other</title><p>other</p>", encoding="utf-8")
    servers = [_serve(site), _serve(other)]
    (a, a_url), (b, b_url) = servers
    (site / "index.html").write_text(
        f'<!DOCTYPE html><html lang="en"><head><title>Home</title></head><body><h1>Home</h1>'
        f'<a href="{b_url}/page.html">open</a> <a href="{b_url}/closed/page.html">closed</a></body></html>',
        encoding="utf-8",
    )
    yield tmp_path, a_url, a.paths, b_url, b.paths  # type: ignore[attr-defined]
    for server, _ in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("render", ["never", "always"])
def test_links_only_recorded_ask_nothing_of_their_host(two_sites, render):
    from nitpicker_core.archive import open_archive

    work, site, _, other, asked = two_sites
    archive = work / f"{render}.nitpicker"
    done = run_cli(
        "crawl", f"{site}/index.html", "--no-fetch-external", "--no-image", "--render", render, "-o", str(archive),
        cwd=work, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert asked == []  # neither its robots.txt nor the pages
    with open_archive(archive) as reader:
        pages = {page["url"]: page for page in reader.pages()}
    for path in ("/page.html", "/closed/page.html"):
        page = pages[other + path]
        assert page["is_external"] and not page["is_skipped"] and page["status"] is None, page


def test_links_checked_obey_their_hosts_robots_txt(two_sites):
    from nitpicker_core.archive import open_archive

    work, site, _, other, asked = two_sites
    archive = work / "fetched.nitpicker"
    done = run_cli(
        "crawl", f"{site}/index.html", "--no-image", "--render", "never", "-o", str(archive), cwd=work, timeout=300
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "/robots.txt" in asked and "/closed/page.html" not in asked and "/page.html" in asked
    with open_archive(archive) as reader:
        pages = {page["url"]: page for page in reader.pages()}
    assert pages[other + "/closed/page.html"]["skip_reason"] == "blocked by robots.txt"
    assert pages[other + "/page.html"]["status"] == 200
