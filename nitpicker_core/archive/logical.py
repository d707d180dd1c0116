"""What a state hash sees: headers and HTML without the values that change on every response of unchanged content."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .hashing import canonical_json

# Bumped whenever what the hash sees changes, and recorded with each commit: two commits hashed by
# different versions may show modified pages that did not change.
STATE_HASH_VERSION = 2

# Headers that change on every response without the content changing: they are stored with a state but
# left out of its hash, so an unchanged page hashes the same in every crawl (history independence).
VOLATILE_HEADERS = frozenset(
    {
        "date",
        "age",
        "expires",
        "x-request-id",
        "request-id",
        "x-correlation-id",
        "x-amzn-requestid",
        "x-amzn-trace-id",
        "x-amz-request-id",
        "x-amz-cf-id",
        "x-amz-id-2",
        "cf-ray",
        "server-timing",
        "x-runtime",
        "x-response-time",
        "x-served-by",
        "x-timer",
        "x-cache",
        "x-cache-hits",
        "via",
        "report-to",
        "nel",
        "keep-alive",
        "x-varnish",
        "x-trace-id",
        "traceparent",
        "tracestate",
        "x-cloud-trace-context",
        "x-b3-traceid",
        "x-b3-spanid",
    }
)
# Cookies are named by the page; their values (session ids) are new on every response.
_COOKIE_HEADERS = frozenset({"set-cookie", "set-cookie2"})
# Policies that carry the page's script nonce, fresh on every render.
_NONCE_HEADERS = frozenset({"content-security-policy", "content-security-policy-report-only"})
_CSP_NONCE = re.compile(r"'nonce-[^']*'")

# Names of the hidden fields and meta tags that carry a per-render anti-forgery token (Rails, Django,
# Laravel, ASP.NET, Spring, WordPress and generic names).
CSRF_NAMES = frozenset(
    {
        "csrf-token",
        "csrf_token",
        "csrftoken",
        "_csrf",
        "_csrf_token",
        "csrfmiddlewaretoken",
        "authenticity_token",
        "_token",
        "__requestverificationtoken",
        "xsrf-token",
        "_xsrf",
        "_wpnonce",
    }
)
_TAG = re.compile(r"<(?:meta|input)\b[^>]*>", re.IGNORECASE)
_NAME = re.compile(r"""\bname\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_TOKEN_VALUE = re.compile(r"""(\b(?:content|value)\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
_NONCE_ATTR = re.compile(r"""(\snonce\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
# What the lower-cased HTML must contain for either substitution to change it: "nonce" for a nonce attribute,
# and for a token's tag a part of every name in CSRF_NAMES. Most pages have none, and lower-casing the page
# and four substring searches cost a fraction of the two case-insensitive scans of the whole page.
_TOKEN_PARTS = (b"csrf", b"xsrf", b"token", b"nonce")
_KELVIN = (
    "\u212a"  # KELVIN SIGN: lower-cased, "k"; the only character beyond ASCII whose lower case is in a part
)


def _lowered(html: str) -> bytes | None:
    """``html`` in UTF-8 with its ASCII letters lower-cased, None when a part could hide beyond ASCII.

    Bytes, not ``str.lower()``: that walks the Unicode tables for every character of a page holding a single
    one beyond ASCII (a docs page's ¶), ten times slower than the scans it is to spare. No character beyond
    ASCII but the Kelvin sign lower-cases to a letter of the parts (İ gives "i", in none), and none matches
    one of "nonce" case-insensitively."""
    if not html.isascii() and _KELVIN in html:
        return None
    return html.encode("utf-8", "replace").lower()


def _cookie_name(value: str) -> str:
    return value.split("=", 1)[0].strip()


def logical_headers(headers: Mapping[str, Any] | None) -> dict[str, Any]:
    """The headers a state hash sees: volatile ones out, cookie names without values, CSP without nonces."""
    out: dict[str, Any] = {}
    for name, value in (headers or {}).items():
        key = name.lower()
        if key in VOLATILE_HEADERS:
            continue
        if key in _COOKIE_HEADERS:
            out[name] = sorted({_cookie_name(v) for v in str(value).split("\n")})
        elif key in _NONCE_HEADERS:
            out[name] = _CSP_NONCE.sub("'nonce-'", str(value))
        else:
            out[name] = value
    return out


def _blank_token(match: re.Match[str]) -> str:
    tag = match.group(0)
    name = _NAME.search(tag)
    if name is None or name.group(1).lower() not in CSRF_NAMES:
        return tag
    return _TOKEN_VALUE.sub(r'\1""', tag)


def normalize_html(html: str) -> str:
    """``html`` with the per-render values the project knows blanked: script nonces and anti-forgery tokens."""
    lowered = _lowered(html)
    if lowered is None or b"nonce" in lowered:
        html = _NONCE_ATTR.sub(r'\1""', html)
    if lowered is None or any(part in lowered for part in _TOKEN_PARTS):
        html = _TAG.sub(_blank_token, html)
    return html


def logical_sha256(html: str | None, sha256: str | None) -> str | None:
    """The hash of ``html`` as a state sees it: ``sha256`` itself when normalising leaves the text alone."""
    if html is None:
        return sha256
    normal = normalize_html(html)
    if normal == html:
        return sha256
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def as_set(items: Iterable[Any]) -> list[Any]:
    """Items whose order carries no meaning, in one canonical order (duplicates kept)."""
    listed = list(items)
    keys = [canonical_json(item) for item in listed]
    return [item for _, item in sorted(zip(keys, listed, strict=True), key=lambda pair: pair[0])]
