"""Page detail in tabs, the link graph's legend and neighbourhood, and the security headers view (Flask client)."""

from __future__ import annotations

import dataclasses

import pytest
from archives import SITE, build_archive, demo_pages

# lower-cased, as the browser reports response headers to the crawler
ALL_HEADERS = {"content-security-policy": "default-src 'self'", "x-frame-options": "DENY",
               "x-content-type-options": "nosniff", "strict-transport-security": "max-age=300"}


def headered_pages():
    """The demo site with every security header on `/` and only a CSP on `/about` (the rest send none)."""
    sent = {SITE + "/": ALL_HEADERS, SITE + "/about": {"content-security-policy": "default-src 'self'"}}
    return [dataclasses.replace(p, headers=sent.get(p.url, {})) for p in demo_pages()]


@pytest.fixture(scope="module")
def tabs_archive(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("tabs") / "site.nitpicker", headered_pages())


@pytest.fixture(scope="module")
def tabs_app(tabs_archive, viewer_over):
    with viewer_over(tabs_archive) as app:
        yield app


@pytest.fixture
def tclient(tabs_app):
    return tabs_app.test_client()


def _rows(html: str) -> list[str]:
    body = html.split('id="security-headers"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [row for row in body.split("<tr")[1:]]


def test_security_headers_view_counts_filters_and_marks_each_header(tclient):
    html = tclient.get("/security-headers").get_data(as_text=True)
    assert '<a href="/security-headers"' in html  # in the menu
    # the internal HTML pages (the `headers` query's: the 404 too), each header sent or missing in words
    rows = _rows(html)
    assert len(rows) == 4, rows
    home = next(r for r in rows if f">{SITE}/<" in r)
    assert home.count("h-yes") == 4 and "h-no" not in home
    about = next(r for r in rows if f">{SITE}/about<" in r)
    assert about.count("h-yes") == 1 and about.count("h-no") == 3
    # the cards: pages sending each header, and a link to those without it
    card = html.split('data-header="csp"', 1)[1].split("</li>", 1)[0]
    assert "2 / 4" in card and "2 pages without it" in card and "missing=csp" in card
    card = html.split('data-header="hsts"', 1)[1].split("</li>", 1)[0]
    assert "1 / 4" in card and "3 pages without it" in card
    # filtered by header: only the pages without it
    rows = _rows(tclient.get("/security-headers?missing=x_frame_options").get_data(as_text=True))
    assert len(rows) == 3 and not any(f">{SITE}/<" in r for r in rows)
    rows = _rows(tclient.get("/security-headers?missing=csp").get_data(as_text=True))
    assert len(rows) == 2 and f">{SITE}/blog/<" in rows[0] and f">{SITE}/missing<" in rows[1]
    exported = tclient.get("/security-headers?missing=csp&export=csv").get_data(as_text=True)
    assert len(exported.splitlines()) == 3 and "/blog/" in exported.splitlines()[1], exported
    ja = tclient.get("/security-headers", headers={"Accept-Language": "ja"}).get_data(as_text=True)
    assert "<h1>セキュリティヘッダー</h1>" in ja
