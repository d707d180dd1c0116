"""The hreflang and pagination checks: exact findings on a real crawl of /hreflang-site/ and /pagination-site/."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings, _located
from nitpicker_checks.pagination import looping

from nitpicker_core import link_header_alternates, page_alternates, sitemap_alternates
from nitpicker_core.archive import open_archive

H = "/hreflang-site"
P = "/pagination-site"
# What each check finds on the two sections (the site's origin written as "")
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "hreflang-invalid-code": {
        (f"{H}/bad", 'hreflang=""'),
        (f"{H}/bad", 'hreflang="en_US"'),
        (f"{H}/bad", 'hreflang="not a code"'),
        (f"{H}/header", 'hreflang="qq-bogus-tag-x"'),  # from the HTTP Link header
        (f"{H}/sm-de", 'hreflang="en_GB"'),  # from the sitemap
    },
    "hreflang-invalid-url": {(f"{H}/bad", "fr: javascript:alert(1)")},
    "hreflang-missing-return": {
        (f"{H}/dup", f"{H}/fr"),
        (f"{H}/dup", f"{H}/fr-ca"),
        (f"{H}/en", f"{H}/de"),
        (f"{H}/header", f"{H}/fr"),  # a relative target of the Link header, resolved
        (f"{H}/noself", f"{H}/en"),
        (f"{H}/sm-de", f"{H}/sm-en"),  # both sets in the sitemap
    },
    "hreflang-target-non-indexable": {
        (f"{H}/en", f"{H}/gone (404)"),
        (f"{H}/en", f"{H}/noindex-it (noindex)"),
        (f"{H}/en", f"{H}/old-es (redirects to {H}/es)"),
        (f"{H}/sm-de", f"{H}/gone (404)"),
    },
    "hreflang-missing-self": {(f"{H}/noself", "")},
    "hreflang-missing-x-default": {(f"{H}/de", ""), (f"{H}/header", ""), (f"{H}/sm-de", "")},
    "hreflang-duplicate-code": {(f"{H}/dup", f"fr: {H}/fr | {H}/fr-ca")},
    "hreflang-inconsistent-code": {(f"{H}/en", f"{H}/de: de here, de-at there")},
    "hreflang-target-not-linked": {(f"{H}/lonely", f"{H}/hidden")},  # never crawled: no return judged
    "pagination-target-not-200": {(f"{P}/list-4", f"next: {P}/gone (404)")},
    "pagination-target-not-linked": {(f"{P}/list-3", f"next: {P}/list-4")},
    "pagination-sequence-error": {
        (f"{P}/list-3", f"next {P}/list-4 has prev {P}/list-2"),
        (f"{P}/list-4", f"prev {P}/list-2 has next {P}/list-3"),
        (f"{P}/loop-a", f"next and prev name the same page: {P}/loop-b"),
        (f"{P}/loop-a", "the next links lead back to this page"),
        (f"{P}/loop-b", f"next and prev name the same page: {P}/loop-a"),
        (f"{P}/loop-b", "the next links lead back to this page"),
        (f"{P}/self", "next points to the page itself"),
    },
    "pagination-canonicalised-or-noindex": {
        (f"{P}/header-2", "noindex"),  # its prev comes from the HTTP Link header only
        (f"{P}/list-4", f"canonicalised to {P}/list-1"),
    },
}


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("hreflang-crawl")
    sitemap = f"{site}{H}/sitemap.xml"
    _crawl(workdir, "-o", str(workdir / "h.nitpicker"), "--sitemap", sitemap, f"{site}{H}/", f"{site}{P}/")
    return workdir / "h.nitpicker"


@pytest.fixture(scope="module")
def crawled(site: str, archive: Path) -> dict[str, set[tuple[str, str]]]:
    return _findings(archive, site)


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]


# Where the findings are in the rendered HTML (test_server/routes/hreflang_site.py): <head> ends line 1, the
# charset and the title are lines 2 and 3, the page's <link>s one a line from line 4 in the order written.
LINES: dict[str, dict[tuple[str, str], tuple[str | None, str | None]]] = {
    "hreflang-invalid-code": {
        (f"{H}/bad", 'hreflang=""'): ("5:1", "rendered"),
        (f"{H}/bad", 'hreflang="en_US"'): ("6:1", "rendered"),
        (f"{H}/header", 'hreflang="qq-bogus-tag-x"'): (None, None),  # the HTTP Link header's
        (f"{H}/sm-de", 'hreflang="en_GB"'): (None, None),  # the sitemap's
    },
    "hreflang-invalid-url": {(f"{H}/bad", "fr: javascript:alert(1)"): ("7:1", "rendered")},
    "hreflang-missing-return": {(f"{H}/en", f"{H}/de"): ("6:1", "rendered")},
    "hreflang-target-non-indexable": {(f"{H}/en", f"{H}/gone (404)"): ("9:1", "rendered")},
    # the set that lacks it: its alternates, where the missing one belongs
    "hreflang-missing-self": {(f"{H}/noself", ""): ("4:1, 5:1", "rendered")},
    "hreflang-missing-x-default": {(f"{H}/de", ""): ("4:1", "rendered"), (f"{H}/sm-de", ""): (None, None)},
    "hreflang-duplicate-code": {(f"{H}/dup", f"fr: {H}/fr | {H}/fr-ca"): ("5:1, 6:1", "rendered")},
    "hreflang-inconsistent-code": {(f"{H}/en", f"{H}/de: de here, de-at there"): ("6:1", "rendered")},
    "pagination-target-not-200": {(f"{P}/list-4", f"next: {P}/gone (404)"): ("5:1", "rendered")},
    "pagination-target-not-linked": {(f"{P}/list-3", f"next: {P}/list-4"): ("5:1", "rendered")},
    "pagination-sequence-error": {
        (f"{P}/list-3", f"next {P}/list-4 has prev {P}/list-2"): ("5:1", "rendered"),
        (f"{P}/list-4", f"prev {P}/list-2 has next {P}/list-3"): ("4:1", "rendered"),
        (f"{P}/loop-a", f"next and prev name the same page: {P}/loop-b"): ("4:1, 5:1", "rendered"),
        (f"{P}/loop-a", "the next links lead back to this page"): ("4:1", "rendered"),
        (f"{P}/self", "next points to the page itself"): ("4:1", "rendered"),
    },
    "pagination-canonicalised-or-noindex": {
        (f"{P}/header-2", "noindex"): ("4:1", "rendered"),  # its meta robots
        (f"{P}/list-4", f"canonicalised to {P}/list-1"): ("6:1", "rendered"),  # its canonical <link>
    },
}


@pytest.mark.parametrize("check_id", sorted(LINES))
def test_findings_are_traced_to_their_link_element(site: str, archive: Path, check_id: str) -> None:
    located = _located(archive, site, check_id)
    for key, where in LINES[check_id].items():
        assert located[key] == where


def test_no_other_check_of_the_families_is_left_untested(crawled: dict[str, set[tuple[str, str]]]) -> None:
    assert {c for c in crawled if c.startswith(("hreflang-", "pagination-"))} == set(EXPECTED)


def test_alternates_are_read_from_markup_and_link_headers(site: str, archive: Path) -> None:
    with open_archive(archive) as reader:
        found = page_alternates(reader, reader.resolve(None))
    header = {
        (a.url.replace(site, ""), a.kind, a.href.replace(site, ""), a.hreflang)
        for a in found
        if a.source == "header"
    }
    assert header == {
        (f"{H}/header", "hreflang", f"{H}/header", "ja"),
        (f"{H}/header", "hreflang", f"{H}/fr", "fr"),
        (f"{H}/header", "hreflang", f"{H}/header", "qq-bogus-tag-x"),
        (f"{P}/header-1", "next", f"{P}/header-2", ""),
        (f"{P}/header-2", "prev", f"{P}/header-1", ""),
    }
    markup = {
        (a.url.replace(site, ""), a.kind, a.href.replace(site, "")) for a in found if a.source == "html"
    }
    assert (f"{P}/list-2", "prev", f"{P}/list-1") in markup and (
        f"{P}/list-2",
        "next",
        f"{P}/list-3",
    ) in markup


def test_alternates_are_read_from_sitemaps_xhtml_links(site: str, archive: Path) -> None:
    with open_archive(archive) as reader:
        found = sitemap_alternates(reader, reader.resolve(None))
    read = {(a.url.replace(site, ""), a.hreflang, a.href.replace(site, "")) for a in found}
    assert {a.source for a in found} == {"sitemap"} and len(read) == len(found)
    assert read == {
        (f"{H}/sm-en", "en", f"{H}/sm-en"),
        (f"{H}/sm-en", "fr", f"{H}/sm-fr"),
        (f"{H}/sm-en", "ja", f"{H}/sm-ja"),
        (f"{H}/sm-en", "x-default", f"{H}/sm-en"),
        (f"{H}/sm-fr", "en", f"{H}/sm-en"),  # its <link> of the sitemap namespace is not read
        (f"{H}/sm-fr", "fr", f"{H}/sm-fr"),
        (f"{H}/sm-fr", "x-default", f"{H}/sm-en"),
        (f"{H}/sm-de", "de", f"{H}/sm-de"),
        (f"{H}/sm-de", "en", f"{H}/sm-en"),
        (f"{H}/sm-de", "en_GB", f"{H}/sm-en"),
        (f"{H}/sm-de", "es", f"{H}/gone"),
        (f"{H}/gone", "not a code", f"{H}/gone"),  # stored; the checks judge pages only
    }


@pytest.mark.parametrize(
    "value",
    [
        "<" * 200_000,
        ";" * 200_000 + "<x>",
        '<a>; rel="alternate"; hreflang=' + '"' * 100_000,
        "<javascript:alert(1)>; rel=next",
        "\x00\n\n<>; rel=prev; rel=next",
        ", ".join(f"<p{i}>; rel=next" for i in range(5_000)),
    ],
)
def test_hostile_link_headers_end_as_data_in_bounded_time(value: str) -> None:
    found = link_header_alternates("http://example.test/a/b", value)
    assert all(a.kind in ("hreflang", "next", "prev") for a in found)


def test_loops_of_next_links_are_found_in_one_pass_over_long_series() -> None:
    def series(nexts: dict[str, str]) -> dict[str, dict[str, list[str]]]:
        return {url: {"next": [target], "prev": []} for url, target in nexts.items()}

    assert looping(series({"a": "b", "b": "a", "c": "a", "s": "s", "x": "y"})) == {"a", "b"}
    long = 100_000  # a straight series and a ring of that length: linear, not quadratic
    assert looping(series({str(i): str(i + 1) for i in range(long)})) == set()
    assert len(looping(series({str(i): str((i + 1) % long) for i in range(long)}))) == long
