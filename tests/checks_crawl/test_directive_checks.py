"""The directive and link checks: exact findings on a real crawl of /directives-site/
(test_server/routes/directives_site.py)."""

from __future__ import annotations

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings

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
}


@pytest.fixture(scope="module")
def crawled(site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[tuple[str, str]]]:
    workdir = tmp_path_factory.mktemp("directives-crawl")
    _crawl(workdir, "-o", str(workdir / "directives.nitpicker"), f"{site}{S}")
    return _findings(workdir / "directives.nitpicker", site)


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_directive_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]
