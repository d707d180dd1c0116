"""End-to-end fixtures: the test site on 127.0.0.1 and a real `nitpicker crawl` in real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import run_cli


@pytest.fixture(scope="session")
def external(site):
    return site.replace("localhost", "127.0.0.1")


class Crawled:
    """A finished crawl: its process result and the archive's pages keyed by URL."""

    def __init__(self, result, archive: Path) -> None:
        from nitpicker_core.archive import open_archive

        self.result, self.archive = result, archive
        self.pages: dict[str, dict] = {}
        self.anchors: dict[str, list[dict]] = {}
        if archive.exists():
            with open_archive(archive) as reader:
                self.commit = reader.resolve(None)
                self.info = reader.info()
                for page in reader.pages():
                    self.pages[page["url"]] = page
                    self.anchors[page["url"]] = list(reader.anchors(page["url"]))
                self.errors = list(reader.crawl_errors())
                self.resources = list(reader.resources())

    def page(self, url: str) -> dict:
        assert url in self.pages, f"{url} not in {sorted(self.pages)}"
        return self.pages[url]


@pytest.fixture
def crawl(tmp_path):
    def run(*args: str, name: str = "site", ok: tuple[int, ...] = (0,), env: dict | None = None) -> Crawled:
        archive = tmp_path / f"{name}.nitpicker"
        result = run_cli(
            "crawl", "-o", str(archive), "--parallels", "2", *args, cwd=tmp_path, env=env, timeout=300
        )
        assert result.returncode in ok, result.stderr
        return Crawled(result, archive)

    return run
