"""The canonical checks: exact findings on a real crawl of /canonical-site/ (test_server/routes/canonical_site.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings, _located

S = "/canonical-site/"
CANONICALISED = ("copy", "scripted", "to-blocked", "to-gone", "to-lonely", "to-noindex", "to-redirect")
# What each canonical check finds on /canonical-site/ (the site's origin written as "")
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "canonical-missing": {(f"{S}missing", "")},  # not /hidden (noindex), not /header-only (Link header)
    "canonical-self": {
        (f"{S}{name}", "") for name in ("", "header-conflict", "header-only", "in-body", "self", "two")
    },
    # the existing "canonicalised" check: the canonical in the rendered HTML names another URL
    "canonical-mismatch": {
        (f"{S}copy", f"{S}self"),
        (f"{S}scripted", f"{S}copy"),  # the script's value: the rendered HTML
        (f"{S}to-blocked", "/private/page"),
        (f"{S}to-gone", f"{S}gone"),
        (f"{S}to-lonely", f"{S}lonely"),
        (f"{S}to-noindex", f"{S}hidden"),
        (f"{S}to-redirect", f"{S}moved"),
    },
    "canonical-target-not-indexable": {
        (f"{S}scripted", f"{S}copy: canonicalised to {S}self"),
        (f"{S}to-blocked", "/private/page: blocked by robots.txt"),
        (f"{S}to-gone", f"{S}gone: 404"),
        (f"{S}to-noindex", f"{S}hidden: noindex"),
        (f"{S}to-redirect", f"{S}moved: redirects to {S}self"),
    },
    # javascript: is canonical-invalid's alone: the crawl goes on and no other canonical check reads it
    "canonical-invalid": {(f"{S}js", "javascript:void(0)")},
    "canonical-conflict": {
        (
            f"{S}header-conflict",
            f"HTML + HTML as sent: {S}header-conflict | HTTP Link: http://example.test/other",
        ),
        (f"{S}scripted", f"HTML: {S}copy | HTML as sent: {S}scripted"),
        (f"{S}two", f"HTML + HTML as sent: {S}two | HTML + HTML as sent: {S}copy"),
    },
    "canonical-outside-head": {(f"{S}in-body", f"{S}in-body")},
    "canonical-not-linked": {(f"{S}lonely", "")},  # never linked, so never crawled: known from the canonical
    "link-to-non-canonical": {(S, f"{S}{name}") for name in CANONICALISED},
}


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("canonical-crawl")
    _crawl(workdir, "-o", str(workdir / "canonicals.nitpicker"), f"{site}{S}")
    return workdir / "canonicals.nitpicker"


@pytest.fixture(scope="module")
def crawled(site: str, archive: Path) -> dict[str, set[tuple[str, str]]]:
    return _findings(archive, site)


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_canonical_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]


# Where the canonical findings are (test_server/routes/_html.py's page): in the rendered HTML <head> ends line 1,
# the charset and the title are lines 2 and 3, a canonical of the head line 4 (a second one 5); in the HTML as
# sent the head's own lines come first (doctype, <html>, <head>), /in-body's canonical on the body's line 8.
LINES: dict[str, dict[tuple[str, str], tuple[str | None, str | None]]] = {
    "canonical-mismatch": {(f"{S}copy", f"{S}self"): ("4:1", "rendered")},
    "canonical-missing": {(f"{S}missing", ""): ("1:32", "rendered")},  # the <head>
    "canonical-self": {
        (f"{S}self", ""): ("4:1", "rendered"),
        (f"{S}header-only", ""): (None, None),  # the HTTP Link header's: no element
        # written in the body: line 6 of the rendered HTML, 8 of the HTML as sent (canonical-outside-head)
        (f"{S}in-body", ""): ("6:54", "rendered"),
    },
    "canonical-invalid": {(f"{S}js", "javascript:void(0)"): ("4:1", "rendered")},
    "canonical-target-not-indexable": {(f"{S}to-gone", f"{S}gone: 404"): ("4:1", "rendered")},
    "canonical-conflict": {
        (f"{S}two", f"HTML + HTML as sent: {S}two | HTML + HTML as sent: {S}copy"): ("4:1, 5:1", "rendered"),
        # the one element the script rewrote: where it is in the rendered HTML
        (f"{S}scripted", f"HTML: {S}copy | HTML as sent: {S}scripted"): ("4:1", "rendered"),
    },
    "canonical-outside-head": {(f"{S}in-body", f"{S}in-body"): ("8:54", "sent")},
    "canonical-not-linked": {(f"{S}lonely", ""): (None, None)},  # a URL other pages name
}


@pytest.mark.parametrize("check_id", sorted(LINES))
def test_canonical_findings_are_traced_to_their_link_element(site: str, archive: Path, check_id: str) -> None:
    located = _located(archive, site, check_id)
    for key, where in LINES[check_id].items():
        assert located[key] == where
