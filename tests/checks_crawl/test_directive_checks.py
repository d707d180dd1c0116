"""The directive and link checks: exact findings on a real crawl of /directives-site/
(test_server/routes/directives_site.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings
from flask import Flask, Response

from nitpicker_demo import serve_app

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
def crawled(site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[tuple[str, str]]]:
    workdir = tmp_path_factory.mktemp("directives-crawl")
    _crawl(workdir, "-o", str(workdir / "directives.nitpicker"), f"{site}{S}")
    return _findings(workdir / "directives.nitpicker", site)


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
