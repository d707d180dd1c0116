"""Turn Playwright responses into Resource records and redirect chains: headers, types, CDN guesses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nitpicker_core import Resource, normalize_content_type

# Never stored: they carry sessions and credentials
HIDDEN_HEADERS = frozenset({"set-cookie", "set-cookie2", "cookie", "authorization", "proxy-authorization"})
COMPRESSIONS = ("gzip", "br", "deflate", "zstd")

# (header, substring of its value or "" for "present", CDN); first match wins, so fronts come before origins
CDN_RULES: tuple[tuple[str, str, str], ...] = (
    ("cf-ray", "", "Cloudflare"),
    ("server", "cloudflare", "Cloudflare"),
    ("x-amz-cf-id", "", "Amazon CloudFront"),
    ("x-amz-cf-pop", "", "Amazon CloudFront"),
    ("via", "cloudfront", "Amazon CloudFront"),
    ("x-akamai-transformed", "", "Akamai"),
    ("akamai-grn", "", "Akamai"),
    ("akamai-cache-status", "", "Akamai"),
    ("server", "akamaighost", "Akamai"),
    ("x-fastly-request-id", "", "Fastly"),
    ("fastly-debug-digest", "", "Fastly"),
    ("x-served-by", "cache-", "Fastly"),
    ("x-vercel-id", "", "Vercel"),
    ("x-nf-request-id", "", "Netlify"),
    ("x-azure-ref", "", "Azure Front Door"),
    ("x-msedge-ref", "", "Azure CDN"),
    ("x-sucuri-id", "", "Sucuri"),
    ("x-iinfo", "", "Imperva"),
    ("x-cdn", "imperva", "Imperva"),
    ("server", "bunnycdn", "BunnyCDN"),
    ("server", "keycdn", "KeyCDN"),
    ("x-github-request-id", "", "GitHub Pages"),
    ("server", "gws", "Google"),
    ("x-goog-generation", "", "Google Cloud Storage"),
    ("x-amz-request-id", "", "Amazon S3"),
    ("server", "amazons3", "Amazon S3"),
)


def strip_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def clean_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-cased names, without cookies and credentials."""
    return {name.lower(): value for name, value in headers.items() if name.lower() not in HIDDEN_HEADERS}


def content_length(headers: Mapping[str, str]) -> int | None:
    try:
        return int(headers.get("content-length", "").strip())
    except ValueError:
        return None


def compression(headers: Mapping[str, str]) -> str:
    """The content-encoding when it is a known compression, else ""."""
    encodings = [part.strip().lower() for part in headers.get("content-encoding", "").split(",")]
    return next((enc for enc in reversed(encodings) if enc in COMPRESSIONS), "")


def guess_cdn(headers: Mapping[str, str]) -> str:
    """Name of the CDN the headers betray, or ""."""
    for name, needle, cdn in CDN_RULES:
        value = headers.get(name)
        if value is not None and needle in value.lower():
            return cdn
    return ""


def to_resource(response: Any) -> Resource:
    """A Resource from a Playwright response (its synchronous ``headers``: no cookies there anyway)."""
    headers = clean_headers(response.headers)
    return Resource(
        url=strip_fragment(response.url),
        status=response.status,
        status_text=response.status_text or "",
        content_type=normalize_content_type(headers.get("content-type")),
        content_length=content_length(headers),
        compression=compression(headers),
        cdn=guess_cdn(headers),
        headers=headers,
    )


def request_urls(response: Any) -> list[str]:
    """Every URL the navigation that ended in ``response`` went through, first request first."""
    urls: list[str] = []
    request = response.request if response is not None else None
    while request is not None:
        urls.append(strip_fragment(request.url))
        request = request.redirected_from
    return urls[::-1]


def chain_edges(start: str, hops: list[str]) -> list[str]:
    """Hops after ``start`` as redirect-chain entries: repeats in a row (self-redirects) are not edges."""
    edges: list[str] = []
    previous = strip_fragment(start)
    for hop in hops:
        hop = strip_fragment(hop)
        if hop != previous:
            edges.append(hop)
        previous = hop
    return edges
