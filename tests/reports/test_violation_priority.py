"""The `violations` query on the one priority scale: a priority per row, a filter reaching every analyzer."""

from __future__ import annotations

import json

import pytest
from archives import SITE, build_archive
from support import run_cli

from nitpicker_core import PRIORITIES, SEVERITY_PRIORITY, ScrapeResult, priority_of

# axe's impacts, markup/text levels, one in capitals, and a severity no analyzer declares
SEVERITIES = ("critical", "serious", "moderate", "minor", "error", "warning", "info", "ERROR", "Weird")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """One page with a violation of every severity above, from two analyzers (as axe and markup would)."""
    from nitpicker_core import Analyzer, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    path = build_archive(
        tmp_path_factory.mktemp("priority") / "site.nitpicker",
        [
            ScrapeResult(
                url=SITE + "/",
                status=200,
                content_type="text/html",
                metadata={"title": "Home"},
                html="<!doctype html><html lang='en'><head><title>Home</title></head><body><p>x</p></body></html>",
            )
        ],
    )

    class Graded(Analyzer):
        def __init__(self, name: str, severities: tuple[str, ...]) -> None:
            self.name, self.severities = name, severities

        def each_page(self, page):
            return PageReport(
                {}, [Violation(f"rule-{s.lower()}", f"a {s} finding", s, "body") for s in self.severities]
            )

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Graded("impacts", SEVERITIES[:4]))
            register(Graded("levels", SEVERITIES[4:]))

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "graded-plugin")
    run_analyze(pm, load_config(pm, data={}), path, ["impacts", "levels"], commit=None)
    return path


def query(archive, *args, ok=True):
    result = run_cli("query", str(archive), "violations", *args, cwd=archive.parent)
    assert (result.returncode == 0) == ok, result.stderr
    return json.loads(result.stdout) if ok else result


def test_every_row_carries_its_priority_as_priority_of_says(archive):
    rows = query(archive, "--limit", "100")["items"]
    assert sorted(r["severity"] for r in rows) == sorted(SEVERITIES)
    assert {r["severity"]: r["priority"] for r in rows} == {s: priority_of(s) for s in SEVERITIES}
    # the SQL mapping is built from the core's one table: every severity there maps the same way
    assert set(SEVERITY_PRIORITY) <= {s.lower() for s in SEVERITIES}
    assert {r["severity"]: r["priority"] for r in rows}["Weird"] == "medium"


def test_priority_filter_reaches_every_analyzer(archive):
    high = query(archive, "--priority", "high")
    assert high["total"] == 3
    assert sorted((r["analyzer"], r["severity"]) for r in high["items"]) == [
        ("impacts", "serious"),
        ("levels", "ERROR"),
        ("levels", "error"),
    ]
    for priority in PRIORITIES:  # each row is in exactly one priority's answer
        answer = query(archive, "--priority", priority)
        assert answer["total"] == sum(priority_of(s) == priority for s in SEVERITIES)
        assert {r["priority"] for r in answer["items"]} <= {priority}
    assert query(archive, "--priority", "high", "--analyzer", "impacts")["total"] == 1
    grouped = query(archive, "--priority", "medium", "--group-by-rule", "true")["items"]
    assert sorted((g["rule"], g["priority"], g["count"]) for g in grouped) == [
        ("rule-moderate", "medium", 1),
        ("rule-warning", "medium", 1),
        ("rule-weird", "medium", 1),
    ]


def test_sort_by_priority_puts_the_most_severe_first(archive):
    ranked = [r["priority"] for r in query(archive, "--sort", "priority")["items"]]
    assert ranked == sorted(ranked, key=PRIORITIES.index) and ranked[0] == "critical"
    reverse = [r["priority"] for r in query(archive, "--sort", "priority", "--order", "desc")["items"]]
    assert reverse == ranked[::-1]


def test_an_unknown_priority_is_one_line_naming_the_scale(archive):
    result = query(archive, "--priority", "serious", ok=False)
    assert result.returncode == 1
    line = result.stderr.strip()
    assert "\n" not in line and all(p in line for p in PRIORITIES), line
