"""End-to-end: scope is not ownership. A subfolder audit of /docs-en/tutorial/ owns its host: same-host URLs
outside the scope are internal links, checked and not crawled, and unreachable external hosts are a check of
their own (issue 27, point 2: measured on Python's docs, the one real same-host 404 was filed as an external
link among 89 DNS failures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

from nitpicker_core import CheckContext, run_query
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry

pytestmark = pytest.mark.browser

START = "/docs-en/tutorial/index.html"
IN_SCOPE = (
    "/docs-en/tutorial/index.html",
    "/docs-en/tutorial/intro.html",
    "/docs-en/tutorial/controlflow.html",
)
OUTSIDE = ("/docs-en/library/index.html", "/docs-en/glossary.html", "/docs-en/whatsnew/changelog.html")
UNRESOLVABLE = "http://docs.unresolvable.invalid/"


class Audit:
    """The crawl of /docs-en/tutorial/index.html: its CLI output, pages, summary and crawl checks' findings."""

    def __init__(self, archive: Path, result: Any, site: str) -> None:
        self.archive, self.result, self.site = archive, result, site
        pm = make_plugin_manager()
        queries, checks = query_registry(pm), check_registry(pm)
        with open_archive(archive) as reader:
            commit = reader.resolve(None)
            self.pages = {p["url"]: p for p in reader.pages()}
            self.anchors = {url: list(reader.anchors(url)) for url in self.pages}
            self.summary = run_query(queries, reader, "summary", {}, commit)
            ctx = CheckContext(reader, commit, queries)
            self.findings = {
                name: {(self.short(f.url), self.short(f.detail)) for f in checks[name].findings(ctx)}  # type: ignore[misc]
                for name in checks.names()
                if checks.plugin_of(name) == "checks"
            }

    def short(self, text: str) -> str:
        return text.replace(self.site, "")


@pytest.fixture(scope="module")
def audit(site: str, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    workdir = tmp_path_factory.mktemp("scope-ownership")
    archive = workdir / "docs.nitpicker"
    result = run_cli(
        "crawl",
        "-o",
        str(archive),
        "--parallels",
        "2",
        "--no-image",
        "--json",
        site + START,
        cwd=workdir,
        timeout=300,
    )
    assert result.returncode in (1, 2) and archive.exists(), result.stderr  # the site has broken links
    return Audit(archive, result, site)


def test_same_host_urls_outside_the_scope_are_internal_and_only_checked(audit: Audit) -> None:
    for path in OUTSIDE:
        row = audit.pages[audit.site + path]
        assert (row["is_external"], row["is_target"], row["extra"].get("outside_scope")) == (
            False,
            False,
            True,
        ), row
        assert audit.anchors[audit.site + path] == []  # checked, never rendered: no links followed from it
    assert audit.pages[audit.site + "/docs-en/whatsnew/changelog.html"]["status"] == 404
    assert audit.pages[audit.site + "/docs-en/library/index.html"]["status"] == 200
    for path in IN_SCOPE:
        row = audit.pages[audit.site + path]
        assert (row["is_external"], row["is_target"], row["extra"].get("outside_scope")) == (
            False,
            True,
            None,
        )
    assert audit.pages[UNRESOLVABLE]["is_external"]


def test_the_summary_counts_them_as_internal_urls_not_as_pages(audit: Audit) -> None:
    internal, external = audit.summary["counts"]["internal"], audit.summary["counts"]["external"]
    # in scope: the three tutorial pages and the text/plain 404 below them; outside: three checked URLs
    assert (internal["pages"], internal["outside_scope"], internal["urls"]) == (3, 3, 7)
    assert external["urls"] == 2  # the unresolvable host and the 404 on 127.0.0.1, nothing of localhost
    fill = {row["field"]: row for row in audit.summary["metadata_fill"]}
    assert fill["title"]["total"] == 3


def test_the_crawl_result_says_how_many_were_checked_outside_the_scope(audit: Audit) -> None:
    said = json.loads(audit.result.stdout)
    assert said["pages"] == 3 and said["urls"] == {"internal": 7, "external": 2, "outside_scope": 3}
    # the same-host 404 is no external error any more: one unresolvable host and one external 404 are
    assert said["errors"]["external"] == 2 and said["errors"]["internal"] == 0


def test_a_same_host_404_outside_the_scope_is_a_broken_internal_link(audit: Audit) -> None:
    found = audit.findings
    assert found["broken-link"] == {
        (START, "/docs-en/whatsnew/changelog.html"),
        (START, "/docs-en/tutorial/missing.html"),
    }
    ext = audit.site.replace("localhost", "127.0.0.1")
    assert found["external-link-broken"] == {(START, ext + "/docs-en/ext-missing")}
    assert found["external-link-unreachable"] == {(START, UNRESOLVABLE)}


def test_urls_outside_the_scope_are_no_pages_for_the_page_checks(audit: Audit) -> None:
    found = audit.findings
    outside = set(OUTSIDE)
    for check in (
        "isolated-page",
        "description-missing",
        "viewport-missing",
        "h1-missing",
        "title-missing",
        "missing-content-security-policy",
    ):
        assert not {url for url, _ in found[check]} & outside, check
    assert {url for url, _ in found["description-missing"]} == set(IN_SCOPE)  # the docs have none


def test_the_crawl_rules_still_apply_outside_the_scope(crawl, site, external):
    # --no-fetch-external leaves external links unrequested; the host's own URLs are internal: still checked
    c = crawl(
        f"{site}/owned/sub/",
        "--no-fetch-external",
        "--exclude",
        "/owned/secret.html",
        "--header",
        "X-Audit: secret-token",
        "--no-image",
        ok=(0,),
    )
    other = c.page(f"{site}/owned/other.html")
    assert (other["status"], other["is_external"], other["is_target"], other["extra"]) == (
        200,
        False,
        False,
        {"outside_scope": True},
    )
    assert c.anchors[f"{site}/owned/other.html"] == [] and f"{site}/owned/further.html" not in c.pages
    assert c.page(f"{site}/owned/gone.html")["status"] == 404
    assert c.page(f"{external}/owned/other.html")["status"] is None  # external: not requested
    for url, reason in (
        (f"{site}/owned/secret.html", "excluded"),
        (f"{site}/private/page", "blocked by robots.txt"),
    ):
        row = c.page(url)
        assert (row["is_skipped"], row["skip_reason"], row["is_external"], row["extra"]) == (
            True,
            reason,
            False,
            {"outside_scope": True},
        )
    # --header values go to the scope only, never to the rest of the host
    assert c.page(f"{site}/owned/echo.html")["title"] == "Header none"
    assert c.page(f"{site}/owned/sub/inner.html")["title"] == "Owned Inner"
    said = json.loads(c.result.stdout)
    assert (said["pages"], said["urls"]["outside_scope"], said["urls"]["external"]) == (2, 5, 1)
