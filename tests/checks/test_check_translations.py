"""Every built-in check has a type and a Japanese title, description and fix (messages/ja.json per plugin)."""

from __future__ import annotations

import json
import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from nitpicker_core import CHECK_TYPES, Check, run_query
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.archives import archive_builder, page

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
FIELDS = ("title", "description", "fix")
# the package holding each messages/ja.json -> the analyzer whose rules it translates ("" for crawl checks)
CATALOGUES = {
    "nitpicker_checks": "",
    "nitpicker_axe": "axe",
    "nitpicker_lighthouse": "lighthouse",
    "nitpicker_markup": "markup",
    "nitpicker_main_contents": "main-contents",
    "nitpicker_text": "text",
}
ROOT = Path(__file__).resolve().parents[2]


def _checks() -> list[Check]:
    registry = check_registry(make_plugin_manager())
    return [
        registry[name]
        for name in registry.names()
        if registry.plugin_of(name) in ("checks", "analyzer-checks")
    ]


CHECKS = _checks()


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_every_builtin_check_reads_in_japanese(check: Check) -> None:
    for field in FIELDS:
        text = check.text(field, "ja")
        assert JAPANESE.search(text), f"{check.id}: no Japanese {field}: {text!r}"
        assert text != getattr(check, field) or field == "fix" and not check.fix


def test_every_builtin_check_has_a_type() -> None:
    assert len(CHECKS) > 300
    assert {check.id: check.type for check in CHECKS if check.type not in CHECK_TYPES} == {}
    assert {check.type for check in CHECKS} == set(CHECK_TYPES)


@pytest.mark.parametrize("package", sorted(CATALOGUES))
def test_every_translation_names_a_check_that_exists(package: str) -> None:
    analyzer = CATALOGUES[package]
    ids = {c.id.removeprefix(f"{analyzer}/") for c in CHECKS if c.analyzer == analyzer}
    entries = json.loads((files(package) / "messages" / "ja.json").read_text(encoding="utf-8"))
    assert sorted(set(entries) - ids) == []  # no stale id
    for check_id, fields in entries.items():
        assert set(fields) <= set(FIELDS) and {"title", "description"} <= set(fields), check_id
        assert all(JAPANESE.search(text) for text in fields.values()), check_id


def test_the_translations_ship_in_the_wheel() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]
    for package in CATALOGUES:
        assert "messages/*.json" in package_data.get(package, []), package


def test_types_follow_what_each_source_says() -> None:
    checks = {check.id: check for check in CHECKS}
    assert checks["broken-link"].type == "issue"
    assert checks["canonical-invalid"].type == "issue"
    assert checks["canonical-mismatch"].type == "warning"
    assert checks["title-too-long"].type == "opportunity"
    # axe: WCAG rules are issues, best practices warnings; Lighthouse: savings are opportunities
    assert (checks["axe/image-alt"].type, checks["axe/region"].type) == ("issue", "warning")
    assert checks["lighthouse/unused-css-rules"].type == "opportunity"
    assert checks["lighthouse/largest-contentful-paint"].type == "warning"
    assert (checks["lighthouse/image-alt"].type, checks["lighthouse/is-crawlable"].type) == ("issue", "issue")
    assert (checks["markup/parse-error"].type, checks["markup/img-alt-empty"].type) == ("issue", "warning")
    assert (checks["search/skipped"].type, checks["search/other"].type) == ("warning", "issue")


def test_a_rule_without_a_japanese_fix_gets_the_generic_one_with_its_help_page() -> None:
    check = next(c for c in CHECKS if c.id == "axe/image-alt")
    assert check.help_url in check.text("fix", "ja") and check.text("fix", "ja") != check.fix
    assert check.text("title", "ja") == "画像には代替テキストがなければなりません"  # axe-core's own Japanese


def test_the_issues_query_says_each_check_type(tmp_path: Path) -> None:
    site = "https://docs.test"
    archive = tmp_path / "typed.nitpicker"
    with archive_builder(archive, roots=[site + "/"]) as build:
        build.page(
            page(site + "/", title="Home", links=["/gone"], metadata={"canonical": "file:///srv/index.html"})
        )
        build.page(page(site + "/gone", status=404, content_type="text/plain"))
    pm = make_plugin_manager()
    with open_archive(archive) as reader:
        answer = run_query(query_registry(pm), reader, "issues", {}, reader.resolve(None))
    types = {item["id"]: item["type"] for item in answer["items"]}
    assert (types["canonical-invalid"], types["title-too-long"], types["robots-blocked"]) == (
        "issue",
        "opportunity",
        "warning",
    )
