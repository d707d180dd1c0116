"""End-to-end: two real crawls of a site where one page changed, then the diff, the HTML diff and the history."""

from __future__ import annotations

import json
import urllib.request

import pytest
from support import McpStdio

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def crawled(site, tmp_path_factory):
    """/generations/f-diffs/ crawled, its p1 given a new version, then crawled again with --update."""
    from support import run_cli

    workdir = tmp_path_factory.mktemp("diffs")
    archive = workdir / "site.nitpicker"
    root = f"{site}/generations/f-diffs/"
    first = run_cli(
        "crawl", "-o", str(archive), "--parallels", "2", "--no-image", root, cwd=workdir, timeout=300
    )
    assert first.returncode == 0, first.stderr
    with urllib.request.urlopen(f"{root}__change/p1", timeout=30) as response:
        assert json.load(response) == {"page": "p1", "version": 1}
    second = run_cli(
        "crawl", "--update", str(archive), "--parallels", "2", "--no-image", cwd=workdir, timeout=300
    )
    assert second.returncode == 0, second.stderr
    return archive, root


def cli_json(*args: str, cwd) -> dict:
    from support import run_cli

    result = run_cli(*args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_changed_page_is_explained_without_per_render_noise(crawled):
    archive, root = crawled
    data = cli_json("diff", str(archive), cwd=archive.parent)
    assert (data["base"], data["commit"]) == (1, 2) and root + "p1" in data["modified"]
    p1 = data["changes"][root + "p1"]
    assert p1["fields"]["title"] == ["Generations p1", "Generations p1 v1"]
    assert p1["headers"]["changed"]["etag"] == ['"p1-v0"', '"p1-v1"']
    # Date, X-Request-Id, Server-Timing, the session cookie and the CSP nonce differ on every response
    assert "content-security-policy" not in p1["headers"].get("changed", {})
    assert not {"date", "x-request-id", "server-timing", "set-cookie"} & {
        k.lower() for k in p1["headers"].get("changed", {})
    }
    for url, change in data["changes"].items():  # any other page the crawl saw as modified changed no content
        if url != root + "p1":
            assert not {"title", "anchors", "images", "resources", "jsonld", "tags", "headings"} & set(
                change["changed"]
            )


def test_the_html_diff_shows_the_new_title_and_text_and_no_nonce_or_token(crawled):
    from support import run_cli

    archive, root = crawled
    result = run_cli("diff", str(archive), "--html", root + "p1", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    changed = [line for line in result.stdout.splitlines()[2:] if line[:1] in "+-"]
    assert "-<title>Generations p1</title>" in changed and "+<title>Generations p1 v1</title>" in changed
    assert "+<p>Text of p1, version 1.</p>" in changed
    assert not [line for line in changed if "nonce" in line or "csrf" in line]
    # an unchanged page: the same HTML once normalised, whether or not it was rendered again
    unchanged = run_cli("diff", str(archive), "--html", root + "p2", cwd=archive.parent)
    assert unchanged.returncode == 0 and unchanged.stdout == ""


def test_history_and_page_diff_as_queries_and_as_mcp_tools(crawled, tmp_path):
    archive, root = crawled
    title = cli_json(
        "query", str(archive), "history", "--url", root + "p1", "--field", "title", cwd=archive.parent
    )
    assert [c["value"] for c in title["commits"]] == ["Generations p1", "Generations p1 v1"]
    assert title["changes"] == [{"commit": 2, "base": 1, "old": "Generations p1", "new": "Generations p1 v1"}]
    with (tmp_path / "mcp.log").open("w+", encoding="utf-8") as errlog:
        server = McpStdio(archive.parent, errlog)
        try:
            history, delta = server.gather(
                ("history", {"archive": archive.name, "url": root + "p1", "field": "title"}),
                ("page_diff", {"archive": archive.name, "url": root + "p1"}),
            )
        finally:
            server.close()
    assert json.loads(history.content[0].text) == title
    assert json.loads(delta.content[0].text)["fields"]["title"] == ["Generations p1", "Generations p1 v1"]
