"""canonical-invalid: a canonical that is no http(s) URL of the site is its own high-priority check.

Measured on Python's HTML docs: a ``file:///usr/share/doc/…`` canonical on every page was reported only as a
low ``canonical-mismatch``. Crawled for real (/docs-en/, /canonicals/), and on built archives for the
commits written before the scrape kept the canonical as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from nitpicker_checks.pages import canonical_is_invalid
from support import run_cli

from nitpicker_core import CheckContext
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.archives import archive_builder, page

CANONICAL_CHECKS = ("canonical-invalid", "canonical-mismatch")


def _found(archive: Path, origin: str) -> dict[str, set[tuple[str, str]]]:
    pm = make_plugin_manager()
    registry = check_registry(pm)
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(None), query_registry(pm))
        return {
            name: {
                (f.url.replace(origin, ""), f.detail.replace(origin, ""))
                for f in registry[name].findings(ctx)
            }
            for name in CANONICAL_CHECKS
        }


def _crawl(tmp_path: Path, start: str) -> Path:
    archive = tmp_path / "site.nitpicker"
    result = run_cli("crawl", "--parallels", "2", "-o", str(archive), start, cwd=tmp_path, timeout=300)
    assert result.returncode in (0, 1, 2) and "complete:" in result.stderr, result.stderr
    return archive


def test_the_check_is_high_priority_and_an_issue() -> None:
    check = check_registry(make_plugin_manager())["canonical-invalid"]
    assert (check.priority, check.type, check.category) == ("high", "issue", "indexability")


@pytest.mark.browser
def test_a_file_canonical_on_every_docs_page_is_invalid_not_a_mismatch(site: str, tmp_path: Path) -> None:
    found = _found(_crawl(tmp_path, f"{site}/docs-en/tutorial/index.html"), site)
    written = {url: detail for url, detail in found["canonical-invalid"]}
    assert written["/docs-en/tutorial/index.html"] == "file:///usr/share/doc/python3/html/tutorial/index.html"
    assert written and all(
        detail.startswith("file:///usr/share/doc/python3/html/") for detail in written.values()
    )
    assert found["canonical-mismatch"] == set()


def _written(archive: Path) -> dict[str, str | None]:
    """The canonical href the scrape kept as written, by page path."""
    with open_archive(archive) as reader:
        found = reader.execute(
            "SELECT u.url, json_extract(ps.extra, '$.canonical_href') FROM commit_page cp JOIN url u "
            "ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id WHERE u.url LIKE '%/canonicals/%'"
        )
        return {url.split("/canonicals/")[1]: written for url, written in found}


@pytest.mark.browser
def test_each_wrong_way_of_writing_a_canonical_is_invalid(site: str, tmp_path: Path) -> None:
    archive = _crawl(tmp_path, f"{site}/canonicals/")
    found = _found(archive, site)
    host = site.removeprefix("http://")
    assert found["canonical-invalid"] == {
        ("/canonicals/javascript", "javascript:void(0)"),
        ("/canonicals/data", "data:text/html,<p>copy</p>"),
        ("/canonicals/empty", 'href=""'),
        ("/canonicals/blank", 'href="   "'),
        ("/canonicals/fragment", "#top"),
        ("/canonicals/spaces", "http://exa mple.test/canonicals/spaces"),
        ("/canonicals/no-host", "http://"),
    }
    # valid canonicals naming another page stay mismatches; none of the invalid ones is one too. An https:
    # canonical on this http: site is the move to HTTPS: valid, the page canonicalised to it
    assert found["canonical-mismatch"] == {
        ("/canonicals/elsewhere", "/canonicals/"),
        ("/canonicals/relative-query", "/canonicals/relative-self?lang=en"),
        ("/canonicals/other-scheme", f"https://{host}/canonicals/other-scheme"),
    }
    # kept only where the resolved URL hides the defect: valid relative canonicals store nothing new
    written = _written(archive)
    assert {name: value for name, value in written.items() if value is not None} == {
        "empty": "",
        "blank": "   ",
        "fragment": "#top",
        "spaces": "http://exa mple.test/canonicals/spaces",
    }


def test_commits_without_the_written_value_judge_the_resolved_one(tmp_path: Path) -> None:
    site = "https://docs.test"
    archive = tmp_path / "built.nitpicker"
    with archive_builder(archive, roots=[site + "/"]) as build:
        build.page(
            page(site + "/", title="Home", links=["/a", "/b", "/c", "/d"], metadata={"canonical": site + "/"})
        )
        build.page(
            page(site + "/a", title="A", links=["/"], metadata={"canonical": "file:///usr/share/a.html"})
        )
        build.page(page(site + "/b", title="B", links=["/"], metadata={"canonical": "http://docs.test/b"}))
        # written empty: the resolved value is the page itself, only the kept attribute tells
        build.page(
            page(
                site + "/c",
                title="C",
                links=["/"],
                metadata={"canonical": site + "/c"},
                extra={"canonical_href": ""},
            )
        )
        build.page(
            page(
                site + "/d",
                title="D",
                links=["/"],
                metadata={"canonical": site + "/"},
                extra={"canonical_href": "/"},
            )
        )
    found = _found(archive, site)
    assert found["canonical-invalid"] == {
        ("/a", "file:///usr/share/a.html"),
        ("/b", "http://docs.test/b"),
        ("/c", 'href=""'),
    }
    assert found["canonical-mismatch"] == {("/d", "/")}


@pytest.mark.parametrize(
    ("written", "invalid"),
    [
        ("https://site.test/page", False),
        ("/page", False),
        ("page.html", False),
        ("//site.test/page", False),
        ("https://other.test/page", False),
        ("HTTPS://site.test/", False),
        ("", True),
        ("  ", True),
        ("#main", True),
        ("file:///usr/share/doc/x.html", True),
        ("javascript:;", True),
        ("data:,x", True),
        ("mailto:a@site.test", True),
        ("http://site.test/page", True),
        ("https://", True),
        ("https:///page", True),
        ("https://site .test/", True),
        ("/my page.html", True),
        ("https://[::1", True),
        ("https://site.test:port/", True),
        ("C:\\docs\\index.html", True),
    ],
)
def test_what_counts_as_invalid(written: str, invalid: bool) -> None:
    assert canonical_is_invalid(written, "https://site.test/dir/here") is invalid


def test_the_quick_answer_for_plain_urls_is_that_of_urlsplit() -> None:
    # canonical_is_invalid answers "valid" for a plain http(s) URL on a page of the same scheme without
    # urlsplit: on every one of these (plain or not, either page) it answers as urlsplit does
    from nitpicker_checks.pages import _slow_is_invalid

    hosts = [
        "site.test",
        "SITE.test",
        "a",
        ".",
        "-",
        "site.test:8080",
        "site.test:0",
        "site.test:",
        "[::1]",
        "ü.test",
    ]
    rests = ["", "/", "/p?q=1#f", "?x", "#top", "/a b", "/\u00a0x", "/é", "/[x]", "/\tx"]
    pages = ["https://site.test/dir/here", "http://site.test/", "HTTPS://site.test", "https://[::1]/"]
    checked = 0
    for scheme in ("https", "http", "HTTP", "ftp"):
        for host in hosts:
            for rest in rests:
                value = f"{scheme}://{host}{rest}"
                for page_url in pages:
                    assert canonical_is_invalid(value, page_url) is _slow_is_invalid(value, page_url), (
                        value,
                        page_url,
                    )
                    checked += 1
    assert checked == 4 * len(hosts) * len(rests) * len(pages)
