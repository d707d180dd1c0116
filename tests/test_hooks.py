"""One test per hook: each is called where the docs say, with the arguments they say."""

from __future__ import annotations

import asyncio
import csv
import json
import time

import click
import flask
import pytest
from archives import SITE, build_archive, demo_pages, storing
from click.testing import CliRunner

from nitpicker_core import (
    Analyzer,
    Column,
    CrawlContext,
    CrawlErrorRecord,
    Destination,
    MenuLink,
    NotConfigured,
    PageReport,
    Query,
    ReportSection,
    Resource,
    ScrapeResult,
    Sheet,
    Violation,
    hookimpl,
)
from nitpicker_core.analyze import run_analyze
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config
from nitpicker_core.indexing import Indexer
from nitpicker_core.query import query_registry, run_query
from nitpicker_core.report import run_report


@pytest.fixture
def archive(tmp_path):
    return build_archive(tmp_path / "site.nitpicker")


# -- lifecycle ---------------------------------------------------------------------------------------


def test_hook_register_settings(bare_pm):
    class P:
        @hookimpl
        def register_settings(self, register):
            register("depth", type="int", default=2, help="how deep")

    bare_pm.add_plugin(P(), "deep")
    config = load_config(bare_pm, data={"plugins": {"deep": {"depth": 4}}})
    assert config.settings_for("deep") == {"depth": 4}
    assert config.settings.plugin_of("deep.depth") == "deep"


def test_hook_configure(bare_pm):
    got = []

    class Early:
        @hookimpl
        def configure(self, config):
            got.append(("early", config))

    class Late:
        @hookimpl
        def configure(self, config):
            got.append(("late", config))

    class Declines:
        @hookimpl
        def configure(self, config):
            raise NotConfigured("missing binary")

    bare_pm.add_plugin(Early(), "early")
    config = load_config(bare_pm, data={})
    bare_pm.configure_plugins(config)
    bare_pm.add_plugin(Late(), "late")  # historic: registered after configure, still configured
    bare_pm.add_plugin(Declines(), "declines")
    assert got == [("early", config), ("late", config)]
    assert bare_pm.get_plugin("declines") is None
    assert bare_pm.infos["declines"].status == "unavailable: missing binary"


def test_hook_unconfigure(bare_pm):
    calls = []

    class P:
        @hookimpl
        def unconfigure(self, config):
            calls.append(config)

    bare_pm.add_plugin(P(), "p")
    config = load_config(bare_pm, data={})
    bare_pm.unconfigure_plugins(config)
    assert calls == []  # never configured, nothing to release
    bare_pm.configure_plugins(config)
    bare_pm.unconfigure_plugins(config)
    bare_pm.unconfigure_plugins(config)
    assert calls == [config]


# -- scrape events -----------------------------------------------------------------------------------


def _crawl(tmp_path) -> CrawlContext:
    return CrawlContext(output=tmp_path / "c.nitpicker", roots=[SITE + "/"], options={"interval": 0})


def test_hook_crawl_started(pm, tmp_path):
    seen = []

    class Observer:
        @hookimpl
        def crawl_started(self, crawl):
            seen.append((crawl.commit, (tmp_path / "c.nitpicker.stub" / "archive.db").exists()))

    pm.add_plugin(Observer(), "observer")
    crawl = _crawl(tmp_path)
    with storing(pm, crawl):  # crawl_open_archive, then crawl_started, as the crawler does
        assert seen == [(1, True)]  # the archive sink is open before crawl_started
        with open_archive(tmp_path / "c.nitpicker.stub") as reader:
            assert reader.commits()[0]["status"] == "running"
            assert reader.info()["roots"] == [SITE + "/"]


def test_hook_crawl_should_skip(pm, tmp_path):
    class Robots:
        @hookimpl(tryfirst=True)
        def crawl_should_skip(self, url, crawl):
            return "blocked by robots.txt" if "/private/" in url else None

    class Excludes:
        @hookimpl
        def crawl_should_skip(self, url):
            return "excluded" if url.endswith(".pdf") or "/private/" in url else None

    pm.add_plugin(Excludes(), "excludes")
    pm.add_plugin(Robots(), "robots")
    ask = pm.hook.crawl_should_skip
    crawl = _crawl(tmp_path)  # the built-in rules have nothing to say before crawl_started
    assert ask(url=SITE + "/private/x.pdf", crawl=crawl) == "blocked by robots.txt"  # first result wins
    assert ask(url=SITE + "/a.pdf", crawl=crawl) == "excluded"
    assert ask(url=SITE + "/a.html", crawl=crawl) is None


def test_hook_crawl_before_navigate(bare_pm):
    seen = []

    class Headers:
        @hookimpl
        async def crawl_before_navigate(self, page, url):
            await asyncio.sleep(0)
            page["headers"] = {"X-Audit": "1"}
            seen.append(url)

    bare_pm.add_plugin(Headers(), "headers")
    page: dict = {}
    results = bare_pm.hook.crawl_before_navigate(page=page, url=SITE + "/", crawl=None)

    async def await_all():
        for result in results:
            if asyncio.iscoroutine(result):
                await result

    asyncio.run(await_all())
    assert page == {"headers": {"X-Audit": "1"}} and seen == [SITE + "/"]


def test_hook_crawl_scrape(bare_pm):
    """The wrapper example in the hookspec's docstring, run as written around an async scrape like the built-in."""
    import inspect
    import textwrap
    import types

    from nitpicker_core import hookspecs

    ran = []

    class Builtin:
        @hookimpl(trylast=True)
        def crawl_scrape(self, url, page, crawl, render):
            async def scrape():
                await asyncio.sleep(0)
                ran.append(url)
                return ScrapeResult(url=url, status=200 if render == "full" else 204, html="<p>hi</p>")

            return scrape()

    example = textwrap.dedent(inspect.getdoc(hookspecs.crawl_scrape).split("::\n", 1)[1])
    timer = types.ModuleType("timer")
    vars(timer).update(hookimpl=hookimpl, inspect=inspect, time=time)  # what the example's module imports
    exec(compile(example, "crawl_scrape example", "exec"), vars(timer))  # noqa: S102 - the documented example
    bare_pm.add_plugin(Builtin(), "builtin")
    bare_pm.add_plugin(timer, "timer")
    returned = bare_pm.hook.crawl_scrape(url=SITE + "/", page=None, crawl=None, render="full")
    assert inspect.isawaitable(returned) and ran == []  # nothing rendered yet: the crawler awaits this
    result = asyncio.run(returned)
    assert isinstance(result, ScrapeResult) and result.status == 200 and ran == [SITE + "/"]
    assert result.extra["scrape_seconds"] >= 0


def test_hook_crawl_parse(bare_pm):
    """The built-in reader (--render never) fills a fetched page's records from its body; another wins first."""
    import types

    import nitpicker_scrape

    body = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title> Read
      without a browser </title><base href="/docs/"><meta name="ROBOTS" content="noindex, follow">
    <link rel="canonical" href="page"><script type="application/ld+json">{"@type": "WebPage"}</script>
    <link rel="stylesheet" href="site.css"><link rel="icon" href="/favicon.ico">
    <noscript><a href="/hidden">no script</a></noscript></head><body>
    <svg><title>not the title</title><a href="/svg-link">svg</a></svg>
    <h1>Hello <b>world</b></h1><a href="next#part" aria-label="Next page">&rarr;</a>
    <a href="mailto:a@b.test">mail</a><a href="/img"><img src="i.png" alt=" Picture "></a>
    <template><a href="/templated">t</a></template></body></html>"""
    crawl = types.SimpleNamespace(
        options={"image": True, "image_presets": ["desktop-compact", "mobile-small"]}
    )
    bare_pm.register(nitpicker_scrape, "scrape")
    fetched = ScrapeResult(url=SITE + "/docs/page", status=200, headers={"content-type": "text/html"})
    result = bare_pm.hook.crawl_parse(result=fetched, body=body, crawl=crawl)
    assert result is fetched and result.html == result.source == body.decode()
    meta = result.metadata
    assert (meta["title"], meta["lang"], meta["charset"], meta["noindex"], meta["nofollow"]) == (
        "Read without a browser",
        "en",
        "utf-8",
        True,
        False,
    )
    assert meta["canonical"] == SITE + "/docs/page" and meta["base_href"] == SITE + "/docs/"
    assert [(a.href, a.fragment, a.text, a.raw_href, a.line) for a in result.anchors] == [
        (SITE + "/docs/next", "part", "Next page", "next#part", 7),
        (SITE + "/img", "", "Picture", "/img", 8),
    ]
    assert [(h.level, h.text) for h in result.headings] == [(1, "Hello world")]
    assert [item.types for item in result.jsonld] == [["WebPage"]]
    assert [(i.src, i.current_src, i.alt, i.viewport_width) for i in result.images] == [
        ("i.png", SITE + "/docs/i.png", " Picture ", 1280),
        ("i.png", SITE + "/docs/i.png", " Picture ", 320),
    ]
    # the favicon too: a rendered page's is asked by the crawler, whenever Chromium would have fetched it
    assert result.resources == [SITE + "/docs/site.css", SITE + "/favicon.ico", SITE + "/docs/i.png"]

    class Mine:
        @hookimpl
        def crawl_parse(self, result, body, crawl):
            result.metadata = {"title": "mine"}
            return result

    bare_pm.register(Mine(), "mine")
    mine = bare_pm.hook.crawl_parse(result=ScrapeResult(url=SITE + "/"), body=body, crawl=crawl)
    assert mine.metadata == {"title": "mine"} and mine.anchors is None


def test_hook_crawl_page_scraped(archive):
    with open_archive(archive) as reader:
        pages = {p["url"]: p for p in reader.pages()}
        assert pages[SITE + "/"]["title"] == "Home" and pages[SITE + "/missing"]["status"] == 404
        assert pages["https://elsewhere.test/"]["is_external"]
        assert [a["href"] for a in reader.anchors(SITE + "/")][:2] == [SITE + "/about", SITE + "/blog/"]
        assert "<h1>About</h1>" in reader.html(SITE + "/about")


def test_hook_crawl_page_skipped(pm, tmp_path):
    crawl = _crawl(tmp_path)
    with storing(pm, crawl):
        pm.hook.crawl_page_skipped(
            url=SITE + "/private/", reason="blocked by robots.txt", crawl=crawl, is_external=False
        )
    with open_archive(crawl.output) as reader:
        page = reader.page(SITE + "/private/")
    assert page["is_skipped"] and page["skip_reason"] == "blocked by robots.txt"


def test_hook_crawl_resource_received(pm, tmp_path):
    crawl = _crawl(tmp_path)
    with storing(pm, crawl):
        pm.hook.crawl_page_scraped(result=demo_pages()[0], crawl=crawl)
        css = Resource(url=SITE + "/style.css", status=200, content_type="text/css", compression="gzip")
        pm.hook.crawl_resource_received(resource=css, referrer_url=SITE + "/", crawl=crawl)
    with open_archive(crawl.output) as reader:
        resources = list(reader.resources())
    assert [(r["url"], r["status"], r["compression"]) for r in resources] == [
        (SITE + "/style.css", 200, "gzip")
    ]


def test_hook_crawl_error(pm, tmp_path):
    crawl = _crawl(tmp_path)
    with storing(pm, crawl):
        error = CrawlErrorRecord(url="http://gone.test/", kind="dns", message="net::ERR_NAME_NOT_RESOLVED")
        pm.hook.crawl_error(url=error.url, error=error, crawl=crawl)
    with open_archive(crawl.output) as reader:
        rows = reader.execute(
            "SELECT u.url, e.kind, e.message FROM crawl_error e JOIN url u ON u.id = e.url_id"
        )
    assert [tuple(r) for r in rows] == [("http://gone.test/", "dns", "net::ERR_NAME_NOT_RESOLVED")]


def test_hook_crawl_finished(pm, tmp_path):
    # the archive sink closes the commit (the crawler calls finish, then fires crawl_finished for observers)
    crawl = _crawl(tmp_path)
    sink = pm.hook.crawl_open_archive(crawl=crawl, indexer=Indexer(pm))
    sink.put_page(demo_pages()[1])
    sink.finish("interrupted", {"status": "interrupted", "pages": 1})
    stub = tmp_path / "c.nitpicker.stub"
    assert crawl.output.exists() and stub.exists()  # interrupted: the stub stays, resumable
    with open_archive(crawl.output) as reader:
        assert reader.head() is None and reader.commits()[0]["status"] == "interrupted"
    resumed = CrawlContext(output=crawl.output, roots=crawl.roots, mode="resume")
    again = pm.hook.crawl_open_archive(crawl=resumed, indexer=Indexer(pm))
    assert again.commit == sink.commit
    again.finish("complete", {"status": "complete", "pages": 1})
    assert not stub.exists()
    with open_archive(crawl.output) as reader:
        assert reader.head() == sink.commit and reader.commits()[0]["stats"]["pages"] == 1


# -- analyze -----------------------------------------------------------------------------------------


class Shouty(Analyzer):
    name = "shouty"
    label = "Shouty titles"
    columns = (Column("title_length", "Title length"),)

    def each_page(self, page):
        title = page.document.findtext(".//title") or ""
        if page.url.endswith("/about"):
            raise RuntimeError("cannot read this one")
        violations = (
            [Violation("short-title", f"title {title!r} is short", "warning")] if len(title) < 5 else []
        )
        return PageReport({"title_length": len(title)}, violations)

    def each_url(self, url, is_external, settings):
        return PageReport({"external": is_external})


def test_hook_register_analyzers(pm, archive):
    class P:
        @hookimpl
        def register_analyzers(self, register):
            register(Shouty())

    pm.add_plugin(P(), "shouty-plugin")
    config = load_config(pm, data={})
    stats = run_analyze(pm, config, archive, ["shouty"])
    assert stats["errors"] == {"shouty": 1} and stats["violations"] == 2
    with open_archive(archive) as reader:
        violations = sorted((v["url"], v["rule"], v["analyzer"]) for v in reader.violations())
        assert violations == [
            (SITE + "/", "short-title", "shouty"),
            (SITE + "/blog/", "short-title", "shouty"),
        ]
        errors = reader.execute("SELECT u.url, e.message FROM analyzer_error e JOIN url u ON u.id = e.url_id")
        assert [tuple(e) for e in errors] == [(SITE + "/about", "RuntimeError: cannot read this one")]


def test_hook_analyze_started(pm, archive):
    _observe_analyze(pm, archive)


def test_hook_analyze_page_reported(pm, archive):
    events = _observe_analyze(pm, archive)
    reported = sorted(e[1] for e in events if e[0] == "page")
    # each_page on the internal pages (about raises: no report), each_url merged in or on the rest
    assert reported == sorted([SITE + "/", SITE + "/blog/", SITE + "/missing", "https://elsewhere.test/"])


def test_hook_analyze_finished(pm, archive):
    events = _observe_analyze(pm, archive)
    assert events[-1][0] == "finished" and events[-1][1]["errors"] == {"shouty": 1}


def _observe_analyze(pm, archive):
    events = []

    class P:
        @hookimpl
        def register_analyzers(self, register):
            register(Shouty())

        @hookimpl
        def analyze_started(self, run):
            events.append(("started", run.analyzers, run.commit))

        @hookimpl
        def analyze_page_reported(self, url, analyzer, report, run):
            events.append(("page", url, analyzer))

        @hookimpl
        def analyze_finished(self, run, summary):
            events.append(("finished", summary))

    pm.add_plugin(P(), "observer")
    run_analyze(pm, load_config(pm, data={}), archive, ["shouty"])
    assert events[0] == ("started", ["shouty"], 1)
    return events


# -- reports -----------------------------------------------------------------------------------------


def _titles(reader, commit):
    for page in reader.pages(commit):
        if not page["is_external"]:
            yield [page["url"], page["status"], page["title"]]


def test_hook_register_sheets(pm, archive, tmp_path):
    class P:
        @hookimpl
        def register_sheets(self, register):
            register(Sheet("Titles", ("URL", "Status", "Title"), _titles, order=2))

    pm.add_plugin(P(), "titles")
    with open_archive(archive) as reader:
        written = run_report(pm, reader, "csv", {"output_dir": tmp_path / "out"}, sheets=["Titles"])
    assert written == ["titles.csv"]
    rows = list(csv.reader((tmp_path / "out" / "titles.csv").open(encoding="utf-8-sig")))
    assert rows[0] == ["URL", "Status", "Title"] and [SITE + "/about", "200", "About"] in rows


def test_hook_register_report_destinations(pm, archive):
    received = {}

    def collect(sheets, options):
        for sheet, rows in sheets:
            received[sheet.name] = list(rows)
        return options["tag"]

    class P:
        @hookimpl
        def register_sheets(self, register):
            register(Sheet("Titles", ("URL", "Status", "Title"), _titles))

        @hookimpl
        def register_report_destinations(self, register):
            register(Destination("memory", collect))

    pm.add_plugin(P(), "memory")
    with open_archive(archive) as reader:
        assert run_report(pm, reader, "memory", {"tag": "done"}) == "done"
    assert len(received["Titles"]) == 4


def test_hook_register_report_sections(pm, archive, tmp_path):
    """A third party's section is in the HTML report, between the built-in ones its order names."""

    def render(report, lang):
        count = report.query("summary")["totals"]["pages"]
        return f"<p class='planted'>{lang}: {count} pages &lt;counted&gt;</p>"

    class P:
        @hookimpl
        def register_report_sections(self, register):
            register(ReportSection("planted", "Planted section", render, order=35, titles={"ja": "植えた節"}))
            register(ReportSection("silent", "Never shown", lambda report, lang: None, order=36))

    pm.add_plugin(P(), "planted")
    out = tmp_path / "report.html"
    with open_archive(archive) as reader:
        run_report(pm, reader, "html", {"file": str(out), "lang": "ja", "silent": True})
    html = out.read_text(encoding="utf-8")
    assert (
        '<h2 id="planted-h">植えた節</h2>' in html
        and "<p class='planted'>ja: 4 pages &lt;counted&gt;</p>" in html
    )
    assert "Never shown" not in html
    assert html.index('id="overview"') < html.index('id="planted"') < html.index('id="issues"')


# -- query, viewer, CLI --------------------------------------------------------------------------------


def test_hook_register_queries(pm, archive):
    class P:
        @hookimpl
        def register_queries(self, register):
            register(
                Query(
                    "titles",
                    "Titles by status",
                    lambda a, c, status: sorted(p["title"] for p in a.pages(c) if p["status"] == status),
                    {"status": {"type": "integer", "default": 200}},
                )
            )

    pm.add_plugin(P(), "titles")
    registry = query_registry(pm)
    assert registry.plugin_of("titles") == "titles" and registry.plugin_of("commits") == "core-queries"
    with open_archive(archive) as reader:
        assert run_query(registry, reader, "titles", {}) == ["About", "Blog", "Elsewhere", "Home"]
        assert run_query(registry, reader, "titles", {"status": "404"}) == ["Not Found"]


def test_hook_register_viewer_blueprints(pm, archive):
    from nitpicker_viewer.app import create_app

    extra = flask.Blueprint("extra", __name__)
    extra.add_url_rule("/hello", "hello", lambda: "hello from a plugin")

    class P:
        @hookimpl
        def register_viewer_blueprints(self, register):
            register(extra, url_prefix="/x")

    pm.add_plugin(P(), "extra")
    app = create_app(archive, pm)
    client = app.test_client()
    assert client.get("/x/hello").data == b"hello from a plugin"
    commits = client.get("/api/commits").get_json()
    assert commits["total"] == 1 and commits["items"][0]["head"] is True
    bad = client.get("/api/commits?limit=zero")
    assert bad.status_code == 400 and str(archive.parent) not in bad.get_data(as_text=True)
    app.config["NITPICKER_CLOSE"]()


def test_hook_viewer_menu_links(pm, archive):
    from nitpicker_viewer.app import create_app

    class P:
        @hookimpl
        def viewer_menu_links(self, request):
            return [MenuLink("/x/report", "Audit report", order=50)]

    pm.add_plugin(P(), "menu")
    app = create_app(archive, pm)
    html = app.test_client().get("/").get_data(as_text=True)
    assert (
        html.index(">Summary<")
        < html.index(">Mismatches<")
        < html.index(">Audit report<")
        < html.index(">Commits<")
    )
    app.config["NITPICKER_CLOSE"]()


def test_hook_register_commands(pm):
    from nitpicker_cli.app import App
    from nitpicker_cli.main import build_cli

    class P:
        @hookimpl
        def register_commands(self, cli, pm):
            @cli.command("hello")
            @click.argument("who")
            def hello(who):
                """Say hello."""
                click.echo(json.dumps({"hello": who, "plugins": len(pm.plugin_infos())}))

    pm.add_plugin(P(), "hello")
    result = CliRunner().invoke(build_cli(pm), ["hello", "world"], obj=App(pm))
    assert result.exit_code == 0
    assert json.loads(result.output) == {"hello": "world", "plugins": len(pm.plugin_infos())}
