"""The built-in crawl checks: exact findings on a real crawl of /checks-site/ and on built archives."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

from nitpicker_core import PRIORITIES, Check, CheckContext, PageError, Resource
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.archives import archive_builder, page

# The leaf pages of /checks-site/: no link of theirs leads on (no-internal-outlinks), none declares a canonical
LEAVES = (
    "bare", "empty-description", "empty-title", "images", "jsonld", "long-description", "long-title",
    "no-description", "no-h1", "script-error", "social", "twin-a", "twin-b", "two-h1", "untitled",
)  # fmt: skip
LONG_TITLE = "A title far longer than any search result shows, so it will be cut off in the listing"
# What each built-in check finds on /checks-site/ (URLs with the site's origin as "", the external one as "EXT").
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "broken-link": {("/checks-site/", "/checks-site/gone"), ("/checks-site/", "/checks-site/nowhere")},
    "link-to-server-error": {("/checks-site/", "/checks-site/boom")},
    "link-to-failed-url": {("/checks-site/", "/checks-site/loop-a")},
    "link-to-redirect": {("/checks-site/", "/checks-site/chain-1"), ("/checks-site/", "/checks-site/old")},
    "redirect-chain": {("/checks-site/chain-1", "/checks-site/chain-2 → /checks-site/ok")},
    "redirect-loop": {("/checks-site/loop-a", "")},
    "external-link-broken": {("/checks-site/", "EXT/checks-site/nowhere")},
    "external-link-unreachable": {("/checks-site/", "http://127.0.0.1:1/nothing")},  # connection refused
    "external-link-blocked": {
        ("/checks-site/", "EXT/checks-site/blocked"),
        ("/checks-site/", "EXT/checks-site/limited"),
    },
    "isolated-page": set(),
    "nofollow-internal-link": set(),
    "page-too-deep": set(),
    # /checks-site/hidden (noindex) and /canonical are leaves too: tests/checks_crawl/test_directive_checks.py
    "no-internal-outlinks": {(f"/checks-site/{name}", "") for name in (*LEAVES, "canonical", "hidden")},
    "anchor-text-non-descriptive": set(),
    "link-to-non-canonical": {("/checks-site/", "/checks-site/canonical")},
    "noindex-linked": {("/checks-site/hidden", "")},
    "robots-blocked": {("/private/page", "")},
    "nofollow-page": set(),
    "robots-directives-conflict": set(),
    "robots-txt-unreachable": set(),  # a robots.txt of its own: tests/checks_crawl/test_directive_checks.py
    "robots-txt-blocks-start": set(),
    # /checks-site/gone and /nowhere are linked: broken-link's defects, not a second one each here (an unlinked
    # 4xx page is found: tests/checks/test_issue_rows.py); so is /checks-site/boom link-to-server-error's
    "client-error-page": set(),
    "server-error-page": set(),
    "failed-url": set(),
    "title-missing": {("/checks-site/empty-title", "empty"), ("/checks-site/untitled", "missing")},
    # the leaves show one word or two (their heading): low content, too short to be anyone's duplicate
    "content-exact-duplicate": set(),
    "content-near-duplicate": set(),
    # no page of the site writes anything with a script (/js-site/ has those: test_javascript_checks.py)
    "js-noindex-mismatch": set(),
    "js-links-rendered-only": set(),
    "js-text-rendered-only": set(),
    "js-head-changed": set(),
    "content-low": {
        ("/checks-site/", ""),
        ("/checks-site/no-h1", ""),
        ("/checks-site/ok", ""),
        ("/checks-site/two-h1", ""),
        *((f"/checks-site/{name}", "") for name in LEAVES if name not in ("no-h1", "two-h1")),
    },
    "title-duplicate": {("/checks-site/twin-a", "Twin Page"), ("/checks-site/twin-b", "Twin Page")},
    "title-too-long": {("/checks-site/long-title", LONG_TITLE)},
    "description-missing": {
        ("/checks-site/no-description", "missing"),
        ("/checks-site/empty-description", "empty"),
    },
    "description-duplicate": {
        ("/checks-site/twin-a", "Twin description"),
        ("/checks-site/twin-b", "Twin description"),
    },
    "description-too-long": {("/checks-site/long-description", " ".join(["word"] * 50))},
    "viewport-missing": {("/checks-site/bare", "")},
    "lang-missing": {("/checks-site/bare", "")},
    "canonical-invalid": set(),
    "canonical-mismatch": {("/checks-site/canonical", "/checks-site/ok")},
    # every indexable page but /canonical: tests/checks_crawl/test_canonical_checks.py has the other canonical checks
    "canonical-missing": {(f"/checks-site/{name}", "") for name in ("", "ok", *LEAVES)},
    "canonical-self": set(),
    "canonical-target-not-indexable": set(),
    "canonical-conflict": set(),
    "canonical-outside-head": set(),
    "canonical-not-linked": set(),
    "og-title-mismatch": {("/checks-site/social", "Social Title")},
    "og-description-mismatch": {("/checks-site/social", "Social description")},
    "h1-missing": {("/checks-site/no-h1", "")},
    "h1-multiple": {("/checks-site/two-h1", "First | Second")},
    "jsonld-parse-error": {("/checks-site/jsonld", "Expecting property name enclosed in double quotes")},
    "console-error": {("/checks-site/script-error", "Error: checks-site script failed")},
    "page-error": set(),
    "image-alt-missing": {("/checks-site/images", "/checks-site/img/no-alt.png")},
    "image-size-missing": {("/checks-site/images", "/checks-site/img/no-size.png")},
    "image-oversized": {("/checks-site/images", "/checks-site/img/big.png")},
    "missing-content-security-policy": {("/checks-site/bare", "Content-Security-Policy")},
    "missing-x-frame-options": {("/checks-site/bare", "X-Frame-Options")},
    "missing-x-content-type-options": {("/checks-site/bare", "X-Content-Type-Options")},
    "missing-referrer-policy": {("/checks-site/bare", "Referrer-Policy")},
    "missing-permissions-policy": {("/checks-site/bare", "Permissions-Policy")},
    "missing-strict-transport-security": set(),  # plain HTTP: browsers ignore HSTS there
    "mixed-content": set(),
    # /checks-site/ has no sitemap (the test site's /sitemap.xml is missing): tests/checks_crawl/test_sitemap_checks.py
    "sitemap-unreachable": set(),
    "sitemap-invalid": set(),
    "sitemap-over-limit": set(),
    "sitemap-non-indexable-url": set(),
    "sitemap-orphan": set(),
    "page-missing-from-sitemap": set(),
    "sitemap-url-in-several": set(),
    "sitemap-url-out-of-scope": set(),
    # /checks-site/ has no hreflang or rel=next/prev: tests/checks_crawl/test_hreflang_checks.py
    "hreflang-invalid-code": set(),
    "hreflang-invalid-url": set(),
    "hreflang-missing-return": set(),
    "hreflang-target-non-indexable": set(),
    "hreflang-missing-self": set(),
    "hreflang-missing-x-default": set(),
    "hreflang-duplicate-code": set(),
    "hreflang-inconsistent-code": set(),
    "hreflang-target-not-linked": set(),
    "pagination-target-not-200": set(),
    "pagination-target-not-linked": set(),
    "pagination-sequence-error": set(),
    "pagination-canonicalised-or-noindex": set(),
}


def _crawl_checks() -> dict[str, Check]:
    registry = check_registry(make_plugin_manager())
    return {name: registry[name] for name in registry.names() if registry.plugin_of(name) == "checks"}


def _findings(
    archive: Path, origin: str = "", external: str = "", commit: int | None = None
) -> dict[str, set[tuple[str, str]]]:
    """Every crawl check's findings on a commit (HEAD by default), origins shortened so expectations read plainly."""
    pm = make_plugin_manager()
    queries = query_registry(pm)

    def short(text: str) -> str:
        text = text.replace(external, "EXT") if external else text
        return text.replace(origin, "") if origin else text

    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(commit), queries)
        return {
            check.id: {(short(f.url), short(f.detail)) for f in check.findings(ctx)}  # type: ignore[misc]
            for check in _crawl_checks().values()
        }


def _located(archive: Path, origin: str, check: str) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    """(page, detail) → (``position``, ``html``) of a check's current findings in `issue-urls`, origins
    shortened; each line:col is checked to be where a start tag begins in the stored HTML the row names, the
    first that of its ``element``."""
    with open_archive(archive) as reader:
        found = run_query(
            query_registry(make_plugin_manager()), reader, "issue-urls", {"check": check, "limit": 1000}
        )
        rows = {}
        for item in found["items"]:
            key = (item["url"].replace(origin, ""), item["detail"].replace(origin, ""))
            rows[key] = (item.get("position"), item.get("html"))
            if item.get("position") is None:  # no element: no line (an element check's row says null)
                assert item.get("line") is item.get("col") is item.get("element") is None, item
                continue
            stored = reader.source(item["url"]) if item["html"] == "sent" else reader.html(item["url"])
            lines = (stored or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
            spots = [tuple(map(int, spot.split(":"))) for spot in item["position"].split(", ")]
            assert spots[0] == (item["line"], item["col"]), item
            for n, (line, col) in enumerate(spots):
                tag = lines[line - 1][col - 1 :].lower()
                assert tag.startswith(f"<{item['element']}" if n == 0 else "<"), (item, tag[:40])
    return rows


def _crawl(workdir: Path, *args: str) -> None:
    result = run_cli("crawl", "--parallels", "2", *args, cwd=workdir, timeout=300)
    # the loop fails internally (exit 1) and the refused port externally: defects of the site, not of the crawl
    assert result.returncode in (0, 1, 2) and "complete:" in result.stderr, result.stderr


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("checks-crawl")
    _crawl(workdir, "-o", str(workdir / "checks.nitpicker"), f"{site}/checks-site/")
    return workdir / "checks.nitpicker"


@pytest.fixture(scope="module")
def crawled(site: str, archive: Path) -> dict[str, set[tuple[str, str]]]:
    return _findings(archive, site, site.replace("localhost", "127.0.0.1"))  # before the re-crawl below


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_check_finds_exactly_the_defects_of_the_site(
    crawled: dict[str, set[tuple[str, str]]], check_id: str
) -> None:
    assert crawled[check_id] == EXPECTED[check_id]


# Where a few findings of each family are: line:col in the rendered HTML, which a browser serialises again
# without the white space before <head> (<head> ends line 1). A page's own head elements are on line 2
# (charset, viewport, title, description), what a page adds to its head on line 3, <body> on 4, the h1 on 5,
# the rest of the body on 6 (test_server/routes/checks_site.py).
LINES: dict[str, dict[tuple[str, str], str]] = {
    "title-too-long": {("/checks-site/long-title", LONG_TITLE): "2:91"},
    # missing: where it belongs, the <head>; empty: the <title> itself
    "title-missing": {
        ("/checks-site/untitled", "missing"): "1:32",
        ("/checks-site/empty-title", "empty"): "2:91",
    },
    "description-missing": {
        ("/checks-site/no-description", "missing"): "1:32",
        ("/checks-site/empty-description", "empty"): "3:1",
    },
    "description-too-long": {("/checks-site/long-description", " ".join(["word"] * 50)): "2:122"},
    "viewport-missing": {("/checks-site/bare", ""): "1:22"},  # <html> has no lang there: a shorter line
    "lang-missing": {("/checks-site/bare", ""): "1:16"},
    "og-description-mismatch": {("/checks-site/social", "Social description"): "3:50"},
    "h1-missing": {("/checks-site/no-h1", ""): "4:1"},  # where an h1 belongs: the <body>
    "h1-multiple": {("/checks-site/two-h1", "First | Second"): "5:1, 6:1"},
    "jsonld-parse-error": {  # the second script, the one that does not parse
        ("/checks-site/jsonld", "Expecting property name enclosed in double quotes"): "3:97"
    },
    "image-alt-missing": {("/checks-site/images", "/checks-site/img/no-alt.png"): "6:72"},
    "canonical-mismatch": {("/checks-site/canonical", "/checks-site/ok"): "3:1"},
    "noindex-linked": {("/checks-site/hidden", ""): "3:1"},  # its meta robots
    # every canonical-missing finding has the head's line; a check about no element has none
    "missing-content-security-policy": {("/checks-site/bare", "Content-Security-Policy"): ""},
}


@pytest.mark.parametrize("check_id", sorted(LINES))
def test_findings_are_traced_to_the_line_of_their_element(site: str, archive: Path, check_id: str) -> None:
    located = _located(archive, site, check_id)
    for key, position in LINES[check_id].items():
        assert located[key] == ((position, "rendered") if position else (None, None))


def test_every_finding_of_an_element_check_has_a_line(site: str, archive: Path) -> None:
    located = _located(archive, site, "canonical-missing")
    assert len(located) == len(EXPECTED["canonical-missing"])
    # the head: after <html lang="en">, or after <html> on /bare
    assert located.pop(("/checks-site/bare", "")) == ("1:22", "rendered")
    assert set(located.values()) == {("1:32", "rendered")}


def test_a_recrawl_of_the_unchanged_site_finds_the_same_findings(
    archive: Path, crawled: dict[str, set[tuple[str, str]]]
) -> None:
    # what fingerprints rest on: URL and detail carry no id, position or time that changes between crawls
    _crawl(archive.parent, "--update", str(archive))
    with open_archive(archive) as reader:
        first, second = sorted(c["id"] for c in reader.commits())
    assert _findings(archive, commit=first) == _findings(archive, commit=second)
    assert sum(len(found) for found in crawled.values()) == sum(len(found) for found in EXPECTED.values())


def test_every_crawl_check_is_expected_on_the_site() -> None:
    assert sorted(_crawl_checks()) == sorted(EXPECTED)


@pytest.mark.parametrize("check", list(_crawl_checks().values()), ids=lambda c: c.id)
def test_every_check_is_complete(check: Check) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", check.id)
    assert check.priority in PRIORITIES
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", check.category)
    assert check.title and check.title[0].isupper() and not check.title.endswith(".")
    assert check.description.endswith((".", ")")) and len(check.description) > 40
    assert check.fix.endswith(".") and check.fix[0].isupper()
    assert check.help_url == "" or check.help_url.startswith("https://")
    assert callable(check.findings) and check.analyzer == ""


def test_the_checks_cover_the_issue_and_its_priorities() -> None:
    checks = _crawl_checks()
    assert len(checks) >= 25
    assert checks["broken-link"].priority == "high"
    assert checks["robots-blocked"].priority == "info"
    # blocked is not broken: a bot wall ranks below a dead link
    assert PRIORITIES.index(checks["external-link-blocked"].priority) > PRIORITIES.index(
        checks["external-link-broken"].priority
    )
    assert checks["image-alt-missing"].defect == "image-alt"
    assert sum(1 for c in checks.values() if c.id.startswith("missing-") and c.category == "security") == 6


SITE = "https://shop.test"


def _built(tmp_path: Path, **extra: Any) -> dict[str, set[tuple[str, str]]]:
    """An HTTPS site: an orphan page, a failed internal URL, an HTTP image, one page without HSTS, a step error."""
    hsts = {
        "Strict-Transport-Security": "max-age=31536000",
        "Content-Security-Policy": "frame-ancestors 'none'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    archive = tmp_path / "shop.nitpicker"
    with archive_builder(archive, roots=[SITE + "/"]) as build:
        build.page(
            page(
                SITE + "/",
                title="Shop",
                links=["/about", "/down"],
                headers=hsts,
                metadata={"description": "The shop", "viewport": "width=device-width", "lang": "en"},
                resources=[SITE + "/logo.png", "http://cdn.test/old.png"],
            )
        )
        build.page(
            page(
                SITE + "/about",
                title="About",
                links=["/"],
                headers={**hsts, "Strict-Transport-Security": ""},
                metadata={"description": "About the shop", "viewport": "width=device-width", "lang": "en"},
                errors=[PageError("images:mobile", "timed out after 10 s"), PageError("console", "x")],
            )
        )
        build.page(
            page(
                SITE + "/orphan",
                title="Orphan",
                headers=hsts,
                links=["/orphan"],
                metadata={"description": "Nobody links here", "viewport": "width=device-width", "lang": "en"},
            )
        )
        build.page(page(SITE + "/down", status=None, content_type=None, extra={"error_kind": "timeout"}))
        build.resource(
            Resource(url="http://cdn.test/old.png", status=200, content_type="image/png", is_external=True),
            SITE + "/",
        )
    return _findings(archive, SITE)


def test_https_only_checks_and_orphans_on_a_built_archive(tmp_path: Path) -> None:
    found = _built(tmp_path)
    assert found["missing-strict-transport-security"] == {("/about", "Strict-Transport-Security")}
    assert found["missing-x-frame-options"] == set()  # CSP frame-ancestors stands in for it
    assert found["mixed-content"] == {("/", "http://cdn.test/old.png")}
    assert found["isolated-page"] == {("/orphan", "")}  # a link to itself does not count
    assert found["failed-url"] == set()  # /down is linked: link-to-failed-url's defect, listed with its link
    assert found["link-to-failed-url"] == {("/", "/down")}
    assert found["page-error"] == {("/about", "images:mobile: timed out after 10 s")}
    assert found["console-error"] == {("/about", "x")}


def test_unlinked_5xx_and_failed_urls_are_page_findings_and_linked_ones_link_findings(tmp_path: Path) -> None:
    archive = tmp_path / "status.nitpicker"
    with archive_builder(archive, roots=[SITE + "/", SITE + "/crash", SITE + "/lost"]) as build:
        build.page(page(SITE + "/", title="Shop", links=["/boom", "/down"]))
        for path in ("/boom", "/crash"):
            build.page(page(SITE + path, status=500, content_type="text/html"))
        for path in ("/down", "/lost"):
            build.page(page(SITE + path, status=None, content_type=None, extra={"error_kind": "timeout"}))
    found = _findings(archive, SITE)
    # a URL nothing links to (a start URL, a sitemap entry) is the page's defect; a linked one the link's
    assert found["server-error-page"] == {("/crash", "500")}
    assert found["link-to-server-error"] == {("/", "/boom")}
    assert found["failed-url"] == {("/lost", "timeout")}
    assert found["link-to-failed-url"] == {("/", "/down")}


def _redirects(tmp_path: Path, chains: bool) -> dict[str, set[tuple[str, str]]]:
    """/ links to /a, which redirects /a → /b → /c → /end, and to /one, a single redirect to /end.

    With ``chains`` false the rows are stored as crawls before chains were kept stored them: each redirect
    with its final destination only, the hops passed on the way without a status.
    """
    archive = tmp_path / ("chains.nitpicker" if chains else "old.nitpicker")
    hops = [SITE + "/b", SITE + "/c", SITE + "/end"]

    def redirect(url: str, status: int | None, chain: list[str]) -> Any:
        return replace(page(url, None, content_type="", redirect_chain=chain), status=status, is_target=False)

    with archive_builder(archive, roots=[SITE + "/"]) as build:
        build.page(page(SITE + "/", title="Home", links=["/a", "/one", "/end"]))
        build.page(page(SITE + "/end", title="End"))
        build.page(redirect(SITE + "/a", 301, hops if chains else hops[-1:]))
        for i, hop in enumerate(hops[:-1]):
            build.page(redirect(hop, None, hops[i + 1 :] if chains else hops[-1:]))
        build.page(redirect(SITE + "/one", 302, hops[-1:]))
    return _findings(archive, SITE)


def test_a_redirect_chain_is_found_where_it_starts_with_its_hops(tmp_path: Path) -> None:
    found = _redirects(tmp_path, chains=True)
    # /b starts a chain of its own (/c → /end) but only as a hop of /a's: one finding, where links point
    assert found["redirect-chain"] == {("/a", "/b → /c → /end")}
    assert found["link-to-redirect"] == {("/", "/a"), ("/", "/one")}


def test_commits_stored_before_chains_were_kept_still_name_the_hops(tmp_path: Path) -> None:
    assert _redirects(tmp_path, chains=False)["redirect-chain"] == {("/b", "/end"), ("/c", "/end")}


def test_the_hosts_urls_outside_the_scope_are_internal_links_never_pages(tmp_path: Path) -> None:
    """A crawl of /docs/ that checked /about (404), /shop/ (200) and /down (500) of its host, and two external URLs."""
    from nitpicker_core import run_query

    archive = tmp_path / "docs.nitpicker"
    outside = {"outside_scope": True}

    def checked(path: str, status: int, content_type: str) -> Any:  # as the crawler stores a checked URL
        return replace(
            page(
                SITE + path,
                None,
                title="Shop" if status == 200 else "",
                status=status,
                content_type=content_type,
            ),
            html=None,
            anchors=[],
            is_target=False,
            extra=dict(outside),
        )

    with archive_builder(archive, roots=[SITE + "/docs/"]) as build:
        build.page(
            page(
                SITE + "/docs/",
                title="Docs",
                links=["/docs/a", "/about", "/shop/", "/down", "https://gone.test/", "https://moved.test/x"],
            )
        )
        build.page(page(SITE + "/docs/a", title="A", links=["/docs/"]))
        build.page(checked("/about", 404, "text/plain"))
        build.page(checked("/shop/", 200, "text/html"))
        build.page(checked("/down", 500, "text/html"))
        build.page(
            page(
                "https://gone.test/",
                status=None,
                content_type=None,
                external=True,  # type: ignore[arg-type]
                extra={"error_kind": "dns"},
            )
        )
        build.page(page("https://moved.test/x", status=410, content_type="text/html", external=True))
    found = _findings(archive, SITE)
    assert found["broken-link"] == {("/docs/", "/about")}
    assert found["link-to-server-error"] == {("/docs/", "/down")}
    assert found["external-link-broken"] == {("/docs/", "https://moved.test/x")}  # answered 4xx/5xx only
    assert found["external-link-unreachable"] == {("/docs/", "https://gone.test/")}  # no answer at all
    pages_checked = {
        url
        for check in (
            "isolated-page",
            "description-missing",
            "viewport-missing",
            "title-missing",
            "missing-content-security-policy",
        )
        for url, _ in found[check]
    }
    assert pages_checked == {"/docs/", "/docs/a"}  # /shop/ was checked, never crawled: no page of the crawl
    with open_archive(archive) as reader:
        summary = run_query(query_registry(make_plugin_manager()), reader, "summary", {})
    assert summary["counts"]["internal"] == {"urls": 5, "pages": 2, "pages_loose": 2, "outside_scope": 3}
    assert summary["counts"]["external"]["urls"] == 2
