"""The one classifier of network errors, blocked-status detection and the DNS burn list."""

from __future__ import annotations

import errno
import re
import socket
import ssl
import threading
from collections.abc import Mapping

__all__ = [
    "KINDS",
    "PERMANENT_KINDS",
    "SETTLED_KINDS",
    "DnsBurnList",
    "classify",
    "is_blocked_status",
]

KINDS = (
    "dns",
    "dns-transient",
    "connection-refused",
    "connection-reset",
    "connection-timeout",
    "timeout",
    "tls",
    "parse-error",
    "client-blocked",
    "local-network",
    "redirect-loop",
    "redirect-chain-too-long",
    "invalid-url",
    "unknown",
)
# Retrying these gives the same answer, so --retry-failed skips them and crawls converge. A chain that is
# merely too long is left out: it ends somewhere, and sites shorten chains (and Chromium's ERR_TOO_MANY_REDIRECTS,
# which cannot tell a loop from a long chain, lands there too, so a wrong guess costs one more request).
# An invalid URL (a port out of range) is never requested, so asking again cannot change it.
PERMANENT_KINDS = frozenset(
    {"dns", "tls", "client-blocked", "parse-error", "connection-refused", "redirect-loop", "invalid-url"}
)
# Within one crawl these give the same answer however often they are asked, so a fetch does not retry them;
# a long chain is settled for this run yet worth asking again in a later one (--retry-failed)
SETTLED_KINDS = PERMANENT_KINDS | {"redirect-chain-too-long"}

_CHROMIUM = {
    "NAME_NOT_RESOLVED": "dns",
    "NAME_RESOLUTION_FAILED": "dns-transient",
    "DNS_TIMED_OUT": "dns-transient",
    "DNS_SERVER_FAILED": "dns-transient",
    "DNS_MALFORMED_RESPONSE": "dns-transient",
    "DNS_SEARCH_EMPTY": "dns-transient",
    "CONNECTION_REFUSED": "connection-refused",
    "CONNECTION_RESET": "connection-reset",
    "CONNECTION_CLOSED": "connection-reset",
    "CONNECTION_ABORTED": "connection-reset",
    "EMPTY_RESPONSE": "connection-reset",
    "SOCKET_NOT_CONNECTED": "connection-reset",
    "CONNECTION_TIMED_OUT": "connection-timeout",
    "TIMED_OUT": "timeout",
    "INVALID_RESPONSE": "parse-error",
    "INVALID_HTTP_RESPONSE": "parse-error",
    "RESPONSE_HEADERS_TOO_BIG": "parse-error",
    "CONTENT_DECODING_FAILED": "parse-error",
    "INVALID_CHUNKED_ENCODING": "parse-error",
    "CONTENT_LENGTH_MISMATCH": "parse-error",
    "INVALID_URL": "parse-error",
    "INVALID_REDIRECT": "parse-error",
    "TOO_MANY_REDIRECTS": "redirect-chain-too-long",  # a count limit: a loop and a long chain look alike
    "BLOCKED_BY_CLIENT": "client-blocked",
    "BLOCKED_BY_ADMINISTRATOR": "client-blocked",
    "BLOCKED_BY_RESPONSE": "client-blocked",
    "BLOCKED_BY_ORB": "client-blocked",
    "UNSAFE_PORT": "client-blocked",
    "UNSAFE_REDIRECT": "client-blocked",
    "ADDRESS_UNREACHABLE": "local-network",
    "ADDRESS_INVALID": "local-network",
    "INTERNET_DISCONNECTED": "local-network",
    "NETWORK_CHANGED": "local-network",
    "NETWORK_ACCESS_DENIED": "local-network",
    "PROXY_CONNECTION_FAILED": "local-network",
}
_CHROMIUM_PREFIXES = (
    ("CERT_", "tls"),
    ("SSL_", "tls"),
    ("BAD_SSL_", "tls"),
    ("RESPONSE_HEADERS_", "parse-error"),
)
_NET_ERR_RE = re.compile(r"\bERR_([A-Z0-9_]+)")

# Plain-text patterns from Python, OpenSSL, curl-like and Playwright messages; first match wins
_TEXT_RULES: tuple[tuple[str, str], ...] = (
    (r"temporary failure in name resolution|eai_again|servfail", "dns-transient"),
    (
        r"name or service not known|nodename nor servname|no address associated|getaddrinfo failed"
        r"|name does not resolve|failed to resolve|nxdomain|could not resolve host",
        "dns",
    ),
    # the preflight tells a loop (a URL seen again) from a chain over its hop limit; counters only count
    (r"redirect loop", "redirect-loop"),
    (r"redirect chain too long|too many redirects|exceeded \d+ redirects", "redirect-chain-too-long"),
    (r"certificate|ssl|tls|handshake", "tls"),
    (r"connection refused|econnrefused", "connection-refused"),
    (r"connect(ion)? ?timeout|connect timed out|connection to .* timed out|etimedout", "connection-timeout"),
    (
        r"connection reset|econnreset|connection aborted|remote ?disconnected|remote end closed|broken pipe"
        r"|connection closed|epipe|empty reply",
        "connection-reset",
    ),
    (r"network is unreachable|no route to host|enetunreach|ehostunreach|network is down", "local-network"),
    (r"timed? ?out|timeout", "timeout"),
    (
        r"badstatusline|invalid chunk|chunkedencodingerror|line too long|header|parse|decode|protocol error"
        r"|invalid url|invalidurl|invalid schema|missing schema|locationparseerror",
        "parse-error",
    ),
)

_ERRNO_KINDS = {
    errno.ECONNREFUSED: "connection-refused",
    errno.ECONNRESET: "connection-reset",
    errno.ECONNABORTED: "connection-reset",
    errno.EPIPE: "connection-reset",
    errno.ETIMEDOUT: "connection-timeout",
    errno.ENETUNREACH: "local-network",
    errno.EHOSTUNREACH: "local-network",
    errno.ENETDOWN: "local-network",
}
_GAI_PERMANENT = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, n)}


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything it wraps (causes, contexts, urllib3 ``reason``, args)."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 20:
        current = todo.pop(0)
        if any(current is s for s in seen):
            continue
        seen.append(current)
        linked = [current.__cause__, current.__context__, getattr(current, "reason", None)]
        linked += [a for a in current.args if isinstance(a, BaseException)]
        todo += [x for x in linked if isinstance(x, BaseException)]
    return seen


def _by_type(exc: BaseException) -> str | None:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TooManyRedirects" in names:
        # the preflight's RedirectLoopError says which it was; requests' own limit only counts hops
        return "redirect-loop" if "redirect loop" in str(exc).lower() else "redirect-chain-too-long"
    if names & {"ConnectTimeout", "ConnectTimeoutError"}:
        return "connection-timeout"
    if isinstance(exc, socket.gaierror):
        return "dns" if exc.errno in _GAI_PERMANENT else "dns-transient"
    if isinstance(exc, ssl.SSLError | ssl.CertificateError) or names & {"SSLError", "CertificateError"}:
        return "tls"
    if isinstance(exc, ConnectionRefusedError):
        return "connection-refused"
    if isinstance(exc, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return "connection-reset"
    if names & {"RemoteDisconnected", "IncompleteRead"}:
        return "connection-reset"
    if names & {
        "BadStatusLine",
        "LineTooLong",
        "InvalidChunkLength",
        "ChunkedEncodingError",
        "ContentDecodingError",
        "InvalidURL",
        "InvalidSchema",
        "MissingSchema",
        "LocationParseError",
        "InvalidHeader",
        "HeaderParsingError",
    }:
        return "parse-error"
    if isinstance(exc, OSError) and exc.errno in _ERRNO_KINDS:
        return _ERRNO_KINDS[exc.errno]
    return None


def _by_text(message: str) -> str | None:
    net = _NET_ERR_RE.search(message)
    if net:
        code = net.group(1)
        if code in _CHROMIUM:
            return _CHROMIUM[code]
        for prefix, kind in _CHROMIUM_PREFIXES:
            if code.startswith(prefix):
                return kind
    lowered = message.lower()
    for pattern, kind in _TEXT_RULES:
        if re.search(pattern, lowered):
            return kind
    return None


def classify(error: BaseException | str) -> str:
    """The kind of a network failure, from a requests/urllib3/socket exception or a Chromium message."""
    if isinstance(error, str):
        return _by_text(error) or "unknown"
    chain = _chain(error)
    # The innermost cause is the most specific (a gaierror inside a NameResolutionError inside…)
    for exc in reversed(chain):
        kind = _by_type(exc)
        if kind:
            return kind
    # Timeouts are checked after the specific types: urllib3 wraps connect timeouts in generic ones
    names = {cls.__name__ for exc in chain for cls in type(exc).__mro__}
    if names & {"ReadTimeout", "ReadTimeoutError", "TimeoutError", "timeout", "Timeout"}:
        return "timeout"
    for exc in chain:
        kind = _by_text(f"{type(exc).__name__}: {exc}")
        if kind:
            return kind
    return "unknown"


# Looked for in the lower-cased body, each as plain text (a substring search of 64 kB takes microseconds; one
# regular expression of all of them took over a millisecond a page, and a case-insensitive one ten times that).
# Only what a challenge or block page has: what a service puts in every page it serves is no wall (Cloudflare's
# JavaScript detections load /cdn-cgi/challenge-platform/scripts/jsd/, Imperva's script is
# /_Incapsula_Resource?SWJIYLWA=), nor are the words of a page's own loading placeholder.
_BOT_WALL_TEXTS = (
    # Cloudflare's challenge page: its title, its options, its form's tokens and its script (…/orchestrate/…; a
    # Turnstile widget of an ordinary form frames …/challenge-platform/h/b/turnstile/, its field "cf-chl-widget-…")
    "<title>just a moment...",
    "_cf_chl_opt",
    "__cf_chl_",
    "challenge-platform/h/b/orchestrate",
    "challenge-platform/h/g/orchestrate",
    "attention required! | cloudflare",
    "cf-browser-verification",
    "px-captcha",
    "_incapsula_resource?cwudnsai",  # Imperva's block page frames it
    "incapsula incident",
    "sucuri website firewall",
    "ddos-guard",
    "captcha-delivery.com",
    "/_sec/cp_challenge",
    "please enable js and disable any ad blocker",
)
_BOT_WALL_BYTES = tuple(text.encode() for text in _BOT_WALL_TEXTS)
_KELVIN = "\u212a"
# Akamai's error page: "Access Denied" as its title or heading, and a reference on errors.edgesuite.net (a page
# that says both words in its text is about them)
_AKAMAI_DENIED = re.compile(r"<(title|h1)>\s*access denied\s*</\1>")
_AKAMAI = ("akamai", "edgesuite")
_SCANNED = _BOT_WALL_BYTES + tuple(name.encode() for name in _AKAMAI)
# Headers a service sends with its challenge or block only (DataDome's X-DataDome comes with every answer of a site
# it protects: its blocks are 403s, or carry X-DD-B)
_BOT_WALL_HEADERS = ("cf-mitigated", "x-dd-b", "x-amzn-waf-action", "x-sucuri-block", "x-px-blocked")


def is_blocked_status(
    status: int | None, headers: Mapping[str, str] | None = None, body_snippet: str | bytes = ""
) -> bool:
    """True when the answer means "a bot wall or auth stopped us", not "the page is broken"."""
    if status in (401, 403, 429, 999):
        return True
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    if any(h in lowered for h in _BOT_WALL_HEADERS):
        return True
    if isinstance(body_snippet, bytes):
        body_snippet = body_snippet[:65536].decode("utf-8", "replace")
    # Challenge pages come as 503 (Cloudflare, DDoS-Guard) or even 200 with a JS interstitial
    if status not in (200, 202, 503):
        return False
    snippet = body_snippet[:65536]
    if snippet.isascii() or _KELVIN not in snippet:
        # str.lower() of a page with one character beyond ASCII walks the Unicode tables for all of them; the
        # bytes' lower() is as good for these ASCII texts: beyond ASCII only the Kelvin sign lower-cases to a
        # letter ("k"), and İ to "i" followed by a combining dot, which ends no text here
        low_bytes = snippet.encode("utf-8", "replace").lower()
        if not any(text in low_bytes for text in _SCANNED):
            return False
    body = snippet.lower()
    return any(text in body for text in _BOT_WALL_TEXTS) or (
        any(name in body for name in _AKAMAI) and _AKAMAI_DENIED.search(body) is not None
    )


class DnsBurnList:
    """Hosts whose DNS lookup definitely failed and which never answered during this crawl.

    A host that answered once is never burned afterwards (its failure must be something else), and
    transient resolver failures (``dns-transient``) never burn anything. A continued crawl (``--resume``,
    ``--append``, ``--retry-failed``) starts with the hosts its commit already holds a ``dns`` failure of
    (``carry``): those are not looked up again either, and ``skipped_before`` counts the URLs left so.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._burned: set[str] = set()
        self._answered: set[str] = set()
        self._before: set[str] = set()  # burned by an earlier run of the commit
        self.skipped_before: dict[str, int] = {}  # host burned before → URLs of this run not asked

    def carry(self, host: str) -> None:
        """Burn a host an earlier run of the commit failed to look up."""
        with self._lock:
            self._burned.add(host.lower())
            self._before.add(host.lower())

    def skip(self, host: str) -> str:
        """The error message of a URL of a burned host, which is not asked (counted when burned before)."""
        host = host.lower()
        with self._lock:
            if host not in self._before:
                return f"DNS lookup of {host} failed earlier"
            self.skipped_before[host] = self.skipped_before.get(host, 0) + 1
        return f"DNS lookup of {host} failed in an earlier run: not asked again"

    def mark_answered(self, host: str) -> None:
        with self._lock:
            self._answered.add(host.lower())
            self._burned.discard(host.lower())
            self._before.discard(host.lower())

    def record_failure(self, host: str, kind: str) -> bool:
        """Remember a failure; True when the host is burned now."""
        host = host.lower()
        with self._lock:
            if kind == "dns" and host not in self._answered:
                self._burned.add(host)
            return host in self._burned

    def is_burned(self, host: str) -> bool:
        with self._lock:
            return host.lower() in self._burned

    def __len__(self) -> int:
        with self._lock:
            return len(self._burned)
