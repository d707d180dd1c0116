"""The check framework: registering checks, their validation, fingerprints and the CheckContext."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import PRIORITIES, Check, CheckContext, Finding, fingerprint, hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.registries import check_registry, query_registry


def titles(ctx: CheckContext):
    """A finding per page of the commit whose title is shorter than six characters."""
    for row in ctx.query("pages"):
        if row.get("title") and len(row["title"]) < 6:
            yield Finding(row["url"], row["title"])


SHORT = Check(
    "short-title",
    "Short title",
    "metadata",
    "medium",
    "Titles under six characters.",
    "Write a longer title.",
    findings=titles,
)


class Checks:
    def __init__(self, *checks: Check) -> None:
        self.checks = checks

    @hookimpl
    def register_checks(self, register):
        for check in self.checks:
            register(check)


def test_hook_register_checks(pm, tmp_path):
    pm.add_plugin(Checks(SHORT), "my-checks")
    registry = check_registry(pm)
    assert registry["short-title"] is SHORT and registry.plugin_of("short-title") == "my-checks"
    archive = build_archive(tmp_path / "a.nitpicker")
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(), query_registry(pm))
        assert sorted(SHORT.findings(ctx)) == [
            Finding(SITE + "/", "Home"),
            Finding(SITE + "/about", "About"),
            Finding(SITE + "/blog/", "Blog"),
        ]


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (Check("Bad_Id", "t", "links", "high", "", ""), "invalid name 'Bad_Id'"),
        (Check("a/b/c", "t", "links", "high", "", ""), "invalid name 'a/b/c'"),
        (Check("ok", "t", "links", "serious", "", ""), "priority 'serious' (one of critical, high"),
        (Check("ok", "t", "Links!", "high", "", ""), "invalid category 'Links!'"),
        (Check("ok", "t", "links", "high", "", "", findings="rows"), "whose findings is not callable"),
        ("not a check", "not a nitpicker_core.Check"),
    ],
)
def test_an_invalid_check_makes_only_its_plugin_unavailable(pm, check, reason):
    pm.add_plugin(Checks(check), "bad-checks")
    pm.add_plugin(Checks(SHORT), "good-checks")
    registry = check_registry(pm)
    assert registry.plugin_of("short-title") == "good-checks"
    assert not [name for name in registry.names() if registry.plugin_of(name) == "bad-checks"]
    assert reason in pm.infos["bad-checks"].status


def test_analyzer_rule_ids_take_one_slash_and_duplicates_are_refused(pm):
    rule = Check("fake/image-alt", "Images without alt", "accessibility", "critical", "", "")
    pm.add_plugin(Checks(rule), "rules")
    pm.add_plugin(Checks(Check("fake/image-alt", "again", "accessibility", "low", "", "")), "dupe")
    registry = check_registry(pm)
    assert registry.plugin_of("fake/image-alt") == "rules" and registry["fake/image-alt"] is rule
    assert "registered twice" in pm.infos["dupe"].status


def test_fingerprint_is_the_check_url_and_detail_only():
    a = fingerprint("broken-link", Finding("http://x/", "http://x/gone"))
    assert a == fingerprint("broken-link", Finding("http://x/", "http://x/gone"))
    assert len(a) == 64 and int(a, 16) >= 0
    assert a != fingerprint("broken-link", Finding("http://x/", "http://x/gone2"))
    assert a != fingerprint("redirect-link", Finding("http://x/", "http://x/gone"))
    # the separator keeps (url, detail) pairs apart that concatenate to the same text
    assert fingerprint("c", Finding("ab", "c")) != fingerprint("c", Finding("a", "bc"))


def test_priorities_are_one_scale_most_severe_first():
    assert PRIORITIES == ("critical", "high", "medium", "low", "info")


def test_fail_on_issue_specs_parse_and_metric_thresholds_still_do():
    from nitpicker_core import UsageError
    from nitpicker_core.pipeline.verdict import IssueSpec, Threshold, parse

    assert parse("new:high") == IssueSpec("new:high", True, "high", None)
    assert parse(" high ") == IssueSpec("high", False, "high", None)
    assert parse("broken-link") == IssueSpec("broken-link", False, None, "broken-link")
    assert parse("new:axe/image-alt") == IssueSpec("new:axe/image-alt", True, None, "axe/image-alt")
    assert parse("violations>0") == Threshold("violations>0", "violations", None, ">", 0)
    for bad in ("new:", "High", "new:new:high", "axe/a/b", "new high", "broken-links>", ""):
        with pytest.raises(UsageError, match=r"new:PRIORITY, PRIORITY, CHECK-ID or new:CHECK-ID") as info:
            parse(bad)
        assert "\n" not in str(info.value)


def test_analysed_means_a_finished_run_even_with_page_errors(pm, tmp_path):
    from nitpicker_core.archive.writer import ArchiveWriter

    archive = build_archive(tmp_path / "a.nitpicker")
    w = ArchiveWriter.open(archive)
    for name, status in (("clean", "complete"), ("bumpy", "complete-with-errors"), ("cut", None)):
        w.begin_analysis(1, name, "1", {})
        if status:
            w.finish_analysis(1, name, status)
    w.write()
    w.close()
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, 1)
        assert [ctx.analysed(n) for n in ("clean", "bumpy", "cut", "never")] == [True, True, False, False]


def test_register_checks_gets_the_registered_analyzers(pm):
    seen = []

    class Rules:
        @hookimpl
        def register_checks(self, register, analyzers):
            seen.extend(a.name for a in analyzers)
            for a in analyzers:
                register(
                    Check(
                        f"{a.name}/any", f"Anything {a.name} finds", "markup", "low", "", "", analyzer=a.name
                    )
                )

    pm.add_plugin(Rules(), "rule-checks")
    registry = check_registry(pm)
    assert "markup" in seen and "markup/any" in registry and registry["markup/any"].analyzer == "markup"
