"""The `issues` and `issue-urls` queries on a real three-commit archive: new, fixed, persisting, regressed."""

from __future__ import annotations

import pytest
from archives import SITE, build_archive

from nitpicker_core import (
    Check,
    Finding,
    ScrapeResult,
    UsageError,
    Violation,
    check_registry,
    hookimpl,
    query_registry,
    run_query,
)
from nitpicker_core.archive import open_archive
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.indexing import index_analysis
from nitpicker_core.plugins import make_plugin_manager


def page(path: str, title: str, status: int = 200) -> ScrapeResult:
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": title, "lang": "en"},
        html=f"<html><head><title>{title}</title></head><body></body></html>",
    )


#: (pages) of commits 1, 2 and 3: /old is 404 in 1, fixed in 2, broken again in 3 (regressed)
COMMITS = [
    [page("/", "Home"), page("/about", "About"), page("/missing", "Gone", 404), page("/old", "Old", 404)],
    [
        page("/", "Home"),
        page("/about", "About us"),
        page("/missing", "Gone", 404),
        page("/old", "Old page"),
        page("/new", "New", 404),
    ],
    [
        page("/", "Home"),
        page("/about", "About us"),
        page("/missing", "Back again"),
        page("/old", "Old", 404),
        page("/new", "New", 404),
    ],
]


def error_pages(ctx):
    for p in ctx.reader.pages(ctx.commit):
        if p["status"] and p["status"] >= 400:
            yield Finding(p["url"], str(p["status"]))


def short_titles(ctx):
    for row in ctx.query("pages"):
        if row.get("title") and len(row["title"]) < 5:
            yield Finding(row["url"], row["title"])


def demo_rule(rule):
    def findings(ctx):
        for v in ctx.reader.violations(ctx.commit, "demo"):
            if v["rule"] == rule:
                yield Finding(v["url"], v["snippet"])

    return findings


def broken(ctx):
    raise RuntimeError("this check is broken\nsecond line")


CHECKS = [
    Check(
        "error-page",
        "4xx/5xx pages",
        "links",
        "high",
        "Pages answering an error.",
        "Fix or redirect them.",
        help_url="https://example.test/error-page",
        findings=error_pages,
    ),
    Check(
        "short-title",
        "Short title",
        "metadata",
        "medium",
        "Titles under five characters.",
        "Write a longer title.",
        findings=short_titles,
        defect="title-short",
    ),
    Check(
        "demo/short-title",
        "Short title (demo)",
        "metadata",
        "low",
        "",
        "",
        findings=demo_rule("short-title"),
        defect="title-short",
        analyzer="demo",
    ),
    Check(
        "demo/bad-thing",
        "A bad thing",
        "markup",
        "critical",
        "Something bad.",
        "Remove it.",
        findings=demo_rule("bad-thing"),
        analyzer="demo",
    ),
    Check("quiet", "Never finds anything", "content", "info", "", ""),
    Check("broken-check", "Raises", "content", "low", "", "", findings=broken),
    Check("wrong-type", "Yields tuples", "content", "info", "", "", findings=lambda ctx: [(SITE + "/", "x")]),
]


class Checks:
    @hookimpl
    def register_checks(self, register):
        for check in CHECKS:
            register(check)


def analyse(target, commit: int, version: str, violations: dict[str, list[Violation]]) -> None:
    """Record a finished run of the analyzer "demo" on ``commit`` with ``violations`` per path."""
    w = ArchiveWriter.open(target)
    w.begin_analysis(commit, "demo", version, {})
    for path, found in violations.items():
        w.put_analysis(commit, "demo", SITE + path, {}, found)
    w.finish_analysis(commit, "demo", "complete")
    index_analysis(w, commit, "demo", make_plugin_manager())  # what `nitpicker analyze` does next
    w.write()
    w.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    target = tmp_path_factory.mktemp("issues") / "site.nitpicker"
    for pages in COMMITS:
        build_archive(target, pages)
    analyse(
        target,
        1,
        "1.0",
        {
            "/": [Violation("bad-thing", "m", snippet="<blink>")],
            "/about": [Violation("bad-thing", "m", snippet="<marquee>")],
        },
    )
    analyse(
        target,
        2,
        "2.0",
        {
            "/": [Violation("bad-thing", "m", snippet="<blink>")],
            "/new": [
                Violation("bad-thing", "m", snippet="<font>"),
                Violation("short-title", "m", snippet="New"),
            ],
        },
    )
    return target  # commit 3 is never analysed


@pytest.fixture
def ask(pm, archive):
    pm.add_plugin(Checks(), "test-checks")
    registry = query_registry(pm)

    def ask(name, commit=None, **params):
        with open_archive(archive) as reader:
            return run_query(registry, reader, name, params, commit)

    return ask


MINE = {c.id for c in CHECKS} | {"title-short"}


def rows(answer):
    return {r["id"]: r for r in answer["items"]}


def ids(answer):
    """Row ids of the test's own checks (built-in checks are registered too), in answer order."""
    return [r["id"] for r in answer["items"] if r["id"] in MINE]


def urls(answer, state=None):
    return sorted(
        (i["url"].removeprefix(SITE), i["detail"])
        for i in answer["items"]
        if state is None or i["state"] == state
    )


def test_crawl_check_between_a_commit_and_its_parent(ask):
    answer = ask("issues", commit=2)
    assert (answer["commit"], answer["base"]) == (2, 1)
    row = rows(answer)["error-page"]
    assert {k: row[k] for k in ("findings", "urls", "new", "fixed", "persisting", "regressed", "state")} == {
        "findings": 2,
        "urls": 2,
        "new": 1,
        "fixed": 1,
        "persisting": 1,
        "regressed": 0,
        "state": "ok",
    }
    assert row["help"] == {
        "description": "Pages answering an error.",
        "fix": "Fix or redirect them.",
        "help_url": "https://example.test/error-page",
    }
    assert urls(ask("issue-urls", commit=2, check="error-page", state="new")) == [("/new", "404")]
    assert urls(ask("issue-urls", commit=2, check="error-page", state="fixed")) == [("/old", "404")]
    assert urls(ask("issue-urls", commit=2, check="error-page", state="persisting")) == [("/missing", "404")]


def test_a_finding_fixed_before_the_base_and_back_now_is_regressed(ask):
    answer = ask("issues")  # HEAD (3) against 2; /old was 404 in 1, fine in 2, 404 again in 3
    assert (answer["commit"], answer["base"]) == (3, 2)
    row = rows(answer)["error-page"]
    assert (row["new"], row["fixed"], row["persisting"], row["regressed"]) == (1, 1, 1, 1)
    listed = ask("issue-urls", check="error-page", state="all")
    assert [(i["url"].removeprefix(SITE), i["state"], i["regressed"]) for i in listed["items"]] == [
        ("/old", "new", True),
        ("/new", "persisting", False),
        ("/missing", "fixed", False),
    ]
    # by default the list is the commit's findings: as many as the row counts
    assert len(ask("issue-urls", check="error-page")["items"]) == row["findings"] == 2


def test_any_two_commits_and_a_base_equal_to_the_commit(ask):
    row = rows(ask("issues", commit=3, base="1"))["error-page"]
    assert (row["new"], row["fixed"], row["persisting"]) == (1, 1, 1)  # /new new, /missing fixed, /old kept
    same = rows(ask("issues", commit=2, base="2"))
    assert (same["error-page"]["new"], same["error-page"]["fixed"], same["error-page"]["persisting"]) == (
        0,
        0,
        2,
    )
    assert urls(ask("issue-urls", commit=2, base="2", check="error-page", state="persisting")) == [
        ("/missing", "404"),
        ("/new", "404"),
    ]


def test_the_first_commit_has_no_base_and_everything_is_new(ask):
    answer = ask("issues", commit=1)
    assert answer["base"] is None and answer["base_note"] == "no earlier commit: every finding is new"
    row = rows(answer)["error-page"]
    assert (row["findings"], row["new"], row["fixed"], row["persisting"]) == (2, 2, 0, 0)


def test_an_analyzer_check_on_a_commit_never_analysed_is_not_zero(ask):
    row = rows(ask("issues"))["demo/bad-thing"]
    assert row["state"] == "not_analysed"
    assert (row["findings"], row["new"], row["fixed"], row["persisting"], row["urls"]) == (None,) * 5
    listed = ask("issue-urls", check="demo/bad-thing")
    assert listed["check_state"] == "not_analysed" and listed["items"] == []


def test_an_analyzer_check_between_analysed_commits_and_the_tool_change_note(ask):
    answer = ask("issues", commit=2)
    row = rows(answer)["demo/bad-thing"]
    assert (row["findings"], row["new"], row["fixed"], row["persisting"]) == (2, 1, 1, 1)
    assert urls(ask("issue-urls", commit=2, check="demo/bad-thing", state="new")) == [("/new", "<font>")]
    assert urls(ask("issue-urls", commit=2, check="demo/bad-thing", state="fixed")) == [
        ("/about", "<marquee>")
    ]
    assert (
        "demo (1.0 → 2.0)" in answer["base_note"]
        and "may come from the tool, not the site" in answer["base_note"]
    )
    assert row["base_note"].startswith("demo 1.0 → 2.0: ")
    assert rows(answer)["error-page"]["base_note"] is None
    # commit 3 against 1: demo ran on 1 only; commit 1 against 3 (any two commits): demo did not run on 3
    assert rows(ask("issues", commit=3, base="1"))["demo/bad-thing"]["state"] == "not_analysed"
    back = ask("issues", commit=1, base="3")
    row = rows(back)["demo/bad-thing"]
    assert (row["state"], row["findings"], row["new"], row["fixed"]) == ("ok", 2, None, None)
    assert row["base_note"] == "demo did not run on the base: nothing to compare"
    assert back["base_note"] == "not analysed on the base, so without new/fixed: demo"


def test_checks_sharing_a_defect_are_one_row_counting_urls(ask):
    answer = ask("issues", commit=2)
    assert "short-title" not in rows(answer) and "demo/short-title" not in rows(answer)
    row = rows(answer)["title-short"]
    assert row["sources"] == ["short-title", "demo/short-title"] and row["title"] == "Short title"
    assert row["priority"] == "medium"  # the most severe of its sources
    # short titles: commit 1 Home, Gone, Old; commit 2 Home, Gone, New (crawl) and /new (demo): by URL
    assert (row["findings"], row["new"], row["fixed"], row["persisting"]) == (3, 1, 1, 2)
    assert row["source_counts"]["demo/short-title"]["findings"] == 1
    assert row["source_counts"]["short-title"]["new"] == 1
    # one row per defect (a plugin's own defect key: one per page), the sources that found it listed on it
    listed = ask("issue-urls", commit=2, check="title-short", state="new")
    assert [(i["url"].removeprefix(SITE), i["check"], i["sources"]) for i in listed["items"]] == [
        ("/new", "title-short", ["short-title", "demo/short-title"])
    ]
    assert row["found_by"] == ["short-title", "demo/short-title"]
    # a source id alone lists that source's findings only
    assert urls(ask("issue-urls", commit=2, check="demo/short-title")) == [("/new", "New")]


def test_rows_are_sorted_by_priority_then_findings_and_filters_apply(ask):
    answer = ask("issues", commit=2)
    assert ids(answer) == [
        "demo/bad-thing",
        "error-page",
        "title-short",
        "broken-check",
        "quiet",
        "wrong-type",
    ]
    assert ids(ask("issues", commit=2, priority="high")) == ["demo/bad-thing", "error-page"]
    assert {r["priority"] for r in ask("issues", commit=2, priority="high")["items"]} <= {"critical", "high"}
    metadata = ask("issues", commit=2, category="metadata")
    assert ids(metadata) == ["title-short"] and {r["category"] for r in metadata["items"]} == {"metadata"}
    assert ids(ask("issues", commit=2, state="fixed")) == ["demo/bad-thing", "error-page", "title-short"]
    order = [
        (["critical", "high", "medium", "low", "info"].index(r["priority"]), -(r["findings"] or 0))
        for r in answer["items"]
    ]
    assert order == sorted(order)
    assert rows(answer)["quiet"]["findings"] == 0


def test_a_failing_check_is_its_own_error_row(ask):
    row = rows(ask("issues", commit=2))["broken-check"]
    assert row["state"] == "error" and row["error"] == "RuntimeError: this check is broken"
    assert row["findings"] is None
    wrong = rows(ask("issues", commit=2))["wrong-type"]
    assert (wrong["state"], wrong["error"]) == (
        "error",
        "TypeError: findings gave a tuple, not a nitpicker_core.Finding",
    )


def test_paging_and_unknown_check_ids(ask):
    first = ask("issue-urls", commit=2, check="error-page", state="all", limit=2)
    assert first["total"] == 3 and len(first["items"]) == 2 and first["next_offset"] == 2
    rest = ask("issue-urls", commit=2, check="error-page", state="all", limit=2, offset=2)
    assert len(rest["items"]) == 1 and rest["next_offset"] is None
    with pytest.raises(UsageError, match=r"^no check 'error-pages'; closest: error-page(, [a-z/-]+)*$"):
        ask("issue-urls", check="error-pages")
    with pytest.raises(
        UsageError, match=r"^parameter 'state' must be one of new, persisting, fixed, gone, all"
    ):
        ask("issue-urls", check="error-page", state="vanished")


def test_a_finding_fingerprint_survives_recrawl_of_an_unchanged_site(ask):
    listed = ask("issue-urls", commit=3, check="error-page", state="persisting")
    again = ask("issue-urls", commit=2, check="error-page", state="new")
    assert [i["fingerprint"] for i in listed["items"]] == [i["fingerprint"] for i in again["items"]]


def test_the_check_registry_sees_the_test_checks(pm):
    pm.add_plugin(Checks(), "test-checks")
    assert set(check_registry(pm).names()) >= {c.id for c in CHECKS}


def test_verdict_issue_specs_on_the_archive(pm, archive):
    from nitpicker_core.pipeline import verdict

    pm.add_plugin(Checks(), "test-checks")
    registry = query_registry(pm)
    specs = [
        verdict.parse(s)
        for s in (
            "new:error-page",
            "error-page",
            "new:demo/short-title",
            "title-short",
            "violations>0",
            "new:quiet",
        )
    ]
    with open_archive(archive) as reader:
        result = verdict.evaluate(specs, reader, 2, registry)
        again = verdict.evaluate(specs[:1], reader, 2, registry, base="2")
    checks = {c["check"]: c for c in result["checks"]}
    assert checks["new:error-page"] == {
        "check": "new:error-page",
        "value": 1,
        "failed": True,
        "failing": ["error-page"],
    }
    assert checks["error-page"]["value"] == 2
    assert checks["new:demo/short-title"]["value"] == 1  # one source of a merged row counts alone
    assert checks["title-short"]["value"] == 3  # the merged row counts URLs
    assert checks["violations>0"]["failed"] is True and checks["new:quiet"]["failed"] is False
    assert result["passed"] is False and again["passed"] is True
    with pytest.raises(
        UsageError, match=r"^--fail-on new:eror-page: no check 'eror-page'; closest: error-page"
    ):
        verdict.check_known([verdict.parse("new:eror-page")], verdict.known_checks(pm))
    verdict.check_known(specs, verdict.known_checks(pm))  # defect keys and source ids are known
    with (
        open_archive(archive) as reader,
        pytest.raises(UsageError, match=r"^--fail-on quite: no check 'quite'"),
    ):
        verdict.evaluate([verdict.parse("quite")], reader, 2, registry)  # never a silent pass


def test_a_check_whose_id_is_another_checks_defect_key_joins_that_row(pm, archive):
    joined = Check(
        "title-short", "Title short (third party)", "metadata", "low", "", "", findings=short_titles
    )
    pm.add_plugin(Checks(), "test-checks")
    pm.add_plugin(
        type("More", (), {"register_checks": hookimpl(lambda self, register: register(joined))})(),
        "more-checks",
    )
    with open_archive(archive) as reader:
        answer = run_query(query_registry(pm), reader, "issues", {}, 2)
    assert [r["sources"] for r in answer["items"] if r["id"] == "title-short"] == [
        ["short-title", "title-short", "demo/short-title"]
    ]


def test_the_viewer_api_serves_the_issues_queries(pm, archive):
    from nitpicker_viewer.app import create_app

    pm.add_plugin(Checks(), "test-checks")
    client = create_app(archive, pm).test_client()
    answer = client.get("/api/issues?commit=2&category=links").get_json()
    assert (answer["commit"], answer["base"]) == (2, 1) and rows(answer)["error-page"]["new"] == 1
    listed = client.get("/api/issue-urls?commit=2&check=error-page&state=fixed").get_json()
    assert urls(listed) == [("/old", "404")]
    unknown = client.get("/api/issue-urls?check=error-pages")
    assert unknown.status_code == 404 and "closest: error-page" in unknown.get_data(as_text=True)


def test_a_bad_or_unknown_base_is_one_line(ask):
    from nitpicker_core import ArchiveError

    with pytest.raises(
        UsageError, match=r"^parameter 'base' must be a commit id or \"HEAD\", got 'last week'$"
    ):
        ask("issues", base="last week")
    with pytest.raises(ArchiveError, match=r"^site.nitpicker has no commit 99$"):
        ask("issue-urls", check="error-page", base="99")
    assert ask("issues", base="HEAD")["base"] == 3  # HEAD against itself
