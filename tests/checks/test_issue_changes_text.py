"""`issue-changes` and its text on a three-commit archive built without a crawl: regressed findings are listed
on their own, and lists past their limits end with the command that lists the rest."""

from __future__ import annotations

import shlex

import pytest
from archives import SITE, build_archive
from support import run_cli

from nitpicker_cli.changes import change_lines
from nitpicker_core import Anchor, ScrapeResult
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

TARGETS = ("/a", "/b", "/c", "/d", "/e")
# the 404s of commits 1, 2, 3: /a and /b are fixed in 2 and back in 3 (regressed), /c … /e are new in 3
BROKEN = ({"/a", "/b"}, set(), {"/a", "/b", "/c", "/d", "/e"})


def _page(path: str, status: int, links: tuple[str, ...] = ()) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": f"Page {path}", "lang": "en"},
        html=f"<html lang='en'><head><title>Page {path}</title></head><body><h1>x</h1></body></html>",
        anchors=[Anchor(SITE + href, href) for href in links],
    )


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    target = tmp_path_factory.mktemp("issue-changes") / "site.nitpicker"
    for broken in BROKEN:
        build_archive(
            target, [_page("/", 200, TARGETS), *(_page(p, 404 if p in broken else 200) for p in TARGETS)]
        )
    return target


def changes(archive, commit=None, **params):
    with open_archive(archive) as reader:
        return run_query(query_registry(make_plugin_manager()), reader, "issue-changes", params, commit)


def test_regressed_findings_are_named_apart_from_the_other_new_ones(archive):
    answer = changes(archive)
    [broken] = [item for item in answer["regressed"]["items"] if item["check"] == "broken-link"]
    assert [(u["url"], u["detail"]) for u in broken["urls"]] == [
        (SITE + "/", SITE + "/a"),
        (SITE + "/", SITE + "/b"),
    ]
    lines = change_lines(answer, "site.nitpicker")
    regressed = lines.index(
        next(line for line in lines if line.startswith("Regressed (fixed before, back now) "))
    )
    assert lines[regressed + 1].split()[:3] == ["high", "broken-link", "(2):"]
    new = next(line for line in lines if line.split()[:2] == ["high", "broken-link"])
    # among the new ones, the regressed are marked; past three URLs, how many more
    assert new.count("[regressed]") == 2 and new.endswith("and 2 more")


def test_past_the_limits_the_lines_give_the_commands_that_list_the_rest(archive, tmp_path):
    answer = changes(archive, "3", urls=1, limit=1, base="2")
    lines = change_lines(answer, archive, "3", "2")
    commands = [
        line.split(": ", 1)[1]
        for line in lines
        if line.lstrip().startswith(("all: ", "and ")) and "nitpicker query" in line
    ]
    assert commands[0] == shlex.join(
        [
            "nitpicker",
            "query",
            str(archive),
            "issue-urls",
            "--check",
            "broken-link",
            "--state",
            "new",
            "--commit",
            "3",
            "--base",
            "2",
        ]
    )
    more_checks = next(c for c in commands if " issues " in c)
    # one check has new findings (the 404s are broken-link's alone); the findings of the pages that answer
    # 404 now went with them (gone, not fixed), of seven checks
    assert more_checks == shlex.join(
        ["nitpicker", "query", str(archive), "issues", "--state", "gone", "--commit", "3", "--base", "2"]
    )
    for command in (commands[0], more_checks):  # each runs and lists what the lines left out
        done = run_cli(*shlex.split(command)[1:], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert change_lines(changes(archive, "1"), archive) == []  # a first commit: nothing to name
