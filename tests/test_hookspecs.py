"""Meta-tests: every hook is documented in docs/hooks.md with its exact signature and has a test of its own."""

from __future__ import annotations

import inspect
import re

import pytest
from support import ROOT

from nitpicker_core import hookspecs

SPECS = {
    name: fn
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
    if hasattr(fn, "nitpicker_spec")
}
DOC = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
TESTS = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))


def test_there_are_hooks_for_every_family():
    families = {
        "lifecycle": {"register_settings", "configure", "unconfigure"},
        "scrape": {
            "crawl_open_archive",
            "crawl_started",
            "crawl_should_skip",
            "crawl_login",
            "crawl_before_navigate",
            "crawl_scrape",
            "crawl_parse",
            "crawl_page_filter",
            "crawl_page_scraped",
            "crawl_page_unchanged",
            "crawl_page_skipped",
            "crawl_resource_received",
            "crawl_error",
            "crawl_finished",
        },
        "analyze": {"register_analyzers", "analyze_started", "analyze_page_reported", "analyze_finished"},
        "report": {"register_sheets", "register_report_destinations", "register_report_sections"},
        "query": {"register_queries", "register_checks"},
        "viewer": {"register_viewer_blueprints", "viewer_menu_links"},
        "cli": {"register_commands"},
    }
    assert set(SPECS) == set().union(*families.values())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hook_is_documented_with_its_signature(name):
    args = ", ".join(inspect.signature(SPECS[name]).parameters)
    assert f"### `{name}({args})`" in DOC, f"docs/hooks.md lacks a heading for {name}({args})"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hook_is_documented_with_its_types(name):
    """The typed line under each heading is the hookspec's own annotations, so the doc cannot drift."""
    fn = SPECS[name]
    hints = inspect.get_annotations(fn)  # strings: hookspecs imports its types under TYPE_CHECKING
    params = ", ".join(f"{p}: {hints[p]}" for p in inspect.signature(fn).parameters)
    assert f"\n`{name}({params}) -> {hints['return']}`\n" in DOC, f"docs/hooks.md lacks the typed {name}"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hook_has_a_test_of_its_own(name):
    assert re.search(rf"^def test_hook_{name}\b", TESTS, re.M), f"no test_hook_{name} in tests/"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hookspec_is_typed_and_says_where_it_runs(name):
    fn = SPECS[name]
    doc = inspect.getdoc(fn) or ""
    assert "Runs in:" in doc and "Called:" in doc
    for param in inspect.signature(fn).parameters:
        assert f":param {param}:" in doc
    hints = inspect.get_annotations(fn)
    assert set(hints) >= set(inspect.signature(fn).parameters) | {"return"}
    flags = fn.nitpicker_spec
    for flag in ("firstresult", "historic"):
        assert bool(flags.get(flag)) == (f"{flag}:" in doc), f"{name}: {flag} flag and docstring disagree"
