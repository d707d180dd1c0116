"""Issue 15's "done when": two real crawls of a site that changed between them, analysed by markup and axe,
give the exact new / fixed / persisting findings through the real CLI, and `--fail-on` gates on them."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

pytestmark = pytest.mark.browser


def _ok(*args: str, cwd: Path, timeout: float = 300) -> str:
    result = run_cli(*args, cwd=cwd, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def lifecycle(site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Crawl and analyse version 1 of a fresh /checks-switch/ key, flip it, re-crawl (--update) and analyse."""
    workdir = tmp_path_factory.mktemp("issues-e2e")
    archive = workdir / "switch.nitpicker"
    prefix = f"/checks-switch/{uuid.uuid4().hex[:12]}/"
    _ok("crawl", "--parallels", "2", "-o", str(archive), site + prefix, cwd=workdir)
    _ok("analyze", "--plugin", "markup", "--plugin", "axe", str(archive), cwd=workdir)
    request = urllib.request.Request(f"{site}{prefix}flip", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    _ok("crawl", "--parallels", "2", "--update", str(archive), cwd=workdir)
    _ok("analyze", "--plugin", "markup", "--plugin", "axe", str(archive), cwd=workdir)
    return {"archive": archive, "workdir": workdir, "prefix": site + prefix}


@pytest.fixture(scope="module")
def issues_answer(lifecycle: dict[str, Any]) -> dict[str, Any]:
    """`nitpicker issues --json` of the newest commit against its parent, read once for the module."""
    return json.loads(_ok("issues", str(lifecycle["archive"]), "--json", cwd=lifecycle["workdir"]))


def _urls(life: dict[str, Any], check: str, *extra: str) -> dict[str, set[tuple[str, str]]]:
    """``issue-urls`` of one check as state → {(URL below the prefix, detail with the prefix cut)}."""
    out = _ok(
        "query",
        str(life["archive"]),
        "issue-urls",
        "--check",
        check,
        "--state",
        "all",
        "--limit",
        "1000",
        *extra,
        cwd=life["workdir"],
    )
    found: dict[str, set[tuple[str, str]]] = {"new": set(), "persisting": set(), "fixed": set()}
    for row in json.loads(out)["items"]:
        found[row["state"]].add(
            (row["url"].replace(life["prefix"], ""), row["detail"].replace(life["prefix"], ""))
        )
    return found


def test_crawl_checks_new_fixed_persisting(lifecycle: dict[str, Any]) -> None:
    assert _urls(lifecycle, "broken-link") == {
        "new": {("", "gone-3")},
        "persisting": {("", "gone-2")},
        "fixed": {("", "gone-1")},
    }
    # the detail tells a missing <title> from an empty one
    assert _urls(lifecycle, "title-missing") == {
        "new": {("c", "empty")},
        "persisting": {("b", "missing")},
        "fixed": {("a", "missing")},
    }
    # the 404 pages are linked: each is broken-link's defect, not a second one of client-error-page
    assert _urls(lifecycle, "client-error-page") == {"new": set(), "persisting": set(), "fixed": set()}


def test_analyzer_checks_new_fixed_persisting(lifecycle: dict[str, Any]) -> None:
    def ids(found: set[tuple[str, str]]) -> set[tuple[str, str]]:
        return {(url, detail.split('id="')[1].split('"')[0]) for url, detail in found}

    markup = _urls(lifecycle, "markup/duplicate-id")
    assert {state: ids(found) for state, found in markup.items()} == {
        "new": {("c", "z")},
        "persisting": {("b", "y")},
        "fixed": {("a", "x")},
    }
    # axe reads the same pages: the missing <title> there is document-title, on the same three pages
    axe = _urls(lifecycle, "axe/document-title")
    assert {state: {url for url, _ in found} for state, found in axe.items()} == {
        "new": {"c"},
        "persisting": {"b"},
        "fixed": {"a"},
    }


def test_issues_rows_count_the_same_sets(issues_answer: dict[str, Any]) -> None:
    answer = issues_answer
    assert answer["base_note"] is None  # same analyzer versions and settings on both commits
    rows = {row["id"]: row for row in answer["items"]}
    # markup and axe both find the duplicate ids: one row, its counts by defect (page and id), its sources listed
    assert {"axe/duplicate-id", "markup/duplicate-id"} <= set(rows["duplicate-id"]["sources"])
    # the crawl and axe find the same missing titles: one row, each page once
    assert "axe/document-title" not in rows and "axe/document-title" in rows["title-missing"]["sources"]
    assert rows["client-error-page"]["findings"] == 0
    for check in ("broken-link", "title-missing", "duplicate-id"):
        assert {k: rows[check][k] for k in ("findings", "new", "fixed", "persisting", "regressed")} == {
            "findings": 2,
            "new": 1,
            "fixed": 1,
            "persisting": 1,
            "regressed": 0,
        }, check
    assert rows["markup/parse-error"]["findings"] == 0
    assert rows["markup/parse-error"]["state"] == "ok"  # analysed, nothing found: 0, not "not analysed"


def test_fail_on_gates_on_new_findings(lifecycle: dict[str, Any], issues_answer: dict[str, Any]) -> None:
    archive, cwd = str(lifecycle["archive"]), lifecycle["workdir"]
    gated = run_cli("issues", archive, "--json", "--fail-on", "new:high", cwd=cwd)
    assert gated.returncode == 3  # the gate failed: not an error (1)
    assert gated.stderr.strip() == (
        "nitpicker: --fail-on new:high: 3 findings (broken-link, duplicate-id, title-missing)"
    )
    # against itself, nothing is new: the same gate passes, while any-high still fails
    latest = str(issues_answer["commit"])
    assert (
        run_cli("issues", archive, "--json", "--base", latest, "--fail-on", "new:high", cwd=cwd).returncode
        == 0
    )
    assert (
        run_cli("issues", archive, "--json", "--base", latest, "--fail-on", "high", cwd=cwd).returncode == 3
    )
    assert run_cli("issues", archive, "--json", "--fail-on", "new:title-duplicate", cwd=cwd).returncode == 0
    assert run_cli("issues", archive, "--json", "--fail-on", "new:title-missing", cwd=cwd).returncode == 3
