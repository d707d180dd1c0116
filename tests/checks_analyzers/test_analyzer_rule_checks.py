"""Analyzer rule catalogues and the checks made of them: valid catalogues, the priority mapping, and findings
read from a real archive analysed by `nitpicker analyze --plugin markup`."""

from __future__ import annotations

import pytest
from nitpicker_axe.analyzer import PRIORITY as AXE_PRIORITY
from nitpicker_axe.axe_core import axe_version
from nitpicker_axe.catalogue import AXE_CORE
from nitpicker_checks_analyzers import analyzer_checks, normalise

from nitpicker_core import PRIORITIES, CheckContext, ScrapeResult, priority_of
from nitpicker_core.archive import open_archive
from nitpicker_core.checks import CHECK_ID_RE, validate_check
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import analyzer_registry, query_registry
from nitpicker_core.registry import KEBAB_RE
from tests.archives import SITE, build_archive
from tests.support import run_cli


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


@pytest.fixture(scope="module")
def analyzers(pm):
    return {analyzer.name: analyzer for analyzer in analyzer_registry(pm)}


def test_every_builtin_catalogue_is_valid(analyzers):
    for name in ("axe", "markup", "text", "main-contents", "lighthouse"):
        rules = analyzers[name].rules()
        assert rules, f"{name} declares no rules"
        ids = [rule.id for rule in rules]
        assert len(ids) == len(set(ids)), name
        for rule in rules:
            assert KEBAB_RE.match(rule.id), (name, rule.id)
            assert rule.priority in PRIORITIES, (name, rule.id, rule.priority)
            assert rule.title and rule.title == rule.title.strip(), (name, rule.id)


def test_every_rule_becomes_a_valid_check(analyzers):
    checks = analyzer_checks(analyzers.values())
    ids = [check.id for check in checks]
    assert len(ids) == len(set(ids))
    for check in checks:
        assert CHECK_ID_RE.match(check.id), check.id
        validate_check(check, "analyzer-checks")  # raises on a bad priority or category
        assert check.id.split("/")[0] == check.analyzer
        assert callable(check.findings)
    by_id = {check.id: check for check in checks}
    assert len([i for i in ids if i.startswith("axe/")]) == len(analyzers["axe"].rules()) + 2
    assert by_id["axe/image-alt"].priority == "critical"
    assert by_id["axe/image-alt"].category == "accessibility"
    assert by_id["axe/image-alt"].help_url.startswith("https://dequeuniversity.com/rules/axe/")
    assert by_id["markup/img-alt-missing"].priority == "high"
    assert by_id["markup/img-alt-empty"].priority == "medium"
    assert (by_id["text/repeated-word"].priority, by_id["text/repeated-word"].type) == ("medium", "issue")
    assert by_id["markup/skipped"].priority == "info"
    # the same defect from two analyzers (and the crawl's images without alt) shares one key
    assert by_id["axe/image-alt"].defect == by_id["markup/img-alt-missing"].defect == "image-alt"
    assert by_id["axe/html-has-lang"].defect == by_id["markup/html-lang"].defect == "html-lang"
    assert by_id["markup/parse-error"].defect == ""


def test_axe_catalogue_matches_the_bundled_axe_core():
    # catalogue.py is generated from axe.min.js: regenerate it (catalogue_gen.py) when axe-core is upgraded
    assert AXE_CORE == axe_version()


def test_lighthouse_catalogue_matches_the_pinned_lighthouse():
    from nitpicker_lighthouse.catalogue import LIGHTHOUSE, RULES
    from nitpicker_lighthouse.runner import PINNED

    assert LIGHTHOUSE == PINNED
    assert RULES["image-alt"]["priority"] == "high"  # binary: fails outright
    assert RULES["largest-contentful-paint"]["priority"] == "medium"  # graded


def test_severities_map_onto_the_one_priority_scale():
    assert AXE_PRIORITY == {"critical": "critical", "serious": "high", "moderate": "medium", "minor": "low"}
    assert [priority_of(s) for s in ("critical", "serious", "moderate", "minor")] == [
        "critical",
        "high",
        "medium",
        "low",
    ]
    assert [priority_of(s) for s in ("error", "warning", "info", "Error")] == [
        "high",
        "medium",
        "low",
        "high",
    ]
    assert priority_of("something-else") == "medium"


def test_details_drop_positions_nonces_and_generated_ids():
    assert (
        normalise({"snippet": '<img  id="img-83921" src="a.png"\n nonce="xyz">'})
        == '<img id="…" src="a.png">'
    )
    assert normalise({"snippet": '<div id=":r4:" class="x">'}) == '<div id="…" class="x">'
    assert normalise({"snippet": '<a id="menu" href="/">'}) == '<a id="menu" href="/">'
    assert normalise({"message": "the the: repeated word (sentence 12)"}) == "the the: repeated word"
    assert normalise({"message": "Largest Contentful Paint (2.4 s)"}) == "Largest Contentful Paint"
    assert normalise({"message": "Stray end tag (p) at 12:40"}) == "Stray end tag (p) at"
    assert len(normalise({"message": "x" * 1000})) == 300


def _page(path: str, body: str) -> ScrapeResult:
    html = f"<!doctype html><html lang='en'><head><title>{path}</title></head><body><h1>{path}</h1>{body}</body></html>"
    return ScrapeResult(
        url=SITE + path, status=200, content_type="text/html", metadata={"title": path}, html=html
    )


PAGES = [
    _page("/", '<p>Home</p><img src="/logo.png" alt="Logo">'),
    _page("/gallery", '<img src="/a.png"><img src="/b.png" alt="">'),
    _page("/old", '<center><img src="/c.png"></center><p id="x">a</p><p id="x">b</p>'),
]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Commit 1 analysed by markup through the real CLI, commit 2 (same pages) never analysed."""
    path = build_archive(tmp_path_factory.mktemp("rules") / "site.nitpicker", PAGES)
    result = run_cli("analyze", str(path), "--plugin", "markup", timeout=300)
    assert result.returncode == 0, result.stderr
    build_archive(path, PAGES)
    return path


def _findings(pm, reader, commit, check_id):
    check = {c.id: c for c in analyzer_checks(analyzer_registry(pm))}[check_id]
    ctx = CheckContext(reader, commit, query_registry(pm))
    return ctx, sorted({(f.url, f.detail) for f in check.findings(ctx)})


def test_checks_list_the_urls_of_each_rule(pm, archive):
    reader = open_archive(archive)
    first = reader.resolve(1)
    ctx, found = _findings(pm, reader, first, "markup/img-alt-missing")
    assert ctx.analysed("markup")
    assert found == [(SITE + "/gallery", '<img src="/a.png">'), (SITE + "/old", '<img src="/c.png">')]
    assert _findings(pm, reader, first, "markup/img-alt-empty")[1] == [
        (SITE + "/gallery", '<img src="/b.png" alt="">')
    ]
    assert _findings(pm, reader, first, "markup/obsolete-element")[1] == [(SITE + "/old", "<center>")]
    assert [url for url, _ in _findings(pm, reader, first, "markup/duplicate-id")[1]] == [SITE + "/old"]
    assert _findings(pm, reader, first, "markup/html-lang")[1] == []
    assert _findings(pm, reader, first, "markup/other")[1] == []


def test_a_commit_never_analysed_is_marked_not_analysed(pm, archive):
    reader = open_archive(archive)
    latest = reader.resolve(None)
    ctx, found = _findings(pm, reader, latest, "markup/img-alt-missing")
    assert not ctx.analysed("markup")
    assert found == []  # no rows: the issues query must show "not analysed" (ctx.analysed), never 0
