"""One real crawl of test_server's five SEO sections (sitemaps given as the sitemap checks' test gives them)
and the viewer over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_crawl import test_sitemap_checks
from seo_site import HREFLANG_SITEMAP, SECTIONS
from support import run_cli


@pytest.fixture(scope="session")
def seo_archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("viewer-seo")
    archive = workdir / "seo.nitpicker"
    # the sitemap test's --sitemap and --scope options (not its start URL), and the hreflang site's sitemap
    sitemaps = [*test_sitemap_checks._args(site)[:-1], "--sitemap", site + HREFLANG_SITEMAP]
    result = run_cli(
        "crawl",
        "--parallels",
        "2",
        "-o",
        str(archive),
        *sitemaps,
        *(site + s for s in SECTIONS),
        cwd=workdir,
        timeout=600,
    )
    assert result.returncode == 0 and "complete:" in result.stderr, result.stderr
    return archive


@pytest.fixture(scope="session")
def seo_app(seo_archive, viewer_over):
    with viewer_over(seo_archive) as app:
        yield app


@pytest.fixture(scope="module")
def seo_served(seo_app, serving):
    with serving(seo_app) as url:
        yield url
