"""`nitpicker issues` and `--fail-on` through the real CLI, and the issues tools of the real MCP server."""

from __future__ import annotations

import json
import os
import re

import pytest
from archives import SITE, build_archive
from plugin_dists import make_dist
from support import McpStdio, run_cli

from nitpicker_core import ScrapeResult

# A separate distribution with two checks, found through its entry point as a third party's would be.
PLUGIN = """
from nitpicker_core import Check, Finding, hookimpl


def error_pages(ctx):
    for p in ctx.reader.pages(ctx.commit):
        if p["status"] and p["status"] >= 400:
            yield Finding(p["url"], str(p["status"]))


def long_urls(ctx):
    for p in ctx.reader.pages(ctx.commit):
        if len(p["url"]) > 30:
            yield Finding(p["url"])


@hookimpl
def register_checks(register):
    register(Check("test-error-page", "4xx/5xx pages", "links", "high", "Pages answering an error.",
                   "Fix or redirect them.", findings=error_pages))
    register(Check("test-long-url", "Long URL", "links", "low", "URLs over 30 characters.", "Shorten them.",
                 findings=long_urls))
"""


def page(path: str, status: int = 200) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": path},
        html="<html></html>",
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = make_dist(
        tmp_path_factory.mktemp("dist"), "issue-checks", "issue-checks", "issue_checks_plugin", PLUGIN
    )
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
        "NITPICKER_LOAD_PLUGINS": os.environ["NITPICKER_LOAD_PLUGINS"] + ",issue-checks",
    }


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Commit 1: /gone is 404; commit 2: /gone fixed, /broken 404 (new), /a-rather-long-path-here (low, new)."""
    target = tmp_path_factory.mktemp("cli") / "site.nitpicker"
    build_archive(target, [page("/"), page("/gone", 404), page("/kept", 500)])
    build_archive(
        target,
        [
            page("/"),
            page("/gone"),
            page("/kept", 500),
            page("/broken", 404),
            page("/a-rather-long-path-here"),
        ],
    )
    return target


def issues(archive, env, *args):
    return run_cli("issues", archive.name, *args, cwd=archive.parent, env=env)


def mine(answer):
    return {r["id"]: r for r in answer["items"] if r["id"] in {"test-error-page", "test-long-url"}}


def test_json_when_piped_is_the_issues_query_answer(archive, env):
    result = issues(archive, env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert (answer["commit"], answer["base"]) == (2, 1)
    rows = mine(answer)
    assert (
        rows["test-error-page"]["new"],
        rows["test-error-page"]["fixed"],
        rows["test-error-page"]["persisting"],
    ) == (1, 1, 1)
    assert rows["test-long-url"]["new"] == 1
    assert answer == json.loads(issues(archive, env, "--json").stdout)
    query = run_cli("query", archive.name, "issues", cwd=archive.parent, env=env)
    assert json.loads(query.stdout) == answer


def test_the_table_lists_checks_with_findings_by_priority(archive, env):
    result = issues(archive, env, "--table", "--base", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "commit 2 against base 2"
    assert lines[1].split() == [
        "PRIORITY",
        "TYPE",
        "CHECK",
        "FINDINGS",
        "NEW",
        "FIXED",
        "GONE",
        "URLS",
        "%",
        "OF",
        "URLS",
        "TITLE",
    ]
    error_row = next(line for line in lines if " test-error-page " in line)
    long_row = next(line for line in lines if " test-long-url " in line)
    assert error_row.split()[:8] == ["high", "issue", "test-error-page", "2", "0", "0", "0", "2"]
    assert long_row.split()[:8] == ["low", "issue", "test-long-url", "1", "0", "0", "0", "1"]
    # % of URLs: the URLs as a share of the internal URLs, said once under the table
    internal = int(re.search(r"^% of URLs: of the (\d+) internal URLs", result.stdout, re.M).group(1))
    assert error_row.split()[8] == f"{round(100 * 2 / internal, 1)}%"
    assert lines.index(error_row) < lines.index(long_row)


@pytest.mark.parametrize(
    ("specs", "code", "named"),
    [
        (["new:high"], 3, "test-error-page"),  # /broken is new
        (["new:critical"], 0, None),  # nothing critical of ours (built-ins may add: checked below)
        (["high"], 3, "test-error-page"),
        (["test-long-url"], 3, "test-long-url"),
        (["new:test-long-url"], 3, "test-long-url"),
        (["--base", "2", "new:test-error-page"], 0, None),  # against itself nothing is new
        (["--base", "2", "test-error-page"], 3, "test-error-page"),
        (["--commit", "1", "--base", "1", "new:high"], 0, None),
    ],
)
def test_fail_on_exit_codes(archive, env, specs, code, named):
    args = []
    for spec in specs:
        args += (
            [spec]
            if spec.startswith("--") or (args and args[-1] in ("--base", "--commit"))
            else ["--fail-on", spec]
        )
    result = issues(archive, env, *args)
    answer = json.loads(result.stdout)
    if code == 0 and specs[-1] == "new:critical":  # built-in checks may find critical things; ours do not
        code = 3 if any(r["new"] for r in answer["items"] if r["priority"] == "critical") else 0
    assert result.returncode == code, result.stderr
    if named:
        assert f"--fail-on {specs[-1]}: " in result.stderr and named in result.stderr
        assert len(result.stderr.splitlines()) == 1
    elif code == 0:
        assert result.stderr == ""


def test_unknown_and_malformed_specs_are_one_line(archive, env):
    unknown = issues(archive, env, "--fail-on", "new:test-eror-page")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith(
        "nitpicker: error: --fail-on new:test-eror-page: no check 'test-eror-page'; closest: "
    )
    assert "test-error-page" in unknown.stderr and len(unknown.stderr.splitlines()) == 1
    for bad in ("new:", "High", "new:high:now", "violations>x"):
        result = issues(archive, env, "--fail-on", bad)
        assert result.returncode == 1 and result.stdout == ""
        assert "new:PRIORITY, PRIORITY, CHECK-ID or new:CHECK-ID" in result.stderr, bad
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_existing_metric_thresholds_still_work_in_issues(archive, env):
    ok = issues(archive, env, "--fail-on", "violations>0")
    assert ok.returncode == 0, ok.stderr


def test_unknown_check_in_issue_urls_names_the_closest(archive, env):
    result = run_cli(
        "query", archive.name, "issue-urls", "--check", "test-long-urls", cwd=archive.parent, env=env
    )
    assert result.returncode == 1
    assert result.stderr.startswith("nitpicker: error: no check 'test-long-urls'; closest: test-long-url")
    listed = run_cli(
        "query",
        archive.name,
        "issue-urls",
        "--check",
        "test-error-page",
        "--state",
        "new",
        cwd=archive.parent,
        env=env,
    )
    assert [(i["url"], i["state"], i["detail"]) for i in json.loads(listed.stdout)["items"]] == [
        (SITE + "/broken", "new", "404")
    ]


def test_the_mcp_server_has_the_issues_tools(archive, env, tmp_path):
    with (tmp_path / "stderr.log").open("w+", encoding="utf-8") as errlog:
        server = McpStdio(archive.parent, errlog, dict(os.environ, **env))
        try:
            tools = {tool.name for tool in server.run(server.session.list_tools()).tools}
            assert {"issues", "issue_urls"} <= tools
            result = server.call("issue_urls", archive=str(archive), check="test-error-page", state="fixed")
            data = json.loads(result.content[0].text)
            assert [(i["url"], i["state"]) for i in data["items"]] == [(SITE + "/gone", "fixed")]
        finally:
            server.close()
