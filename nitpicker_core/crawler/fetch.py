"""HEAD preflight (with GET fallbacks) over requests, per-host throttling and title extraction.

Every attempt has a total deadline (connect + headers + body, over all its redirect hops) and
``Fetcher.abort()`` cuts whatever is in flight: see ``deadline``.
"""

from __future__ import annotations

import codecs
import functools
import html
import http.cookiejar
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urldefrag, urlsplit

import requests

from nitpicker_core.content_types import HTML_TYPES, normalize_content_type
from nitpicker_core.crawler.deadline import DeadlineAdapter, DeadlineExceeded, Exchange, FetchAborted, Guard
from nitpicker_core.crawler.errors import SETTLED_KINDS, DnsBurnList, classify
from nitpicker_core.defaults import FETCH_TIMEOUTS
from nitpicker_core.urls import join, looks_like_html, normalize, split_credentials

__all__ = [
    "BODY_LIMIT",
    "DEFAULT_TIMEOUTS",
    "DeadlineExceeded",
    "FetchAborted",
    "FetchResult",
    "Fetcher",
    "SLOWDOWN_CAP",
    "SLOWDOWN_FIRST",
    "HostThrottle",
    "RedirectChainTooLongError",
    "RedirectLoopError",
    "extract_title",
    "normalize_content_type",
    "parse_retry_after",
]

DEFAULT_TIMEOUTS = FETCH_TIMEOUTS  # the total deadline of the 1st, 2nd, 3rd… attempt at a URL
BODY_LIMIT = 16 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Failures a proxy or WAF produces when it mishandles HEAD; the same URL often answers a GET
MIDDLEBOX_KINDS = frozenset({"timeout", "connection-reset", "parse-error"})
_HTML_TYPES = (None, *sorted(HTML_TYPES, key=len))  # None: the server said nothing, and a browser sniffs
HIDDEN_HEADERS = frozenset({"set-cookie", "set-cookie2", "cookie", "authorization", "proxy-authorization"})


@dataclass
class FetchResult:
    """What a preflight learned about one URL; ``error_kind`` is set (and ``status`` None) on failure."""

    url: str
    final_url: str
    status: int | None = None
    status_text: str = ""
    content_type: str | None = None
    content_length: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    redirect_chain: list[str] = field(default_factory=list)
    error_kind: str | None = None
    error_message: str = ""
    needs_browser: bool = False
    method: str = "HEAD"
    body: bytes = b""
    title: str = ""
    redirect_status: int | None = None  # status of the first hop when the URL redirected (301, 302, …)
    response_ms: int | None = None  # from sending the last request to its response's headers
    http_version: str | None = None  # "http/1.1" as browsers name it (nextHopProtocol)

    @property
    def ok(self) -> bool:
        return self.error_kind is None


class RedirectLoopError(requests.TooManyRedirects):
    """The redirects came back to a URL already visited twice."""


class RedirectChainTooLongError(requests.TooManyRedirects):
    """More redirects than allowed, every one to a new URL: the chain may end, so it is no loop.

    Its message says "redirect chain too long", which is what ``classify`` tells apart from a loop.
    """


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


SLOWDOWN_FIRST = 0.5  # seconds between requests to a host after its first 429, 503 or timeout
SLOWDOWN_CAP = 16.0  # the gap doubles on each such answer up to this, and halves on each good one
SLOWING_STATUSES = frozenset({429, 503})


class HostThrottle:
    """Per-host earliest-start times: ``Retry-After``, ``Crawl-delay``, ``--max-rps`` and the slowdown after a host
    pushed back (429, 503, a timeout) space only their own host's requests.

    The slowdown is a gap between two requests' starts: ``SLOWDOWN_FIRST`` after the first push-back, doubled
    on each next one up to ``SLOWDOWN_CAP``, halved on each good answer and gone below ``SLOWDOWN_FIRST``.
    ``waited`` keeps the seconds spent waiting for each host.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        max_rps: float | None = None,
    ):
        self._clock = clock
        self._released = threading.Event()
        self._sleep = sleep or self._released.wait  # release() wakes the default sleep
        self._lock = threading.Lock()
        self._not_before: dict[str, float] = {}
        self._interval: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._floor = 1.0 / max_rps if max_rps else 0.0  # --max-rps: the least gap between two starts
        self._gap: dict[str, float] = {}  # the slowdown of each host that pushed back
        self._why: dict[str, str] = {}  # … and what it last answered ("answers 429", "times out")
        self.waited: dict[str, float] = {}  # seconds waited per host, all causes together

    def defer(self, host: str, seconds: float) -> None:
        """No request to ``host`` before ``seconds`` from now."""
        with self._lock:
            until = self._clock() + max(0.0, seconds)
            self._not_before[host] = max(self._not_before.get(host, 0.0), until)

    def set_interval(self, host: str, seconds: float) -> None:
        """At least ``seconds`` between the starts of two requests to ``host``."""
        with self._lock:
            self._interval[host] = max(0.0, seconds)

    def slow_down(self, host: str, why: str) -> float:
        """``host`` pushed back (``why``: "answers 429", "times out"): double its gap; returns the new gap."""
        with self._lock:
            gap = min(SLOWDOWN_CAP, max(SLOWDOWN_FIRST, 2 * self._gap.get(host, 0.0)))
            self._gap[host], self._why[host] = gap, why
            return gap

    def healthy(self, host: str) -> None:
        """``host`` answered well: halve its gap, and forget it below ``SLOWDOWN_FIRST``."""
        with self._lock:
            gap = self._gap.get(host, 0.0) / 2
            if gap < SLOWDOWN_FIRST:
                self._gap.pop(host, None)
                self._why.pop(host, None)
            else:
                self._gap[host] = gap

    def slowed(self) -> dict[str, str]:
        """The hosts slowed down now and why: ``{"example.com": "answers 429"}``."""
        with self._lock:
            return dict(self._why)

    def delay_for(self, host: str) -> float:
        with self._lock:
            return max(0.0, self._slot(host) - self._clock())

    def _slot(self, host: str) -> float:
        last = self._last.get(host)
        gap = max(self._interval.get(host, 0.0), self._floor, self._gap.get(host, 0.0))
        spaced = last + gap if last is not None else 0.0
        return max(self._clock(), self._not_before.get(host, 0.0), spaced)

    def release(self) -> None:
        """Wake every waiter now and never sleep again: the crawl is stopping."""
        self._released.set()

    def wait(self, host: str) -> float:
        """Take the next slot for ``host`` and sleep until it; returns the seconds slept."""
        if self._released.is_set():
            return 0.0
        with self._lock:
            slot = self._slot(host)
            self._last[host] = slot  # reserved under the lock so parallel workers queue up
            delay = slot - self._clock()
            if delay > 0:
                self.waited[host] = self.waited.get(host, 0.0) + delay
        if delay > 0:
            self._sleep(delay)
        return max(0.0, delay)

    def take_now(self, host: str) -> bool:
        """Take the next slot for ``host`` when it is now (what ``wait`` does then, without a thread to sleep
        in); False when it is later, taking nothing: ``wait`` takes it."""
        if self._released.is_set():
            return True
        with self._lock:
            slot = self._slot(host)
            if slot > self._clock():
                return False
            self._last[host] = slot
            return True

    def waits(self) -> dict[str, float]:
        """Seconds waited per host (over 0.05 s), for the crawl's stats."""
        with self._lock:
            return {host: round(s, 2) for host, s in sorted(self.waited.items()) if s >= 0.05}


def _host_key(url: str) -> str:
    return urlsplit(url).netloc.rpartition("@")[2].lower()


class Fetcher:
    """Preflight requests: HEAD first, GET when the server or a middlebox mishandles HEAD."""

    def __init__(
        self,
        user_agent: str,
        *,
        session: requests.Session | None = None,
        timeouts: Sequence[float] = DEFAULT_TIMEOUTS,
        retries: int = 3,
        retry_wait: float = 3.0,
        max_redirects: int = 20,
        max_retry_after: float = 120.0,
        throttle: HostThrottle | None = None,
        dns_burn: DnsBurnList | None = None,
        accept_language: str = "ja,en;q=0.9",
        pool_size: int = 10,
    ) -> None:
        self.user_agent = user_agent
        self.timeouts = tuple(timeouts)
        self.retries = max(1, retries)
        self.retry_wait = retry_wait
        self.max_redirects = max_redirects
        self.max_retry_after = max_retry_after
        self.throttle = throttle or HostThrottle()
        self.dns_burn = dns_burn if dns_burn is not None else DnsBurnList()  # an empty one is falsy
        self._session = session or requests.Session()
        DeadlineAdapter.mount_on(self._session, pool_size)
        self._guard = Guard()
        self._headers = {
            "User-Agent": user_agent,
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": accept_language,
            "Cache-Control": "no-cache",
            "Pragma": "no-cache",
        }
        self._cookies: Callable[[str], str | None] | None = None

    def use_login(self, cookie_header: Callable[[str], str | None]) -> None:
        """Send the login's cookies (``cookie_header(url)``) with every request, and keep no cookie of its own.

        The login state is the one source of cookies: a cookie a page sets meanwhile would outlive a renewal.
        """
        self._cookies = cookie_header
        self._session.cookies.set_policy(_NoCookies())

    def close(self) -> None:
        self._session.close()

    def abort(self) -> None:
        """Cut every request in flight now and make later ``fetch()`` calls raise ``FetchAborted``.

        For a crawl that is stopping: no worker thread waits on the network, a retry pause or a
        ``Retry-After`` any more, so the process can exit at once.
        """
        self._guard.abort()
        self.throttle.release()

    def fetch(
        self,
        url: str,
        *,
        auth: tuple[str, str] | None = None,
        method: str = "HEAD",
        headers: dict[str, str] | None = None,
        body_limit: int = BODY_LIMIT,
    ) -> FetchResult:
        """Preflight ``url``; ``method="GET"`` also keeps the first 16 KiB of the body and its title.

        ``body_limit`` keeps more of an HTML body (``--render never`` reads the whole page from it): one
        byte over the limit is read, so a body cut there says it was longer (``len(body) > body_limit``).

        Raises ``FetchAborted`` once ``abort()`` was called; every other failure is in the result.
        """
        bare, embedded = split_credentials(url)
        bare = urldefrag(bare)[0]
        auth = auth or embedded
        host = urlsplit(bare).hostname or ""
        if self.dns_burn.is_burned(host):
            return FetchResult(bare, bare, error_kind="dns", error_message=self.dns_burn.skip(host))
        method = method.upper()
        attempt = 0
        middlebox = False
        while True:
            timeout = self.timeouts[min(attempt, len(self.timeouts) - 1)]
            try:
                response, body, chain, final, first_status = self._follow(
                    method, bare, timeout, auth, headers, body_limit
                )
            except (requests.RequestException, OSError) as exc:
                kind = classify(exc)
                attempt += 1
                self.dns_burn.record_failure(host, kind)
                if kind == "timeout":
                    self.throttle.slow_down(_host_key(bare), "times out")
                if method == "HEAD" and kind in MIDDLEBOX_KINDS:
                    method, middlebox = "GET", True  # the one GET retry, right away
                    continue
                needs_browser = middlebox and looks_like_html(bare)
                if (
                    needs_browser or kind in SETTLED_KINDS or attempt >= self.retries
                ):  # asking again gives the same
                    message = f"{type(exc).__name__}: {exc}"
                    return FetchResult(
                        bare,
                        bare,
                        error_kind=kind,
                        error_message=message,
                        needs_browser=needs_browser,
                        method=method,
                    )
                self._guard.sleep(self.retry_wait * 2 ** (attempt - 1))
                continue
            self.dns_burn.mark_answered(host)
            status = response.status_code
            again = self.pushed_back(final, status, response.headers.get("retry-after"), attempt)
            if method == "HEAD" and status in (405, 501, 503):
                method = "GET"  # the server does not do HEAD (or not now): ask again with GET
                continue
            if again:
                attempt += 1
                continue
            result = self._result(bare, final, chain, response, body, method)
            result.redirect_status = first_status if chain else None
            return result

    def pushed_back(self, url: str, status: int | None, retry_after: str | None, attempt: int) -> bool:
        """Tell the throttle how ``url``'s host answered; True when the answer should be asked for again.

        A 429 or 503 slows the host down (``HostThrottle.slow_down``) and its ``Retry-After`` (capped by
        ``max_retry_after``) defers it; such an answer is asked for again while attempts remain: a 429 only
        with a ``Retry-After`` no longer than the cap (without one the answer is the fact), a 503 always (the
        slowdown is the wait). Any other answer tells the host is healthy.
        """
        host = _host_key(url)
        if status not in SLOWING_STATUSES:
            self.throttle.healthy(host)
            return False
        self.throttle.slow_down(host, f"answers {status}")
        wait = parse_retry_after(retry_after)
        if wait is not None:
            self.throttle.defer(host, min(wait, self.max_retry_after))
        if attempt + 1 >= self.retries:
            return False
        return wait <= self.max_retry_after if wait is not None else status == 503

    def _follow(
        self,
        method: str,
        url: str,
        timeout: float,
        auth: tuple[str, str] | None,
        extra: dict[str, str] | None = None,
        body_limit: int = BODY_LIMIT,
    ) -> tuple[requests.Response, bytes, list[str], str, int | None]:
        """Follow redirects by hand; ``timeout`` is the network time of all hops together."""
        chain: list[str] = []
        first_status: int | None = None
        visits: Counter[str] = Counter()
        origin = _host_key(url)
        current = url
        left = timeout
        while True:
            key = normalize(current)
            visits[key] += 1
            # A URL may come back once (set-a-cookie-and-return), a third visit is a loop
            if visits[key] > 2:
                raise RedirectLoopError(f"redirect loop at {current} after {len(chain)} redirects")
            if len(chain) > self.max_redirects:
                raise RedirectChainTooLongError(
                    f"redirect chain too long: more than {self.max_redirects} redirects, all to new URLs, "
                    f"the last to {current}"
                )
            self.throttle.wait(_host_key(current))  # waiting for our turn is not the server's time
            self._guard.check()
            same_host = _host_key(current) == origin
            headers = {**self._headers, **extra} if extra and same_host else self._headers
            cookie = self._cookies(current) if self._cookies is not None else None
            if cookie:  # the login's cookies for this hop's host (cookie_header scopes them)
                headers = {**headers, "Cookie": cookie}
            request = {
                "method": method,
                "url": current,
                "timeout": (min(timeout, left), min(timeout, left)),
                "allow_redirects": False,
                "stream": True,
                "headers": headers,
                "auth": auth if same_host else None,  # never leak credentials to other hosts
            }
            started = time.monotonic()
            response, body = self._guard.run(
                functools.partial(self._exchange, request=request, body_limit=body_limit),
                left,
                deadline=timeout,
            )
            left -= time.monotonic() - started
            location = response.headers.get("location")
            if response.status_code not in REDIRECT_STATUSES or not location:
                return response, body, chain, current, first_status
            if first_status is None:
                first_status = response.status_code
            following = urldefrag(join(current, location.strip()))[0]  # RFC 3986: a // in the path stays
            if normalize(following) != key:  # a self-redirect is not an edge
                chain.append(following)
            current = following

    def _exchange(
        self,
        exchange: Exchange[tuple[requests.Response, bytes]],
        request: dict[str, Any],
        body_limit: int = BODY_LIMIT,
    ) -> tuple[requests.Response, bytes]:
        """One request and, for a GET that does not redirect, the start of its body (in a daemon thread)."""
        response = self._session.request(**request)
        try:
            body = _Body()
            redirect = response.status_code in REDIRECT_STATUSES and response.headers.get("location")
            limit = BODY_LIMIT
            if (
                body_limit > BODY_LIMIT
                and normalize_content_type(response.headers.get("content-type")) in _HTML_TYPES
            ):
                limit = body_limit + 1  # one byte more tells a body over the limit
            if request["method"] == "GET" and not redirect:
                # The status and headers are in: a body the deadline cuts short still gives what arrived
                exchange.fallback = lambda: (response, body.first(limit))
                body.read(response, limit)
            return response, body.first(limit)
        finally:
            response.close()

    def _result(
        self, url: str, final: str, chain: list[str], response: requests.Response, body: bytes, method: str
    ) -> FetchResult:
        headers = {k.lower(): v for k, v in response.headers.items() if k.lower() not in HIDDEN_HEADERS}
        length = headers.get("content-length", "")
        content_type = normalize_content_type(headers.get("content-type"))
        declared = response.encoding if "charset=" in headers.get("content-type", "").lower() else None
        return FetchResult(
            url=url,
            final_url=final,
            status=response.status_code,
            status_text=response.reason or "",
            content_type=content_type,
            content_length=int(length) if length.isdigit() else None,
            headers=headers,
            redirect_chain=chain,
            method=method,
            body=body,
            title=extract_title(body[:BODY_LIMIT], declared) if body and content_type in _HTML_TYPES else "",
            response_ms=round(response.elapsed.total_seconds() * 1000),
            http_version=_HTTP_VERSIONS.get(getattr(response.raw, "version", 0)),
        )


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A jar policy that neither keeps nor sends a cookie (a logged-in crawl sends the login's own)."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False


_HTTP_VERSIONS = {10: "http/1.0", 11: "http/1.1", 20: "h2"}


class _Body:
    """The start of a body as its chunks arrive, joined once at the end: a body grown in a bytearray, then cut from
    it and copied, cost three copies and the allocator's work (the docs site's pages: 1.10 → 0.95 ms of CPU a
    fetch; a 2.5 MB page 3.5 ms)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0

    def read(self, response: requests.Response, limit: int = BODY_LIMIT) -> None:
        """Take the body's first ``limit`` bytes, then stop reading (memory stays bounded)."""
        try:
            for chunk in response.iter_content(4096 if limit <= BODY_LIMIT else 65536):
                self.chunks.append(chunk)
                self.size += len(chunk)
                if self.size >= limit:
                    break
        except (requests.RequestException, OSError):
            pass  # the status is known; a body cut short still gives what arrived

    def first(self, limit: int) -> bytes:
        """The first ``limit`` bytes of what arrived."""
        data = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        return data if len(data) <= limit else data[:limit]


_TITLE_RE = re.compile(r"<title\b[^>]*>(.*?)(?:</title\s*>|$)", re.I | re.S)
_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)


def extract_title(html_prefix: str | bytes, encoding: str | None = None) -> str:
    """The ``<title>`` text of a document prefix, unescaped and with whitespace collapsed ("" if none).

    Bytes are decoded with ``encoding``, else the ``<meta charset>`` they declare, else UTF-8.
    """
    if isinstance(html_prefix, bytes):
        declared = _CHARSET_RE.search(html_prefix[:4096])
        codec = encoding or (declared.group(1).decode("ascii") if declared else "utf-8")
        try:
            codecs.lookup(codec)
        except LookupError:
            codec = "utf-8"
        html_prefix = html_prefix.decode(codec, "replace")
    # Titles inside <svg> are not the document title, so look in the head part only when we can
    head = re.split(r"<body\b", html_prefix, maxsplit=1, flags=re.I)[0]
    found = _TITLE_RE.search(head) or _TITLE_RE.search(html_prefix)
    if not found:
        return ""
    return " ".join(html.unescape(found.group(1)).split())
