"""Analyzer settings are checked when an analyzer is used (``Analyzer.check``), not by every command."""

from __future__ import annotations

from pathlib import Path

import pytest
from archives import SITE, build_archive

from nitpicker_core import Analyzer, PageReport, ScrapeResult, UsageError, hookimpl
from nitpicker_core.analyze import analyze
from nitpicker_core.analyze.engine import check_settings
from nitpicker_core.archive import open_archive
from nitpicker_core.config import load_config
from nitpicker_core.errors import RegistrationError

BAD_KEYWORD = '[plugins.search]\nkeywords = ["/(unclosed/"]\n'
BAD_KEYWORD_ERROR = (
    "nitpicker: error: search: keyword '/(unclosed/': invalid regular expression: missing ) at position 9"
)


def page(path: str) -> ScrapeResult:
    html = f"<!doctype html><html lang='en'><head><title>{path}</title></head><body><p>x</p></body></html>"
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html),
        metadata={"title": path},
        html=html,
    )


class Picky(Analyzer):
    """Refuses ``limit`` below 1; records every settings mapping ``check`` saw."""

    name = "picky"
    seen: list[dict] = []

    def check(self, settings):
        type(self).seen.append(dict(settings))
        if settings["limit"] < 1:
            raise UsageError(f"picky: limit must be at least 1, got {settings['limit']}")

    def each_page(self, page):
        return PageReport({"ok": True})


class Lenient(Analyzer):
    name = "lenient"

    def each_page(self, page):
        return PageReport({"fine": True})


class PickyPlugin:
    @hookimpl
    def register_settings(self, register):
        register("limit", type="int", default=5)

    @hookimpl
    def register_analyzers(self, register):
        register(Picky())
        register(Lenient())


@pytest.fixture
def picky_pm(pm):
    Picky.seen = []
    pm.add_plugin(PickyPlugin(), "picky")
    return pm


def test_check_gets_the_settings_with_defaults_and_refuses_before_anything_is_written(picky_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a"), page("/b")])
    before = archive.read_bytes()
    with pytest.raises(UsageError, match=r"^picky: limit must be at least 1, got 0$"):
        analyze(
            picky_pm, load_config(picky_pm, data={"plugins": {"picky": {"limit": 0}}}), archive, ["picky"]
        )
    assert Picky.seen == [{"limit": 0}]
    assert archive.read_bytes() == before  # not even an analyzer_run row
    assert not list(tmp_path.glob("site.nitpicker.*"))  # no working directory left behind

    run = analyze(picky_pm, load_config(picky_pm, data={}), archive, ["picky", "lenient"])
    assert Picky.seen[-1] == {"limit": 5}
    assert {name: s.pages for name, s in run.summaries.items()} == {"picky": 2, "lenient": 2}


def test_only_the_analyzers_a_run_uses_are_checked(picky_pm, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker", [page("/a")])
    config = load_config(picky_pm, data={"plugins": {"picky": {"limit": -3}}})
    run = analyze(picky_pm, config, archive, ["lenient"])
    assert run.summaries["lenient"].errors == 0 and Picky.seen == []
    with open_archive(archive) as reader:
        assert [r["analyzer"] for r in reader.analyzer_runs()] == ["lenient"]
    with pytest.raises(RegistrationError, match="^unknown analyzer 'nope'"):
        check_settings(picky_pm, config, ["lenient", "nope"])
    with pytest.raises(UsageError, match="^picky: limit must be at least 1, got -3$"):
        check_settings(picky_pm, config, None)  # the default analyzers: all of these two


@pytest.mark.parametrize(
    ("plugin", "settings", "error"),
    [
        ("text", {"disable": ["nope"]}, "^text: unknown rule nope in disable"),
        ("text", {"max_sentence_length": 0}, "^text: max_sentence_length must be at least 1, got 0$"),
        ("search", {"scope": "main >"}, "^search: invalid scope selector 'main >'"),
        ("markup", {"disable": ["nope"]}, r"^markup disable \(--markup-disable\): unknown rule nope"),
        ("markup", {"reads": "dom"}, "^markup: reads must be one of source, rendered, not 'dom'$"),
        (
            "markup",
            {"parse_timeout": -1},
            r"^markup parse_timeout \(--markup-parse-timeout\) must be more than 0 s",
        ),
        ("main-content", {"selector": "div[["}, r"^--main-content-selector: invalid CSS selector 'div\[\['"),
        ("axe", {"source": "cache"}, "^axe: source must be one of archive, live, not 'cache'$"),
        ("axe", {"lang": "xx"}, r"^axe: no axe-core locale for lang 'xx' \(available: "),
    ],
)
def test_builtin_analyzers_check_their_settings_and_configure_accepts_them(pm, plugin, settings, error):
    config = load_config(pm, data={"plugins": {plugin: settings}})
    pm.configure_plugins(config)  # what every command does: must not fail over an analyzer's settings
    name = {"main-content": "main-contents"}.get(plugin, plugin)
    with pytest.raises(UsageError, match=error):
        check_settings(pm, config, [name])
    check_settings(pm, load_config(pm, data={}), [name])  # the defaults pass


@pytest.mark.browser
def test_a_bad_config_file_stops_analyze_only(cli, site, tmp_path):
    (tmp_path / "nitpicker.toml").write_text(BAD_KEYWORD, encoding="utf-8")
    crawled = cli(
        "crawl",
        f"{site}/recursive/page-c",
        "--single",
        "--no-image",
        "-o",
        "a.nitpicker",
        cwd=tmp_path,
        timeout=300,
    )
    assert crawled.returncode == 0, crawled.stderr
    archive: Path = tmp_path / "a.nitpicker"
    with open_archive(archive) as reader:
        assert [p["url"] for p in reader.pages() if not p.get("is_external")] == [f"{site}/recursive/page-c"]
    assert cli("plugins", cwd=tmp_path).returncode == 0

    refused = cli("analyze", "a.nitpicker", "--plugin", "search", cwd=tmp_path)
    assert (refused.returncode, refused.stdout, refused.stderr.splitlines()) == (1, "", [BAD_KEYWORD_ERROR])
    refused = cli(
        "analyze", "a.nitpicker", cwd=tmp_path
    )  # not a TTY: the default analyzers, search among them
    assert (refused.returncode, refused.stderr.splitlines()) == (1, [BAD_KEYWORD_ERROR])
    with open_archive(archive) as reader:
        assert reader.analyzer_runs() == []

    other = cli("analyze", "a.nitpicker", "--plugin", "markup", cwd=tmp_path)  # search is not used: no check
    assert other.returncode == 0, other.stderr
    flag = cli("analyze", "a.nitpicker", "--plugin", "search", "--search-keywords", "links", cwd=tmp_path)
    assert flag.returncode == 0, flag.stderr  # the flag replaces the bad value from the file
    with open_archive(archive) as reader:
        assert [
            (r["analyzer"], r["settings"]["keywords"])
            for r in reader.analyzer_runs()
            if r["analyzer"] == "search"
        ] == [("search", ["links"])]
        assert {r["column"]: r["value"] for r in reader.analysis(analyzer="search")} == {
            "keyword:links": 1,
            "total": 1,
        }
