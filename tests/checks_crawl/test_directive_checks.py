"""The directive and link checks: exact findings on a real crawl of /directives-site/
(test_server/routes/directives_site.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings, _located
from flask import Flask, Response
from support import run_cli

from nitpicker_core import CheckContext, indexing
from nitpicker_core.archive import findings_store, open_archive
from nitpicker_core.plugins import NitpickerPluginManager, make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_demo import serve_app
from nitpicker_testing.runs import configured

S = "/directives-site/"
# What each directive and link check finds on /directives-site/ (the site's origin written as "")
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "noindex-linked": {(f"{S}conflict", "")},  # noindex by its X-Robots-Tag
    "robots-blocked": {("/private/page", "")},
    "nofollow-page": {
        (f"{S}header-nofollow", "X-Robots-Tag: nofollow"),
        (f"{S}meta-nofollow", "meta robots: nofollow"),
    },
    "nofollow-internal-link": {(S, f"{S}b")},
    "robots-directives-conflict": {(f"{S}conflict", "meta robots: index, follow | X-Robots-Tag: noindex")},
    "page-too-deep": {(f"{S}deep-5", "5"), (f"{S}deep-6", "6")},
    "no-internal-outlinks": {(f"{S}dead-end", "")},
    # "click here" on the Japanese page is not judged by the English list
    "anchor-text-non-descriptive": {(S, f"click here → {S}a"), (f"{S}ja", f"詳しくはこちら → {S}a")},
    "link-to-non-canonical": {(S, f"{S}copy")},
    # the shared robots.txt answers and disallows /private/ only: see the robots.txt test below
    "robots-txt-unreachable": set(),
    "robots-txt-blocks-start": set(),
}


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("directives-crawl")
    _crawl(workdir, "-o", str(workdir / "directives.nitpicker"), f"{site}{S}")
    return workdir / "directives.nitpicker"


@pytest.fixture(scope="module")
def crawled(site: str, archive: Path) -> dict[str, set[tuple[str, str]]]:
    return _findings(archive, site)


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_directive_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]


def _origin(robots_status: int, robots_txt: str) -> Flask:
    """A one-page site of its own whose robots.txt answers ``robots_status`` with ``robots_txt``."""
    app = Flask(f"robots-{robots_status}")
    app.add_url_rule(
        "/robots.txt", "robots", lambda: Response(robots_txt, robots_status, mimetype="text/plain")
    )
    app.add_url_rule("/", "home", lambda: Response("<title>Home</title><p>Home</p>", mimetype="text/html"))
    return app


@pytest.mark.parametrize(
    ("status", "robots_txt", "expected"),
    [
        (
            503,
            "",
            {"robots-txt-unreachable": {("/robots.txt", "answered 503")}, "robots-txt-blocks-start": set()},
        ),
        (
            200,
            "User-agent: *\nDisallow: /\n",
            {"robots-txt-unreachable": set(), "robots-txt-blocks-start": {("/", "")}},
        ),
    ],
    ids=["robots-5xx", "disallow-all"],
)
def test_robots_txt_that_shuts_the_site_is_a_finding(
    tmp_path: Path, status: int, robots_txt: str, expected: dict[str, set[tuple[str, str]]]
) -> None:
    server, origin = serve_app(_origin(status, robots_txt))
    try:
        _crawl(tmp_path, "-o", str(tmp_path / "robots.nitpicker"), f"{origin}/")
    finally:
        server.shutdown()
    found = _findings(tmp_path / "robots.nitpicker", origin)
    assert {check: found[check] for check in expected} == expected


# --- settings of the checks: plugins.checks.max_depth, anchor_texts, anchor_texts_replace ------------------------

DEEPER_THAN_2 = {(f"{S}deep-{n}", str(n)) for n in range(3, 7)}


def _with(archive: Path, origin: str, settings: dict[str, object], commit: int | None = None) -> dict:
    """Every crawl check's findings computed with ``[plugins.checks]`` set to ``settings`` (nothing stored read)."""
    pm = make_plugin_manager()
    config = configured(pm, {"checks": settings})
    registry = check_registry(pm)
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(commit), query_registry(pm), config)
        return {
            name: {
                (f.url.replace(origin, ""), f.detail.replace(origin, ""))
                for f in registry[name].findings(ctx)  # type: ignore[misc]
            }
            for name in ("page-too-deep", "anchor-text-non-descriptive")
        }


def _stored(archive: Path, origin: str, commit: int, check: str) -> set[tuple[str, str]]:
    with open_archive(archive) as reader:
        found = findings_store.Stored(reader).findings(commit, check)
    return {(f.url.replace(origin, ""), f.detail.replace(origin, "")) for f in found}


def _issue_counts(archive: Path, *flags: str, cwd: Path | None = None) -> dict[str, int]:
    result = run_cli("issues", "--json", *flags, str(archive), cwd=cwd or archive.parent)
    assert result.returncode == 0, result.stderr
    return {item["id"]: item["findings"] for item in json.loads(result.stdout)["items"]}


def test_the_depth_setting_changes_the_findings(site: str, archive: Path) -> None:
    assert _with(archive, site, {"max_depth": 2})["page-too-deep"] == DEEPER_THAN_2
    assert _with(archive, site, {"max_depth": 6})["page-too-deep"] == set()
    assert _with(archive, site, {})["page-too-deep"] == EXPECTED["page-too-deep"]


def test_findings_stored_with_another_setting_are_stale_for_the_checks_that_read_it(
    site: str, archive: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "directives.nitpicker"
    copy.write_bytes(archive.read_bytes())
    with open_archive(copy) as reader:
        first = reader.resolve(None)
    # the crawl stored page-too-deep with the default depth, 4
    assert _stored(copy, site, first, "page-too-deep") == EXPECTED["page-too-deep"]
    pm = make_plugin_manager()
    configured(pm, {"checks": {"max_depth": 2}})
    checks = check_registry(pm)
    with open_archive(copy) as reader:
        stored = findings_store.Stored(reader)
        default = findings_store.Tokens(reader, _codes(make_plugin_manager()))
        deeper = findings_store.Tokens(reader, _codes(pm))
        for name in ("page-too-deep", "no-internal-outlinks", "anchor-text-non-descriptive"):
            assert stored.valid(first, name, default.of(checks[name], first)) is not None, name
        # another depth: page-too-deep's stored findings are not used; the checks not reading it still are
        assert stored.valid(first, "page-too-deep", deeper.of(checks["page-too-deep"], first)) is None
        for name in ("no-internal-outlinks", "anchor-text-non-descriptive"):
            assert stored.valid(first, name, deeper.of(checks[name], first)) is not None, name
    # what a user sees: issues computes the findings with the flag's depth, not the stored ones
    assert _issue_counts(copy)["page-too-deep"] == 2
    assert _issue_counts(copy, "--checks-max-depth", "2")["page-too-deep"] == 4
    # and the config file's value, when no flag is given
    site_config = tmp_path / "with-config"
    site_config.mkdir()
    (site_config / "nitpicker.toml").write_text("[plugins.checks]\nmax_depth = 5\n")
    assert _issue_counts(copy, cwd=site_config)["page-too-deep"] == 1
    assert _issue_counts(copy, "--checks-max-depth", "2", cwd=site_config)["page-too-deep"] == 4

    # a commit indexed with depth 2 stores the findings of depth 2, which issues serves with that depth
    _crawl(tmp_path, "--update", str(copy), "--checks-max-depth", "2")
    with open_archive(copy) as reader:
        second = reader.resolve(None)
        assert second != first
        stored = findings_store.Stored(reader)
        deeper = findings_store.Tokens(reader, _codes(pm))
        assert stored.valid(second, "page-too-deep", deeper.of(checks["page-too-deep"], second)) is not None
    assert _stored(copy, site, second, "page-too-deep") == DEEPER_THAN_2
    assert _issue_counts(copy, "--checks-max-depth", "2")["page-too-deep"] == 4
    assert (
        _issue_counts(copy)["page-too-deep"] == 2
    )  # the default again: computed, not the stored depth-2 set


def _codes(pm: NitpickerPluginManager) -> dict[str, str]:
    """The code part of the tokens, as the indexing service makes them with ``pm``'s configuration."""
    return indexing.code_versions(pm, check_registry(pm))


def test_anchor_text_settings_extend_or_replace_the_list_of_a_language(site: str, archive: Path) -> None:
    default = EXPECTED["anchor-text-non-descriptive"]
    # "Dead end" and "Page B" become non-descriptive in English; 日本語 on the English home page is English text
    extended = _with(archive, site, {"anchor_texts": ["en:dead end", "*:page b"]})
    assert extended["anchor-text-non-descriptive"] == default | {
        (S, f"Dead end → {S}dead-end"),
        (S, f"Page B → {S}b"),
    }
    # the Japanese list replaced: 詳しくはこちら is no longer judged there, ホーム now is
    replaced = _with(archive, site, {"anchor_texts": ["ja:ホーム"], "anchor_texts_replace": ["ja"]})
    assert replaced["anchor-text-non-descriptive"] == {(S, f"click here → {S}a"), (f"{S}ja", f"ホーム → {S}")}
    # every built-in list replaced, nothing of the user's: no finding
    assert _with(archive, site, {"anchor_texts_replace": ["*"]})["anchor-text-non-descriptive"] == set()


def test_a_malformed_check_setting_is_one_line_before_anything_runs(archive: Path, tmp_path: Path) -> None:
    (tmp_path / "nitpicker.toml").write_text('[plugins.checks]\nmax_depth = "deep"\n')
    result = run_cli("issues", "--json", str(archive), cwd=tmp_path)
    assert result.returncode == 1
    assert "max_depth: expected int" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("crawl", "-o", str(tmp_path / "x.nitpicker"), "http://127.0.0.1:1/", cwd=tmp_path)
    assert result.returncode == 1 and "max_depth: expected int" in result.stderr
    assert not (tmp_path / "x.nitpicker").exists()


def test_a_non_descriptive_anchor_is_traced_to_its_line(site: str, archive: Path) -> None:
    from nitpicker_core.query import run_query

    with open_archive(archive) as reader:
        found = run_query(
            query_registry(make_plugin_manager()),
            reader,
            "issue-urls",
            {"check": "anchor-text-non-descriptive", "limit": 10},
        )
        sent = {item["url"]: reader.source(item["url"]) for item in found["items"]}
    rows = {(i["url"].replace(site, ""), i["text"], i["target"].replace(site, "")): i for i in found["items"]}
    assert set(rows) == {(S, "click here", f"{S}a"), (f"{S}ja", "詳しくはこちら", f"{S}a")}
    for (page, text, _), item in rows.items():
        # the anchor written with that text (the page's "click here" to /b elsewhere is another link)
        assert item["anchors"] == 1 and isinstance(item["line"], int) and item["status"] == 200
        html = sent[site + page]
        assert html is not None and text in html.splitlines()[item["line"] - 1]


# The meta robots in the rendered HTML: <head> ends line 1, the charset and the title lines 2 and 3, the meta 4.
ROBOTS_LINES: dict[str, dict[tuple[str, str], tuple[str | None, str | None]]] = {
    "nofollow-page": {
        (f"{S}meta-nofollow", "meta robots: nofollow"): ("4:1", "rendered"),
        (f"{S}header-nofollow", "X-Robots-Tag: nofollow"): (None, None),
    },
    "robots-directives-conflict": {
        (f"{S}conflict", "meta robots: index, follow | X-Robots-Tag: noindex"): ("4:1", "rendered")
    },
    # noindex by its X-Robots-Tag: its meta robots says index, and is not where the noindex is
    "noindex-linked": {(f"{S}conflict", ""): (None, None)},
}


@pytest.mark.parametrize("check_id", sorted(ROBOTS_LINES))
def test_robots_findings_are_traced_to_their_meta_element(site: str, archive: Path, check_id: str) -> None:
    located = _located(archive, site, check_id)
    for key, where in ROBOTS_LINES[check_id].items():
        assert located[key] == where
