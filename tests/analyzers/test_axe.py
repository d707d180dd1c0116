"""The axe analyzer on the /analyze/a11y/ fixture pages: exact rules, impacts, messages, no browser left."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections import defaultdict

import pytest
from support import crawl_subtree, run_cli

from nitpicker_core import PageInput
from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

EXPECTED = {
    "/analyze/a11y/": [],
    "/analyze/a11y/bad": [
        ("color-contrast", "serious"),
        ("html-has-lang", "serious"),
        ("image-alt", "critical"),
        ("label", "critical"),
        ("link-name", "serious"),
    ],
    "/analyze/a11y/clean": [],
    # one image, added by the page's script; scripts must not run a second time on the archived DOM
    "/analyze/a11y/scripted": [("image-alt", "critical")],
}


@pytest.fixture(scope="module")
def crawled(site, tmp_path_factory):
    """The /analyze/a11y/ subtree crawled once for the module; each test analyzes its own copy."""
    return crawl_subtree(f"{site}/analyze/a11y/", tmp_path_factory.mktemp("a11y"), "--no-image")


def analyze(crawled, tmp_path, *flags: str):
    """`nitpicker analyze COPY --plugin axe FLAGS`; returns (process, copy, marker of its Chromium)."""
    copy = tmp_path / "copy.nitpicker"
    shutil.copy(crawled, copy)
    marker = f"--nitpicker-axe-test={uuid.uuid4().hex}"
    env = {"NITPICKER_BROWSER_ARGS": f"{os.environ.get('NITPICKER_BROWSER_ARGS', '')} {marker}"}
    result = run_cli("analyze", str(copy), "--plugin", "axe", *flags, cwd=tmp_path, env=env, timeout=300)
    return result, copy, marker


def chromium_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line carries ``marker``."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read().decode(errors="replace")
            with open(f"/proc/{entry.name}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def findings(archive, site):
    with open_archive(archive) as reader:
        violations = reader.violations(analyzer="axe")
        cells = reader.analysis(analyzer="axe")
        errors = reader.analyzer_errors(analyzer="axe")
        runs = reader.analyzer_runs()
    by_page = defaultdict(list)
    for v in violations:
        by_page[v["url"].removeprefix(site)].append(v)
    table = defaultdict(dict)
    for cell in cells:
        table[cell["url"].removeprefix(site)][cell["column"]] = (cell["value"], cell["note"])
    return by_page, table, errors, runs


def test_axe_reports_exactly_the_known_violations(crawled, site, tmp_path):
    result, archive, marker = analyze(crawled, tmp_path)
    assert result.returncode == 0, result.stderr
    assert chromium_with(marker) == []  # every worker's Chromium is gone once analyze returns
    by_page, table, errors, runs = findings(archive, site)
    assert errors == []
    assert {page: sorted((v["rule"], v["severity"]) for v in by_page[page]) for page in EXPECTED} == EXPECTED
    assert set(by_page) <= set(EXPECTED)

    image = next(v for v in by_page["/analyze/a11y/bad"] if v["rule"] == "image-alt")
    assert image["message"] == "Images must have alternative text"
    assert image["help_url"].startswith("https://dequeuniversity.com/rules/axe/4.12/image-alt")
    assert image["location"] == "img"
    assert image["snippet"] == '<img src="/analyze/a11y/pixel.svg" width="40" height="40">'
    contrast = next(v for v in by_page["/analyze/a11y/bad"] if v["rule"] == "color-contrast")
    assert contrast["location"] == ".faint" and contrast["snippet"] == '<p class="faint">Hard to read</p>'

    assert table["/analyze/a11y/bad"] == {
        "critical": (2, "image-alt, label"),
        "serious": (3, "color-contrast, html-has-lang, link-name"),
        "moderate": (0, ""),
        "minor": (0, ""),
        "total": (5, ""),
    }
    assert table["/analyze/a11y/clean"]["total"] == (0, "")
    run = next(r for r in runs if r["analyzer"] == "axe")
    assert run["version"] == "1.0+axe-core.4.12.1"
    assert run["settings"]["source"] == "archive" and run["settings"]["lang"] == ""


def test_axe_live_source_in_japanese(crawled, site, tmp_path):
    """Live pages run their own script once, so they give the same findings as the archive; --axe-lang ja
    switches axe-core's messages to its Japanese locale."""
    result, archive, marker = analyze(crawled, tmp_path, "--axe-source", "live", "--axe-lang", "ja")
    assert result.returncode == 0, result.stderr
    assert chromium_with(marker) == []
    by_page, _, errors, runs = findings(archive, site)
    assert errors == []
    assert {p: sorted((v["rule"], v["severity"]) for v in by_page[p]) for p in EXPECTED} == EXPECTED
    messages = {v["rule"]: v["message"] for v in by_page["/analyze/a11y/bad"]}
    assert messages["image-alt"] == "画像には代替テキストがなければなりません"
    assert messages["html-has-lang"] == "<html>要素にはlang属性がなければなりません"
    settings = next(r for r in runs if r["analyzer"] == "axe")["settings"]
    assert (settings["source"], settings["lang"]) == ("live", "ja")


def test_axe_unknown_lang_or_source_is_a_usage_error(crawled, tmp_path):
    result, _, _ = analyze(crawled, tmp_path, "--axe-lang", "xx")
    assert result.returncode == 1
    line = result.stderr.strip()
    assert line.startswith("nitpicker: error: axe: no axe-core locale for lang 'xx' (available: ")
    assert "ja" in line.split("available: ")[1].rstrip(")").split(", ")
    result, _, _ = analyze(crawled, tmp_path, "--axe-source", "cache")
    assert result.returncode == 1
    assert result.stderr.strip() == "nitpicker: error: axe: source must be one of archive, live, not 'cache'"


def test_axe_is_listed_with_its_settings(cli):
    result = cli("plugins")
    plugin = next(p for p in json.loads(result.stdout) if p["name"] == "axe")
    assert plugin["status"] == "enabled"
    assert plugin["hooks"] == ["register_analyzers", "register_settings"]


def test_lang_tags_map_to_axe_core_locale_files(tmp_path):
    from nitpicker_axe.axe_core import load_locale

    for name in ("pt_BR", "de", "ja"):
        (tmp_path / f"{name}.json").write_text(json.dumps({"lang": name}))
    assert load_locale("pt-BR", str(tmp_path)) == {"lang": "pt_BR"}
    assert load_locale("de-AT", str(tmp_path)) == {"lang": "de"}  # no de_AT.json: the language alone
    assert load_locale("JA", str(tmp_path)) == {"lang": "ja"}
    assert load_locale("en", str(tmp_path)) is None and load_locale("", str(tmp_path)) is None


def test_a_resource_that_never_finishes_does_not_cost_the_page_its_audit(site, monkeypatch):
    """In process, as the engine's serial fallback runs it: /hang/'s image never completes, so the
    load event never fires; after the load wait axe runs on what is there."""
    import nitpicker_axe.analyzer as module
    import requests

    monkeypatch.setattr(module, "LOAD_WAIT", 1.0)
    analyzer = module.AxeAnalyzer()
    analyzer.setup({"source": "archive", "lang": "", "tags": [], "timeout": 20})
    try:
        html = requests.get(f"{site}/hang/", timeout=10).text.replace(' alt="x"', "")
        report = analyzer.each_page(PageInput(f"{site}/hang/", html, {}, {}))
        again = analyzer.each_page(
            PageInput(
                f"{site}/analyze/a11y/clean",
                '<!DOCTYPE html><html lang="en"><title>t</title><main><h1>t</h1></main></html>',
                {},
                {},
            )
        )
    finally:
        analyzer.teardown()
    # /hang/ has no <main> and no <h1>: the landmark and heading rules fire beside image-alt
    assert sorted((v.rule, v.location) for v in report.violations) == [
        ("image-alt", "img"),
        ("landmark-one-main", "html"),
        ("page-has-heading-one", "html"),
        ("region", "img"),
        ("region", "p"),
    ]
    assert again.violations == [] and again.cells["total"] == 0  # the reused tab serves the next page
