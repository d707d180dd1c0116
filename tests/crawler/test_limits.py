"""The crawl's bounds: link depths recovered from an archive for --resume, and the config file's [crawl] table."""

from __future__ import annotations

import pytest
from nitpicker_archive_writer import FileSink

from nitpicker_core import UsageError
from nitpicker_core.archive import ArchiveWriter
from nitpicker_core.config import load_config
from nitpicker_core.crawler.limits import ArchivedDepths, link_depths
from nitpicker_core.records import Anchor, ScrapeResult


def test_link_depths_are_the_fewest_links_and_redirects_cost_none() -> None:
    links = {"r": ["a", "b"], "a": ["c", "x"], "c": ["d"], "b": ["moved"], "new": ["e"]}
    assert link_depths(["r"], links, {"moved": "new"}) == {
        "r": 0,
        "a": 1,
        "b": 1,
        "c": 2,
        "x": 2,
        "moved": 2,
        "new": 2,
        "d": 3,
        "e": 3,
    }


def _page(url: str, *links: str) -> ScrapeResult:
    return ScrapeResult(
        url=url,
        status=200,
        content_type="text/html",
        html=f"<title>{url}</title>",
        anchors=[Anchor(href, "") for href in links],
    )


def test_a_resumed_commit_gets_its_depths_from_its_own_links(tmp_path) -> None:
    # The archive as an interrupted crawl leaves it: rendered pages with their links, link targets pending.
    target = tmp_path / "site.nitpicker"
    writer = ArchiveWriter.open(target)
    try:
        commit = writer.begin_commit()
        writer.put_page(commit, _page("http://h/", "http://h/a", "http://h/b"))
        writer.put_page(commit, _page("http://h/a", "http://h/a/1", "http://h/b"))
        writer.put_page(commit, _page("http://h/a/1", "http://h/a/1/x"))
        writer.finish_commit(commit, "interrupted")
        writer.resume_commit(commit)
        depths = ArchivedDepths(FileSink(writer, commit).link_graph, ["http://user:pw@h/"], max_depth=3)
        assert [depths(u) for u in ("http://h/", "http://h/b", "http://h/a/1", "http://h/a/1/x")] == [
            0,
            1,
            2,
            3,
        ]
        assert depths("http://h/never-linked") == 3  # unknown: at the limit, so nothing deeper is crawled
    finally:
        writer.close(remove_stub=False)


def test_a_new_commit_only_asks_for_its_roots() -> None:
    depths = ArchivedDepths(None, ["http://h/"], max_depth=2)
    assert depths("http://h/") == 0 and depths("http://h/a") == 2


def test_the_config_file_sets_crawl_limits(tmp_path, bare_pm) -> None:
    (tmp_path / "nitpicker.toml").write_text("[crawl]\nmax_pages = 500\nmax-depth = 4\nspeed = 3\n")
    config = load_config(bare_pm, start=tmp_path)
    assert config.crawl == {"max_pages": 500, "max_depth": 4}
    assert config.warnings == ["nitpicker.toml: unknown key 'crawl.speed'"]
    assert config.override({}).crawl == config.crawl


@pytest.mark.parametrize(
    "text",
    [
        "[crawl]\nmax_pages = 0\n",
        "[crawl]\nmax_depth = -1\n",
        '[crawl]\nmax_depth = "3"\n',
        "[crawl]\nmax_pages = true\n",
        "crawl = 3\n",
    ],
)
def test_bad_crawl_limits_are_one_line_errors(tmp_path, bare_pm, text) -> None:
    (tmp_path / "nitpicker.toml").write_text(text)
    with pytest.raises(UsageError) as err:
        _ = load_config(bare_pm, start=tmp_path).crawl  # errors are recorded per table, raised when read
    assert "crawl" in str(err.value) and "\n" not in str(err.value)
