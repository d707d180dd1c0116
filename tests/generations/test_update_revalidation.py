"""`crawl --update` revalidates: conditional requests, a 304 takes the page over unrendered, `--full` renders all.

Every count here is the server's own (/generations/<site>/__hits): what the update sent, not what it says.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.crawler.engine import Crawler
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.plugins import make_plugin_manager

PAGES = ["/", *(f"p{n}" for n in range(1, 31))]
STATIC = ("style.css", "logo.png", "app.js")


def _delta(
    before: dict[str, dict[str, int]], after: dict[str, dict[str, int]], outcome: str
) -> dict[str, int]:
    """Per path, how many more ``outcome`` (200, 304, conditional) the server counted."""
    paths = set(before) | set(after)
    moved = {p: after.get(p, {}).get(outcome, 0) - before.get(p, {}).get(outcome, 0) for p in paths}
    return {p: n for p, n in moved.items() if n}


def _stats(archive: Any, commit: int) -> dict[str, Any]:
    with open_archive(archive) as reader:
        return next(c for c in reader.commits() if c["id"] == commit)["stats"]


def test_update_asks_conditionally_and_renders_only_what_changed(gsite, recrawl, cli, tmp_path) -> None:
    archive = recrawl(gsite.root)
    first = gsite.hits()

    # unchanged: one conditional request per page, every one a 304; no full GET, no sub-resource fetched
    recrawl(gsite.root)
    second = gsite.hits()
    assert _delta(first, second, "200") == {}
    assert _delta(first, second, "304") == dict.fromkeys(PAGES, 1)
    assert _delta(first, second, "conditional") == dict.fromkeys(PAGES, 1)
    assert _stats(archive, 2)["revalidation"] == {"conditional": 31, "unchanged": 31, "changed": 0}
    # the summary says nothing was rendered (issue 33: an unchanged update said "1171 rendered")
    assert "URLs (0 rendered, 31 unchanged (304), 0 skipped," in recrawl.stderr, recrawl.stderr
    with open_archive(archive) as reader:
        diff = reader.diff(1, 2)
        assert (diff["added"], diff["removed"], diff["modified"]) == ([], [], [])
        assert diff["resources"] == {"added": [], "removed": [], "modified": []}
        pages = {p["url"]: p for p in reader.pages(2, scraped=True)}
        assert len(pages) == 31 and pages[gsite.url("p7")]["title"] == "Generations p7"
        assert sorted(reader.page_resources(gsite.url("p7"), 2)) == sorted(gsite.url(s) for s in STATIC)
        stored = reader.execute("SELECT COUNT(*) FROM page_state")[0][0]

    # one page changed: that page alone answers 200 and is rendered (with what it loads)
    gsite.change("p3")
    recrawl(gsite.root)
    third = gsite.hits()
    assert set(_delta(second, third, "200")) == {"p3", *STATIC}
    assert _delta(second, third, "304") == {p: 1 for p in PAGES if p != "p3"}
    assert _stats(archive, 3)["revalidation"] == {"conditional": 31, "unchanged": 30, "changed": 1}
    assert "URLs (1 rendered, 30 unchanged (304), 0 skipped," in recrawl.stderr, recrawl.stderr
    with open_archive(archive) as reader:
        diff = reader.diff(2, 3)
        assert (diff["added"], diff["removed"], diff["modified"]) == ([], [], [gsite.url("p3")])
        assert reader.page(gsite.url("p3"), 3)["title"] == "Generations p3 v1"
        assert reader.execute("SELECT COUNT(*) FROM page_state")[0][0] == stored + 1

    refused = cli("crawl", "--full", "-o", str(tmp_path / "x.nitpicker"), gsite.root, cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.strip().splitlines() == [
        "nitpicker: error: --full goes with --update (render every page of the update again)"
    ], refused.stderr


def _paths(archive: Any, root: str) -> list[str]:
    """The site paths the first commit rendered, as the server counts them ("/" for the index)."""
    with open_archive(archive) as reader:
        return sorted(
            p["url"].removeprefix(root) or "/" for p in reader.pages(1, scraped=True) if p["status"] == 200
        )


def test_a_server_that_ignores_validators_is_crawled_as_usual(make_gsite, tmp_path) -> None:
    # the crawls run in this process (the CLI's `crawl --update` is the test above's)
    ignoring = make_gsite("ignores-")
    options = CrawlOptions(
        roots=[ignoring.root], parallels=2, image=False, max_pages=6, user_agent="Nitpicker/test"
    )
    archive = tmp_path / "i.nitpicker"
    assert asyncio.run(Crawler(make_plugin_manager(), options, archive).run()).status == "complete"
    crawled = _paths(archive, ignoring.root)
    assert len(crawled) == 6
    before = ignoring.hits()
    assert (
        asyncio.run(Crawler(make_plugin_manager(), options, archive, mode="update").run()).status
        == "complete"
    )
    after = ignoring.hits()
    assert _delta(before, after, "304") == {}
    assert _delta(before, after, "conditional") == dict.fromkeys(crawled, 1)
    assert _stats(archive, 2)["revalidation"] == {"conditional": 6, "unchanged": 0, "changed": 6}
    with open_archive(archive) as reader:
        assert reader.diff(1, 2)["modified"] == []  # rendered again, logically the same


def test_update_of_an_archive_without_a_complete_crawl_is_refused(tmp_path, cli) -> None:
    from nitpicker_core.archive import ArchiveWriter
    from nitpicker_testing.archives import page

    target = tmp_path / "half.nitpicker"
    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit(options={"roots": ["http://localhost:9/"]})
    writer.set_info("roots", ["http://localhost:9/"])
    writer.set_info("options", {"roots": ["http://localhost:9/"]})
    writer.put_page(commit, page("http://localhost:9/", title="Half"))
    writer.finish_commit(commit, "interrupted")
    writer.write()
    writer.close(remove_stub=True)
    before = target.read_bytes()
    result = cli("crawl", "--update", str(target), cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        "nitpicker: error: half.nitpicker has no complete crawl to update: finish its crawl first with "
        "--resume half.nitpicker"
    ], result.stderr
    assert target.read_bytes() == before and not (tmp_path / "half.nitpicker.stub").exists()


class Unchanged:
    """Observes ``crawl_page_unchanged``."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    @hookimpl
    def crawl_page_unchanged(self, url: str, crawl: Any) -> None:
        assert crawl.mode == "update"
        self.urls.append(url)


def test_hook_crawl_page_unchanged(make_gsite, tmp_path) -> None:
    # Last-Modified alone is a validator too (If-Modified-Since); the hook sees each page taken over
    lastmod = make_gsite("lastmod-")
    options = CrawlOptions(
        roots=[lastmod.root], parallels=2, image=False, max_pages=4, user_agent="Nitpicker/test"
    )
    output = tmp_path / "h.nitpicker"
    assert asyncio.run(Crawler(make_plugin_manager(), options, output).run()).status == "complete"
    observer = Unchanged()
    pm = make_plugin_manager()
    pm.add_plugin(observer, "observer")
    stats = asyncio.run(Crawler(pm, options, output, mode="update").run())
    assert stats.revalidation == {"conditional": 4, "unchanged": 4, "changed": 0}
    crawled = _paths(output, lastmod.root)
    assert sorted(u.removeprefix(lastmod.root) or "/" for u in observer.urls) == crawled and len(crawled) == 4
    assert sum(h.get("304", 0) for h in lastmod.hits().values()) == 4

    # --full (revalidate=False): no validator sent, every page rendered again, nothing modified
    before = lastmod.hits()
    full = asyncio.run(Crawler(pm, options, output, mode="update", revalidate=False).run())
    assert full.revalidation["off"].startswith("--full") and full.rendered == 4
    after = lastmod.hits()
    assert _delta(before, after, "conditional") == {} and set(_delta(before, after, "200")) >= set(crawled)
    with open_archive(output) as reader:
        assert reader.diff(2, 3)["modified"] == []


def test_a_pipeline_run_on_an_archive_of_the_site_revalidates_and_full_renders_again(
    gsite, cli, tmp_path
) -> None:
    # issue 32: a second `nitpicker pipeline` rendered every page again; only `crawl --update` revalidated
    import json

    def pipeline(*flags: str) -> dict[str, Any]:
        result = cli(
            "pipeline", gsite.root, "-o", "p.nitpicker", "--no-analyze", "--no-image", *flags,
            cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["crawl"]

    first = pipeline()
    assert first["commit"] == 1 and not first.get("revalidation")
    before = gsite.hits()
    again = pipeline()
    after = gsite.hits()
    assert again["commit"] == 2 and again["rendered"] - again["revalidation"]["unchanged"] == 0
    assert again["revalidation"] == {"conditional": 31, "unchanged": 31, "changed": 0}
    assert _delta(before, after, "200") == {}  # nothing fetched in full, nothing rendered
    assert _delta(before, after, "304") == dict.fromkeys(PAGES, 1)
    with open_archive(tmp_path / "p.nitpicker") as reader:
        diff = reader.diff(1, 2)
        assert (diff["added"], diff["removed"], diff["modified"]) == ([], [], [])
    full = pipeline("--full")
    assert full["commit"] == 3 and not full.get("revalidation")
    assert set(_delta(after, gsite.hits(), "200")) >= set(PAGES)  # every page fetched and rendered again


def test_an_auto_update_decides_for_what_it_fetched_and_nothing_for_what_it_took_over(gsite, recrawl) -> None:
    """--render auto: a page the update takes over (304) keeps its state, not the base commit's decision (the
    update took none for it); the page it fetched has the decision it took, and the base commit keeps its."""
    archive = recrawl(gsite.root, "--render", "auto")
    gsite.change("p3")
    recrawl(gsite.root)  # the stored options: auto again
    changed = gsite.url("p3")

    def decided(reader: Any, commit: int) -> dict[str, dict[str, Any] | None]:
        rows = reader.execute(
            "SELECT u.url, cp.render_decision FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.scraped = 1 "
            "AND ps.status = 200 AND ps.content_type LIKE 'text/html%'",
            [commit],
        )
        return {url: json.loads(d) if d else None for url, d in rows}

    with open_archive(archive) as reader:
        first, second = decided(reader, 1), decided(reader, 2)
    assert len(first) == len(second) == len(PAGES)
    assert all(d is not None and d["mode"] == "auto" for d in first.values())
    assert _stats(archive, 2)["revalidation"] == {"conditional": 31, "unchanged": 30, "changed": 1}
    assert {url for url, d in second.items() if d is None} == set(second) - {changed}
    # the one page fetched is the first of its template this commit: its sample, rendered
    assert second[changed] is not None and (second[changed]["rendered"], second[changed]["reason"]) == (
        True,
        "sample of its template: same",
    )


def test_an_update_read_without_a_browser_takes_unchanged_pages_over_in_the_writer_process(
    gsite, recrawl, tmp_path
) -> None:
    """`--render never` stores in the archive writer process: a 304's page is taken over there (the sink's
    ``put_unchanged``, awaited by the page, and its link targets sent back), and no writer thread runs."""
    from nitpicker_core.crawler.phases import ARCHIVE_WRITE_IN_PROCESS

    archive = recrawl(gsite.root, "--render", "never")
    recrawl(gsite.root, "--render", "never")
    assert ARCHIVE_WRITE_IN_PROCESS in _stats(archive, 1)["phases"]
    stats = _stats(archive, 2)
    # every page found through the links put_unchanged sent back: each one asked for once, all unchanged
    assert stats["revalidation"] == {"conditional": 31, "unchanged": 31, "changed": 0}
    assert "archive write" not in stats["phases"]
    with open_archive(archive) as reader:
        pages = {p["url"]: p for p in reader.pages(2, scraped=True)}
        assert len(pages) == 31 and pages[gsite.url("p7")]["title"] == "Generations p7"
        assert reader.diff(1, 2)["modified"] == []
