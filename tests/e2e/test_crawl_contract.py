"""The typed crawl contract: the crawler's own policy, the archive sink hook, the page filter hook, essentials."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from support import run_cli

from nitpicker_core import CrawlErrorRecord, Resource, ScrapeResult, hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.errors import UsageError
from nitpicker_core.essential import ESSENTIAL, check_disabling
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.sinks import ArchiveSink, SinkRefused

pytestmark = pytest.mark.browser


def _options(root: str, **kw: Any) -> CrawlOptions:
    return CrawlOptions(roots=[root], parallels=2, image=False, user_agent="Nitpicker/test", **kw)


def _one_line_refusal(result: Any) -> str:
    """The refusal's stderr: one line, no traceback, no internal error, and no crawl summary anywhere."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode not in (0, 2) and len(lines) == 1, result.stderr
    assert "internal error" not in lines[0] and "Traceback" not in result.stderr
    assert "complete" not in result.stdout + result.stderr
    return lines[0]


class MemorySink:
    """A third party's archive sink: everything in memory, nothing on disk."""

    def __init__(self) -> None:
        self.pages: dict[str, ScrapeResult] = {}
        self.skipped: dict[str, str] = {}
        self.resources: list[tuple[str, str]] = []
        self.errors: list[CrawlErrorRecord] = []
        self.finished: tuple[str, dict[str, Any]] | None = None
        self.abandoned = False

    @property
    def commit(self) -> int:
        return 7

    def done_urls(self) -> Mapping[str, bool]:
        return {}

    def failed_urls(self) -> Mapping[str, str]:
        return {}

    def pending_urls(self) -> Iterable[str]:
        return []

    def link_graph(self) -> tuple[dict[str, list[str]], dict[str, str]]:
        return {}, {}

    def put_page(self, result: ScrapeResult) -> None:
        self.pages[result.url] = result

    def put_skipped(self, url: str, reason: str, *, is_external: bool) -> None:
        self.skipped[url] = reason

    def put_resource(self, resource: Resource, referrer_url: str) -> None:
        self.resources.append((resource.url, referrer_url))

    def put_crawl_error(self, error: CrawlErrorRecord) -> None:
        self.errors.append(error)

    def put_inventory_run(self, digest: str, counts: Mapping[str, int]) -> None:
        raise AssertionError("no inventory in these tests")

    def commit_stats(self) -> Mapping[str, Any]:
        return {"pages": len(self.pages) + len(self.skipped)}

    def finish(self, status: str, stats: Mapping[str, Any]) -> None:
        self.finished = (status, dict(stats))

    def abandon(self) -> None:
        self.abandoned = True


class MemoryArchive:
    """The plugin: returns its sink from crawl_open_archive and watches what the crawl hands plugins."""

    def __init__(self) -> None:
        self.sink = MemorySink()
        self.started: list[tuple[int | None, dict[str, Any]]] = []
        self.renders: dict[str, str] = {}
        self.final_state: dict[str, Any] | None = None

    @hookimpl
    def crawl_open_archive(self, crawl: Any) -> MemorySink:
        return self.sink

    @hookimpl
    def crawl_started(self, crawl: Any) -> None:
        self.started.append((crawl.commit, dict(crawl.state)))

    @hookimpl(wrapper=True)
    def crawl_scrape(self, url: str, render: str) -> Any:
        self.renders[url] = render
        return (yield)

    @hookimpl
    def crawl_finished(self, crawl: Any) -> None:
        self.final_state = dict(crawl.state)


def test_hook_crawl_open_archive(site, tmp_path):
    # A plugin's own sink replaces the built-in writer: it gets every page, and no .nitpicker is written
    plugin = MemoryArchive()
    pm = make_plugin_manager()
    pm.add_plugin(plugin, "memory-archive")
    output = tmp_path / "never.nitpicker"
    stats = asyncio.run(
        Crawler(pm, _options(f"{site}/exclude/", exclude_urls=[f"{site}/exclude/page-b"]), output).run()
    )
    sink = plugin.sink
    assert stats.status == "complete" and stats.rendered == 3
    assert {f"{site}/exclude/", f"{site}/exclude/page-a", f"{site}/exclude/secret/hidden"} <= set(sink.pages)
    assert sink.pages[f"{site}/exclude/page-a"].metadata["title"] == "Exclude Page A"
    assert sink.skipped == {f"{site}/exclude/page-b": "excluded"}  # the crawler's own policy, no plugin state
    assert sink.finished is not None and sink.finished[0] == "complete" and not sink.abandoned
    assert plugin.started == [(7, {})]  # the sink's commit is on the context; the core wrote nothing in state
    assert plugin.final_state == {}  # no --exclude-keyword: the rules plugin kept nothing either
    assert set(plugin.renders.values()) == {"full"}  # the render mode comes as an argument
    assert not output.exists() and not output.with_name(output.name + ".stub").exists()


def test_hook_crawl_page_filter(site, tmp_path):
    class Thin:
        @hookimpl
        def crawl_page_filter(self, url: str, result: ScrapeResult) -> str | None:
            return "thin: says only 'Allowed.'" if "<p>Allowed.</p>" in (result.html or "") else None

    pm = make_plugin_manager()
    pm.add_plugin(Thin(), "thin")
    output = tmp_path / "f.nitpicker"
    options = _options(f"{site}/exclude/", exclude_keywords=["FORBIDDEN_KEYWORD"])
    stats = asyncio.run(Crawler(pm, options, output).run())
    assert stats.status == "complete"
    with open_archive(output) as reader:
        pages = {p["url"]: p for p in reader.pages()}
    a, b = pages[f"{site}/exclude/page-a"], pages[f"{site}/exclude/page-b"]
    assert a["is_skipped"] and a["skip_reason"] == "thin: says only 'Allowed.'"
    assert (
        b["is_skipped"] and "FORBIDDEN_KEYWORD" in b["skip_reason"]
    )  # the built-in keyword filter, a hookimpl
    assert pages[f"{site}/exclude/secret/hidden"]["is_target"]


def test_a_sink_short_of_the_protocol_is_refused_before_any_work(site, tmp_path):
    class Half:
        commit = 1

        def put_page(self, result: ScrapeResult) -> None:
            raise AssertionError("never called")

    class Plugin:
        @hookimpl
        def crawl_open_archive(self) -> Half:
            return Half()

    started = []

    class Watch:
        @hookimpl
        def crawl_started(self) -> None:
            started.append(True)

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "half")
    pm.add_plugin(Watch(), "watch")
    with pytest.raises(SinkRefused, match=r"lacks done_urls, failed_urls") as err:
        asyncio.run(Crawler(pm, _options(f"{site}/exclude/"), tmp_path / "h.nitpicker").run())
    assert "\n" not in str(err.value) and started == []
    assert not isinstance(Half(), ArchiveSink) and isinstance(MemorySink(), ArchiveSink)


def test_disabling_the_archive_writer_refuses_in_one_line(site, tmp_path):
    # Before: "complete: … → b.nitpicker" and no file at all
    result = run_cli(
        "crawl",
        "-o",
        "b.nitpicker",
        "--no-image",
        f"{site}/exclude/",
        cwd=tmp_path,
        env={"NITPICKER_DISABLE_PLUGINS": "archive-writer"},
        timeout=300,
    )
    line = _one_line_refusal(result)
    assert "archive-writer" in line
    assert not (tmp_path / "b.nitpicker").exists() and not (tmp_path / "b.nitpicker.stub").exists()


def test_disabling_crawl_rules_keeps_the_crawlers_own_policy(site, tmp_path):
    # Before: "internal error: KeyError". Now either the crawl works, robots.txt still obeyed (it is the
    # crawler's policy, not the plugin's), or disabling the essential plugin is refused in one line
    result = run_cli(
        "crawl",
        "-o",
        "r.nitpicker",
        "--no-image",
        f"{site}/private/",
        cwd=tmp_path,
        env={"NITPICKER_DISABLE_PLUGINS": "crawl-rules"},
        timeout=300,
    )
    if result.returncode != 0:
        assert "crawl-rules" in _one_line_refusal(result)
        return
    with open_archive(tmp_path / "r.nitpicker") as reader:
        page = reader.page(f"{site}/private/")
    assert page["is_skipped"] and page["skip_reason"] == "blocked by robots.txt"


def test_essential_plugins_refuse_to_be_disabled_in_one_line():
    assert {"scrape", "archive-writer", "crawl-rules"} <= set(ESSENTIAL)
    check_disabling(["lighthouse", "axe"])  # any other built-in may go
    with pytest.raises(UsageError) as err:
        check_disabling(["axe", "archive-writer", "scrape"])
    message = str(err.value)
    assert (
        "\n" not in message and "archive-writer" in message and "scrape" in message and "axe" not in message
    )
