"""An update names what changed: the new, fixed and regressed findings by check with their URLs (the
`issue-changes` query, the summary after `crawl --update`, `nitpicker issues` as text), over a real crawl pair
of /change-named/ (see test_server/routes/change_named.py)."""

from __future__ import annotations

import json
import shlex

import pytest
from support import run_cli

from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

pytestmark = pytest.mark.browser

HEADERS = (
    "missing-content-security-policy",
    "missing-x-frame-options",
    "missing-permissions-policy",
    "missing-referrer-policy",
    "missing-x-content-type-options",
)


def ask(archive, name: str, **params):
    with open_archive(archive) as reader:
        return run_query(query_registry(make_plugin_manager()), reader, name, params)


def test_issue_changes_lists_each_check_with_its_first_urls_most_severe_first(change_pair):
    root = change_pair["root"]
    changes = ask(change_pair["archive"], "issue-changes")
    issues = ask(change_pair["archive"], "issues")["items"]
    assert (changes["commit"], changes["base"]) == (2, 1)
    for state in ("new", "fixed"):  # the same counts as the issues query
        assert changes[state]["findings"] == sum(row[state] or 0 for row in issues)
        assert changes[state]["checks"] == sum(1 for row in issues if row[state])
    new = {item["check"]: item for item in changes["new"]["items"]}
    first = changes["new"]["items"][0]
    # the two new broken links lead, before the 25 security-header findings of the five added pages
    assert first["check"] == "broken-link" and first["count"] == 2
    assert {(u["url"], u["detail"]) for u in first["urls"]} == {(root, root + "b"), (root, root + "gone-2")}
    csp = new["missing-content-security-policy"]
    assert (csp["count"], len(csp["urls"]), csp["more"]) == (5, 3, 2)
    assert {u["url"] for u in csp["urls"]} < {root + f"n{i}" for i in range(1, 6)}
    assert all(new[check]["same_as"] == "missing-content-security-policy" for check in HEADERS[1:])
    fixed = {item["check"]: item for item in changes["fixed"]["items"]}
    assert [(u["url"], u["detail"]) for u in fixed["broken-link"]["urls"]] == [(root, root + "gone-1")]
    assert changes["regressed"] == {"findings": 0, "checks": 0, "items": [], "more_checks": 0}


def test_issue_changes_keeps_to_its_limits_and_lists_nothing_without_a_base(change_pair):
    archive = change_pair["archive"]
    few = ask(archive, "issue-changes", urls=1, limit=2)
    assert len(few["new"]["items"]) == 2 and few["new"]["more_checks"] == few["new"]["checks"] - 2
    assert all(len(item["urls"]) == 1 and item["more"] == item["count"] - 1 for item in few["new"]["items"])
    with open_archive(archive) as reader:
        first = run_query(query_registry(make_plugin_manager()), reader, "issue-changes", {}, 1)
    assert first["base"] is None and first["new"]["items"] == [] and first["new"]["findings"] > 0


def test_the_summary_after_an_update_names_the_new_broken_links(change_pair):
    from nitpicker_cli.summary import findings_lines, gather

    root, archive = change_pair["root"], change_pair["archive"]
    said = json.loads(change_pair["update"])  # the update's own summary, as JSON when piped
    assert said["findings"]["changes"]["new"]["items"][0]["check"] == "broken-link"
    lines = findings_lines(gather(make_plugin_manager(), archive)["findings"], archive)
    assert lines[0].startswith("Findings: ") and "since commit 1: " in lines[0]
    assert lines[1].startswith("New since commit 1: ")
    assert lines[2].split() == [
        "high",
        "broken-link",
        "(2):",
        root,
        "→",
        root + "b,",
        root,
        "→",
        root + "gone-2",
    ]
    headers = next(line for line in lines[1:] if "missing-content-security-policy" in line)
    assert headers.split("):")[0].split() == [
        "medium",
        "missing-content-security-policy,",
        "missing-x-frame-options,",
        "viewport-missing",
        "(5",
        "each",
    ]
    assert headers.endswith("and 2 more")
    fixed = next(i for i, line in enumerate(lines) if line.startswith("Fixed since commit 1: "))
    assert lines[fixed + 1].split() == ["high", "broken-link", "(1):", root, "→", root + "gone-1"]


def test_issues_as_text_lists_them_and_the_command_that_lists_the_rest(change_pair):
    root, archive, workdir = change_pair["root"], change_pair["archive"], change_pair["workdir"]
    shown = run_cli("issues", str(archive), "--base", "1", "--table", cwd=workdir)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    new = lines.index(next(line for line in lines if line.startswith("New since commit 1: ")))
    assert lines[new + 1].split()[:3] == ["high", "broken-link", "(2):"] and root + "gone-2" in lines[new + 1]
    command = next(line.split("all: ", 1)[1] for line in lines[new:] if "--check missing-content" in line)
    assert command == (
        f"nitpicker query {archive} issue-urls --check missing-content-security-policy --state new --base 1"
    )
    rest = run_cli(*shlex.split(command)[1:], cwd=workdir)
    assert rest.returncode == 0, rest.stderr
    assert sorted(item["url"] for item in json.loads(rest.stdout)["items"]) == [
        root + f"n{i}" for i in range(1, 6)
    ]
    as_json = run_cli("issues", str(archive), "--base", "1", "--json", cwd=workdir)
    assert set(json.loads(as_json.stdout)) == {"commit", "base", "base_note", "share_of", "total", "items"}


def test_nitpicker_diff_says_per_page_what_changed_in_words(change_pair):
    root, archive, workdir = change_pair["root"], change_pair["archive"], change_pair["workdir"]
    shown = run_cli("diff", str(archive), cwd=workdir)
    assert shown.returncode == 0, shown.stderr
    changes = json.loads(shown.stdout)["changes"]

    def said(page: str) -> list[str]:
        return [item["text"] for item in changes[root + page]["summary"]]

    # a page that became an error page says so first, and what it lost in one line
    assert said("b")[:3] == [
        "now an error page: status 200 → 404",
        "content type text/html → text/plain",
        "no longer has: title, lang, 1 link, 1 heading",
    ]
    assert said("a")[:3] == [
        "title changed from “Page A” to “Page A, renamed”",
        "description removed",
        "3 links added, 1 removed",
    ]
    assert said("c")[0] == f"now redirects to {root}n1 (status 200 → 301)"
    assert said("")[0] == "6 links added, 1 removed"
    assert changes[root + "b"]["fields"]["status"] == [200, 404]  # the raw fields stay as they were
    kinds = [item["change"] for item in changes[root + "b"]["summary"]]
    assert kinds[0] == "became_error" and changes[root + "b"]["summary"][0]["old"] == 200
