"""The shipped test kit (nitpicker_testing) from nitpicker's own suite: its fixtures are active here too."""

from __future__ import annotations

import pytest

from nitpicker_core import (
    Analyzer,
    Column,
    CrawlErrorRecord,
    NitpickerError,
    PageReport,
    Resource,
    Violation,
    hookimpl,
)
from nitpicker_core.archive import open_archive

SITE = "http://kit.test"


class Echo(Analyzer):
    """Says what it got; misbehaves on request, so the kit's error path is seen."""

    name = "echo"
    columns = (Column("kind", "HTML kind"),)

    def each_page(self, page):
        if "raise" in page.html:
            raise ValueError("asked to fail")
        if "wrong" in page.html:
            return {"kind": page.html_kind}  # a dict, not a PageReport
        return PageReport(
            {"kind": page.html_kind, "title": page.metadata.get("title")},
            [Violation("seen", page.url, "info")],
        )


class SourceEcho(Echo):
    name = "echo-source"
    reads = "source"


class EchoPlugin:
    @hookimpl
    def register_analyzers(self, register):
        register(Echo())
        register(SourceEcho())


@pytest.fixture
def nitpicker_plugins():
    return {"echo-plugin": EchoPlugin()}


def test_page_resolves_links_and_builds_html():
    from nitpicker_testing.archives import page

    result = page(SITE + "/a/b", title="B", links=["../c#top", "https://other.test/"])
    assert [(a.href, a.fragment, a.raw_href) for a in result.anchors] == [
        (SITE + "/c", "top", "../c#top"),
        ("https://other.test/", "", "https://other.test/"),
    ]
    assert "<title>B</title>" in result.html and result.metadata == {"title": "B"}
    assert page("https://other.test/", external=True).html is None


def test_the_builder_stores_every_kind_of_event(nitpicker_pm, tmp_path):
    from nitpicker_testing.archives import archive_builder

    path = tmp_path / "events.nitpicker"
    with archive_builder(path, pm=nitpicker_pm, roots=[SITE + "/"]) as build:
        build.page({"url": SITE + "/", "title": "Home", "links": ["/gone"]})
        build.skipped(SITE + "/private", "blocked by robots.txt")
        build.resource(Resource(SITE + "/style.css", status=200, content_type="text/css"), SITE + "/")
        build.error(CrawlErrorRecord(SITE + "/gone", "http", "404 twice", "fetch"))
    with open_archive(path) as reader:
        pages = {p["url"]: p for p in reader.pages()}
        assert pages[SITE + "/"]["title"] == "Home" and pages[SITE + "/private"]["is_skipped"]
        assert pages[SITE + "/private"]["skip_reason"] == "blocked by robots.txt"
        assert [r["url"] for r in reader.resources()] == [SITE + "/style.css"]
        assert [(e["url"], e["kind"]) for e in reader.crawl_errors()] == [(SITE + "/gone", "http")]
        assert [c["status"] for c in reader.commits()] == ["complete"]


def test_a_failing_build_leaves_no_archive(nitpicker_pm, tmp_path):
    from nitpicker_testing.archives import archive_builder

    path = tmp_path / "failed.nitpicker"
    with pytest.raises(RuntimeError, match="half-way"), archive_builder(path, pm=nitpicker_pm) as build:
        build.page({"url": SITE + "/"})
        raise RuntimeError("half-way")
    assert not path.exists()


def test_analyze_gives_cells_findings_and_metadata(nitpicker_analyze):
    result = nitpicker_analyze("echo", "<p>hi</p>", url=SITE + "/x", metadata={"title": "X"})
    assert result.cells == {"kind": "rendered", "title": "X"}
    assert result.violations == [Violation("seen", SITE + "/x", "info", url=SITE + "/x", analyzer="echo")]
    assert result.errors == [] and result.summary["mode"] == "serial"  # a plugin given by object: in-process


def test_analyze_gives_a_source_reader_the_sent_html(nitpicker_analyze):
    assert nitpicker_analyze("echo-source", "<p>rendered</p>", source="<p>sent</p>").cells["kind"] == "source"
    # without the server's HTML the engine falls back to the rendered DOM, and says so
    fallback = nitpicker_analyze("echo-source", "<p>rendered</p>")
    assert fallback.cells["kind"] == "rendered" and fallback.summary["source_missing"] == 1


def test_an_analyzers_failures_are_its_error_rows(nitpicker_analyze):
    raised = nitpicker_analyze("echo", "<p>raise</p>")
    assert raised.cells == {} and raised.errors == ["ValueError: asked to fail"]
    assert len(raised.tracebacks) == 1 and 'raise ValueError("asked to fail")' in raised.tracebacks[0]
    wrong = nitpicker_analyze("echo", "<p>wrong</p>")
    assert len(wrong.errors) == 1 and "not a PageReport" in wrong.errors[0], wrong.errors


def test_unknown_analyzers_and_settings_fail_in_one_line(nitpicker_analyze):
    with pytest.raises(NitpickerError, match="unknown analyzer 'nope'"):
        nitpicker_analyze("nope", "<p></p>")
    with pytest.raises(NitpickerError, match="declares no setting 'depth'"):
        nitpicker_analyze("echo", "<p></p>", settings={"depth": 2})


def test_query_and_viewer_over_the_demo_site(nitpicker_archive, nitpicker_query, nitpicker_viewer):
    archive = nitpicker_archive()
    assert nitpicker_query(archive, "analyzer-errors")["total"] == 0
    with pytest.raises(NitpickerError, match="unknown query"):
        nitpicker_query(archive, "no-such-query")
    client = nitpicker_viewer(archive)
    home = client.get("/")
    assert home.status_code == 200 and "site.nitpicker" in home.get_data(as_text=True)
