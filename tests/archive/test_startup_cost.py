"""A crawl's environment manifest costs no start of Chromium once its version is known, and no METADATA scan.

The Chromium version is kept per binary (path, mtime, size) in the user's cache directory; the plugins come
from what the crawl's plugin manager recorded when it loaded the entry points.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from support import BUILTIN_PLUGINS

from nitpicker_core.archive import manifest
from nitpicker_core.crawler.chromium import find_browser
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions


def fake_chromium(folder: Path, version: str, real: str | None = None) -> tuple[Path, Path]:
    """An executable that notes each ``--version`` call in a file and says ``version``; with ``real``, every
    other call runs that browser (so a crawl can render with it). Returns the executable and the notes."""
    notes = folder / "version-calls"
    script = folder / "chromium"
    rest = f'exec "{real}" "$@"' if real else "exit 3"
    script.write_text(
        f'#!/bin/sh\nfor arg in "$@"; do\n  if [ "$arg" = --version ]; then\n'
        f'    echo called >> "{notes}"\n    echo "{version}"\n    exit 0\n  fi\ndone\n{rest}\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, notes


def calls(notes: Path) -> int:
    return len(notes.read_text().splitlines()) if notes.exists() else 0


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    manifest.chromium_version.cache_clear()  # the in-process memo, so each call below reads the file cache
    yield tmp_path / "cache" / "nitpicker" / manifest.CACHE_FILE
    manifest.chromium_version.cache_clear()


def test_the_version_is_asked_once_then_read_from_the_cache(tmp_path: Path, cache_home: Path) -> None:
    script, notes = fake_chromium(tmp_path, "Chromium 150.0.1")
    assert manifest.chromium_version(str(script)) == "Chromium 150.0.1"
    manifest.chromium_version.cache_clear()  # a new process, as far as the cache is concerned
    assert manifest.chromium_version(str(script)) == "Chromium 150.0.1"
    assert calls(notes) == 1
    entry = json.loads(cache_home.read_text())[str(script)]
    assert entry["version"] == "Chromium 150.0.1" and entry["size"] == script.stat().st_size


def test_a_changed_binary_is_asked_again(tmp_path: Path, cache_home: Path) -> None:
    script, notes = fake_chromium(tmp_path, "Chromium 150.0.1")
    assert manifest.chromium_version(str(script)) == "Chromium 150.0.1"
    fake_chromium(tmp_path, "Chromium 151.0.1")  # upgraded in place: same path, same size, a new mtime
    mtime = script.stat().st_mtime_ns + 2_000_000_000
    os.utime(script, ns=(mtime, mtime))
    manifest.chromium_version.cache_clear()
    assert manifest.chromium_version(str(script)) == "Chromium 151.0.1"
    assert calls(notes) == 2
    assert json.loads(cache_home.read_text())[str(script)]["mtime_ns"] == mtime


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"/usr/bin/x": 7}', ""])
def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path: Path, cache_home: Path, content: str) -> None:
    script, notes = fake_chromium(tmp_path, "Chromium 150.0.1")
    cache_home.parent.mkdir(parents=True)
    cache_home.write_text(content)
    assert manifest.chromium_version(str(script)) == "Chromium 150.0.1"
    assert calls(notes) == 1
    assert json.loads(cache_home.read_text())[str(script)]["version"] == "Chromium 150.0.1"


def test_an_unwritable_cache_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    script, notes = fake_chromium(tmp_path, "Chromium 150.0.1")
    manifest.chromium_version.cache_clear()
    try:
        assert manifest.chromium_version(str(script)) == "Chromium 150.0.1"
    finally:
        manifest.chromium_version.cache_clear()
    assert calls(notes) == 1 and sorted(p.name for p in tmp_path.iterdir()) == [
        "chromium",
        "file",
        "version-calls",
    ]


def test_a_failing_binary_is_not_cached(tmp_path: Path, cache_home: Path) -> None:
    script = tmp_path / "broken"
    script.write_text("#!/bin/sh\nexit 1\n")
    script.chmod(0o755)
    assert manifest.chromium_version(str(script)) is None
    assert not cache_home.exists()


def test_the_crawl_hands_the_managers_records_to_the_manifest(pm, tmp_path: Path) -> None:
    """The manifest's plugins are what loading the entry points recorded, the same as a scan would find."""
    recorded = pm.distributions()
    assert recorded == manifest.plugin_distributions()
    assert recorded["archive-writer"].startswith("nitpicker ")
    assert set(BUILTIN_PLUGINS) <= set(recorded)
    crawler = Crawler(pm, CrawlOptions(roots=["http://localhost:1/"]), tmp_path / "x.nitpicker")
    assert crawler.crawl.environment["plugins"] == recorded
    env = manifest.crawl_environment({"plugins": {"only": "one 1.0"}})
    assert env["plugins"] == {"only": "one 1.0"} and list(env).index("plugins") == 6  # same place as before


@pytest.mark.browser
def test_the_second_crawl_starts_no_chromium_to_ask_its_version(site, cli, tmp_path: Path) -> None:
    real = find_browser() if not os.environ.get("NITPICKER_BROWSER") else os.environ["NITPICKER_BROWSER"]
    assert real, "no Chromium"
    script, notes = fake_chromium(tmp_path, "Chromium 150.0.1 (fake)", real=real)
    env = {"NITPICKER_BROWSER": str(script), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for name in ("one", "two"):
        done = cli(
            "crawl",
            "-o",
            f"{name}.nitpicker",
            "--single",
            f"{site}/scope/docs/",
            cwd=tmp_path,
            env=env,
            timeout=300,
            subprocess=True,  # each crawl a new process: only the file cache may answer the second
        )
        assert done.returncode == 0, done.stderr
        logged = cli("log", f"{name}.nitpicker", "--json", cwd=tmp_path)
        assert json.loads(logged.stdout)[0]["environment"]["chromium"] == "Chromium 150.0.1 (fake)"
    assert calls(notes) == 1
