"""The demo site with security headers on some pages: the archive of the tabs, graph and headers tests."""

from __future__ import annotations

import dataclasses

from archives import SITE, demo_pages

# lower-cased, as the browser reports response headers to the crawler
ALL_HEADERS = {
    "content-security-policy": "default-src 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "strict-transport-security": "max-age=300",
    "referrer-policy": "no-referrer",
    "permissions-policy": "camera=()",
}


def headered_pages():
    """The demo site with every security header on `/` and only a CSP on `/about` (the rest send none)."""
    sent = {SITE + "/": ALL_HEADERS, SITE + "/about": {"content-security-policy": "default-src 'self'"}}
    return [dataclasses.replace(p, headers=sent.get(p.url, {})) for p in demo_pages()]
