"""End-to-end fixtures: the test site on 127.0.0.1 and a real `nitpicker crawl` in real Chromium."""

from __future__ import annotations

import shutil
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


@pytest.fixture(scope="session")
def shared_crawls(tmp_path_factory) -> dict:
    """Crawls made once per test process, keyed by their arguments: ``crawl(..., shared=True)``."""
    return {"root": tmp_path_factory.mktemp("shared-crawls")}


@pytest.fixture
def crawl(tmp_path, shared_crawls):
    """``crawl(*args)``: a real `nitpicker crawl` into ``tmp_path/<name>.nitpicker``.

    ``shared=True`` for a test that asserts facts about the crawl's outcome (its archive, exit code and
    output), not about what crawling does meanwhile (requests, processes, time): the first such call with
    the same arguments crawls, later ones get a copy of its archive in their own ``tmp_path`` (write to it
    freely) and its result.
    """

    def crawl_into(workdir: Path, args: tuple[str, ...], name: str, ok: tuple[int, ...], env: dict | None):
        archive = workdir / f"{name}.nitpicker"
        result = run_cli(
            "crawl", "-o", str(archive), "--parallels", "2", *args, cwd=workdir, env=env, timeout=300
        )
        assert result.returncode in ok, result.stderr
        return result, archive

    def run(
        *args: str,
        name: str = "site",
        ok: tuple[int, ...] = (0,),
        env: dict | None = None,
        shared: bool = False,
    ) -> Crawled:
        if not shared:
            return Crawled(*crawl_into(tmp_path, args, name, ok, env))
        key = (args, name, ok, tuple(sorted((env or {}).items())))
        if key not in shared_crawls:
            workdir = shared_crawls["root"] / str(len(shared_crawls))
            workdir.mkdir()
            shared_crawls[key] = crawl_into(workdir, args, name, ok, env)
        result, original = shared_crawls[key]
        archive = tmp_path / original.name
        if original.exists():
            shutil.copyfile(original, archive)
        return Crawled(result, archive)

    return run
