"""End-to-end: exit codes, headers and credentials, output names, interruption, resume and process hygiene."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser


def chromium_processes() -> set[int]:
    """Chromium processes that are descendants of this test process."""
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            pid = int(entry.name)
            chain, parent = [], pid
            while parent > 1 and len(chain) < 30:
                stat = (Path("/proc") / str(parent) / "stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                chain.append(parent)
        except (OSError, ValueError, IndexError):
            continue
        if b"chromium" in cmd and me in chain:
            found.add(pid)
    return found


def test_header_goes_only_to_in_scope_urls_and_is_never_stored(crawl, site, external):
    c = crawl(f"{site}/headers/", "--header", "X-Audit: secret-token", "--no-image")
    digest = hashlib.sha256(b"secret-token").hexdigest()[:12]
    assert c.page(f"{site}/headers/")["title"] == f"Header {digest}"
    assert c.page(f"{site}/headers/inner")["title"] == f"Header {digest}"
    assert c.page(f"{external}/headers/outside")["title"] == "Header none"
    assert b"secret-token" not in c.archive.read_bytes()
    assert c.info["options"]["headers"] == ["X-Audit"]


def test_basic_auth_in_root_url_is_used_and_never_stored(crawl, site):
    host = site.split("://", 1)[1]
    c = crawl(f"http://user:secret@{host}/auth/", "--no-image")
    assert c.page(f"{site}/auth/")["title"] == "Welcome user"
    assert c.page(f"{site}/auth/inner")["title"] == "Welcome user"
    assert b"secret" not in c.archive.read_bytes()
    assert "secret" not in c.result.stderr + c.result.stdout


def test_only_external_failures_exit_2_and_strict_makes_it_1(crawl, site):
    ok = crawl(
        f"{site}/error-status/", "--no-image", shared=True
    )  # 404/500 pages are findings, not crawl errors
    assert ok.result.returncode == 0
    warned = crawl(f"{site}/broken-external/", "--no-image", "--retry", "1", name="warned", ok=(2,))
    assert [(e["url"], e["kind"]) for e in warned.errors] == [
        ("http://127.0.0.1:1/nothing", "connection-refused")
    ]
    assert warned.page(f"{site}/about")["status"] == 200
    crawl(f"{site}/broken-external/", "--no-image", "--retry", "1", "--strict", name="strict", ok=(1,))


def test_default_output_name(site, tmp_path, cli):
    result = cli("crawl", f"{site}/about", "--single", "--no-image", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    names = [p.name for p in tmp_path.iterdir()]
    assert len(names) == 1 and names[0].startswith("localhost-") and names[0].endswith(".nitpicker")
    assert len(names[0]) == len("localhost-YYYYMMDDHHMMSSmmm.nitpicker")


def test_bad_scope_port_is_one_line(cli, tmp_path, site):
    result = cli("crawl", f"{site}/about", "--scope", "localhost:99999", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("nitpicker: error: not a valid URL: 'http://localhost:99999'")
    assert len(result.stderr.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_bad_url_is_one_line(cli, tmp_path):
    result = cli("crawl", "not a url", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == "nitpicker: error: not an http(s) URL: 'not a url'"
    assert list(tmp_path.iterdir()) == []


def test_scrape_wrapper_plugin_times_every_page(site, tmp_path, cli):
    make_dist(
        tmp_path / "dist",
        "nitpicker-timer",
        "timer",
        "timer_plugin",
        """
        import time
        from nitpicker_core import hookimpl

        async def timed(inner):
            start = time.perf_counter()
            result = await inner
            result.extra["scrape_ms"] = round((time.perf_counter() - start) * 1000, 1)
            return result

        @hookimpl(wrapper=True)
        def crawl_scrape(url, page, crawl):
            inner = yield
            return timed(inner)
    """,
    )
    env = {
        "PYTHONPATH": str(tmp_path / "dist"),
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "timer"]),
    }
    archive = tmp_path / "t.nitpicker"
    result = cli(
        "crawl", "-o", str(archive), f"{site}/recursive/", "--no-image", cwd=tmp_path, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    with open_archive(archive) as reader:
        timed = {p["url"]: p["extra"].get("scrape_ms") for p in reader.pages() if p["is_target"]}
    assert len(timed) == 4 and all(isinstance(ms, float) and ms > 0 for ms in timed.values())


def test_no_chromium_survives_a_crawl(crawl, site):
    crawl(f"{site}/recursive/", "--no-image")
    assert chromium_processes() == set()


def test_unreachable_root_fails_cleanly_without_orphans(crawl):
    c = crawl("http://127.0.0.1:1/", "--no-image", "--retry", "1", ok=(1,))
    assert [(e["url"], e["kind"]) for e in c.errors] == [("http://127.0.0.1:1/", "connection-refused")]
    assert chromium_processes() == set()


def test_list_file_interval_and_silent(crawl, site, tmp_path):
    listing = tmp_path / "urls.txt"
    listing.write_text(f"{site}/recursive/page-a\n\n# a comment\n{site}/recursive/page-c\n")
    c = crawl("--list-file", str(listing), "--interval", "700", "--parallels", "1", "--no-image", "--silent")
    assert c.result.stderr == ""  # --silent: no progress, no summary
    assert c.page(f"{site}/recursive/page-a")["is_target"] and c.page(f"{site}/recursive/page-c")["is_target"]
    assert not c.page(f"{site}/recursive/page-b")["is_target"]  # linked from page-a: checked only
    with open_archive(c.archive) as reader:
        stats = reader.commits()[0]["stats"]
        assert reader.info()["options"]["from_list"] is True
    assert stats["pages"] == 3 and stats["seconds"] >= 3 * 0.7  # one 700 ms pause before each URL
