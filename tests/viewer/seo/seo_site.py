"""What the SEO family views must show on one crawl of test_server's five SEO sections (conftest.py crawls it)."""

from __future__ import annotations

from checks_crawl import (
    test_canonical_checks,
    test_directive_checks,
    test_hreflang_checks,
    test_sitemap_checks,
)

SECTIONS = ("/sitemap-site/", "/canonical-site/", "/hreflang-site/", "/pagination-site/", "/directives-site/")
# the sitemaps given besides the sitemap site's (test_sitemap_checks._args): the hreflang site's, whose
# xhtml:link alternates test_hreflang_checks expects
HREFLANG_SITEMAP = "/hreflang-site/sitemap.xml"

# The checks each view lists, by id (the view's own rule must give exactly these: a family is a set of checks)
FAMILIES: dict[str, set[str]] = {
    "canonicals": {
        "canonical-missing",
        "canonical-self",
        "canonical-mismatch",
        "canonical-target-not-indexable",
        "canonical-invalid",
        "canonical-conflict",
        "canonical-outside-head",
        "canonical-not-linked",
    },
    "sitemaps": set(test_sitemap_checks.SITEMAP_CHECKS),
    "hreflang": {check for check in test_hreflang_checks.EXPECTED if check.startswith("hreflang-")},
    "pagination": {check for check in test_hreflang_checks.EXPECTED if check.startswith("pagination-")},
    # issue 29's "directives and links": what nitpicker_checks.directives registers, with the crawl's older
    # checks of links to noindex and to robots-blocked pages
    "directives": set(test_directive_checks.EXPECTED),
}


def _section_findings() -> dict[str, set[tuple[str, str]]]:
    """Each check's findings as the per-section tests of checks_crawl assert them (origin written as "")."""
    found: dict[str, set[tuple[str, str]]] = {}
    for module in (test_canonical_checks, test_sitemap_checks, test_hreflang_checks, test_directive_checks):
        for check, findings in module.EXPECTED.items():
            found.setdefault(check, set()).update(findings)
    return found


SECTION_FINDINGS = _section_findings()
# Checks whose findings on one crawl of all five sections go beyond what each section's own test sees: a page
# of one section is also a page without a canonical, missing from the sitemaps, linked while noindex, ...
# (URLs, findings) on the combined crawl, counted by hand from the sections (test_server/routes/*_site.py).
ACROSS_SECTIONS: dict[str, tuple[int, int]] = {
    # /canonical-site/js (/pagination-site/chapter-1 and -2 have https canonicals of http pages: the move to
    # HTTPS, valid, so they are canonicalised)
    "canonical-invalid": (1, 1),
    # the canonical site's 7, /directives-site/copy, /pagination-site/list-4 and chapter-1 and -2,
    # /sitemap-site/canonicalised
    "canonical-mismatch": (12, 12),
    # every indexable HTML page of the five sections without a canonical (the canonical site's /missing)
    "canonical-missing": (42, 42),
    # "/" of the canonical site links 7 canonicalised pages; "/" of three other sections one each; the
    # pagination site's pages linking its https-canonicalised chapters
    "link-to-non-canonical": (6, 13),
    # /directives-site/dead-end, and four leaf pages of the other sections
    "no-internal-outlinks": (5, 5),
    # a noindex page in each section
    "noindex-linked": (5, 5),
    # every indexable page the sitemaps leave out: of the canonical, directives and pagination sections
    # (/canonical-site/js too: its javascript: canonical is ignored), of the hreflang section all but the
    # three its sitemap lists, and /sitemap-site/unlisted
    "page-missing-from-sitemap": (42, 42),
    # the sitemap site's five, and /hreflang-site/gone (404) that the hreflang sitemap lists
    "sitemap-non-indexable-url": (6, 6),
}


def counts(check: str) -> tuple[int, int]:
    """(URLs, findings) the views must show for ``check`` on the crawl."""
    if check in ACROSS_SECTIONS:
        return ACROSS_SECTIONS[check]
    findings = SECTION_FINDINGS[check]
    return len({url for url, _ in findings}), len(findings)
