"""A per-origin robots.txt cache built on protego, read under a deadline and a size cap (RFC 9309)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from protego import Protego

from nitpicker_core.crawler.deadline import DeadlineAdapter, Exchange, Guard
from nitpicker_core.crawler.errors import classify
from nitpicker_core.crawler.login import CookieSession
from nitpicker_core.crawler_access import RobotsFile

__all__ = ["ROBOTS_LIMIT", "RobotsCache", "origin_of"]

ROBOTS_LIMIT = 500 * 1024  # RFC 9309 2.5: parse at least 500 KiB; reading more only costs memory
MAX_RETRY_AFTER = 900.0  # seconds: how far the wait for a failing robots.txt grows at most
_DISALLOW_ALL = Protego.parse("User-agent: *\nDisallow: /\n")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}"


@dataclass
class _Answer:
    """What one origin's robots.txt said; a failure (not ``lasting``) is asked again at ``retry_at``."""

    parser: Protego | None  # None: everything is allowed
    failure: str | None = None  # "503", or an error kind such as "timeout"
    lasting: bool = True
    retry_at: float = 0.0  # a clock time, set by the cache
    wait: float = 0.0  # the pause before ``retry_at``; it doubles while the failure lasts
    status: int | None = None  # the HTTP status of robots.txt (None: no answer)
    text: str = ""  # the body of a 200 answer, as parsed


class RobotsCache:
    """Fetches each origin's robots.txt (with the crawler's user agent) and answers from it.

    As RFC 9309 says: 200 → its rules (the first 500 KiB); 4xx → no rules, everything allowed; 5xx →
    everything disallowed until it answers, asked again after ``retry_after`` seconds (doubling while
    it fails). A network error or the deadline also allows everything for now and is asked again
    later, see ``_unreachable``. Each fetch has a total deadline of ``timeout`` seconds. With
    ``enabled=False`` (``--ignore-robots``) nothing is fetched and everything is allowed.
    """

    def __init__(
        self,
        user_agent: str,
        *,
        session: requests.Session | None = None,
        timeout: float = 10.0,
        enabled: bool = True,
        retry_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.user_agent = user_agent
        self.timeout = timeout
        self.enabled = enabled
        self.retry_after = retry_after
        self._clock = clock
        self._session = session or CookieSession()
        self._session.max_redirects = 10  # RFC 9309 2.3.1.2: follow at least five
        DeadlineAdapter.mount_on(self._session)
        self._guard = Guard()
        self._answers: dict[str, _Answer] = {}
        self._origin_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def use_login(self, cookie_for: Callable[[str], str | None]) -> None:
        """Ask for robots.txt logged in (``cookie_for(url)``: the ``Cookie`` header for that URL, or None): on
        a site behind a login, the robots.txt its members get is the one the crawl obeys and reads sitemaps from."""
        if not isinstance(self._session, CookieSession):
            raise TypeError("a logged-in robots.txt needs the cache's own session")
        self._session.use_login(cookie_for)

    def abort(self) -> None:
        """Cut a robots.txt fetch in flight; later fetches raise ``FetchAborted`` (known answers stay)."""
        self._guard.abort()

    def _fresh(self, origin: str) -> _Answer | None:
        answer = self._answers.get(origin)
        if answer is None or (not answer.lasting and self._clock() >= answer.retry_at):
            return None
        return answer

    def _answer(self, url: str) -> _Answer:
        origin = origin_of(url)
        with self._lock:
            answer = self._fresh(origin)
            if answer is not None:
                return answer
            origin_lock = self._origin_locks.setdefault(origin, threading.Lock())
        # One fetch per origin: other threads asking for the same origin wait for it, not for all origins
        with origin_lock:
            with self._lock:
                answer = self._fresh(origin)
                previous = self._answers.get(origin)
            if answer is not None:
                return answer
            answer = self._fetch(origin)
            if not answer.lasting:
                wait = (
                    min(MAX_RETRY_AFTER, previous.wait * 2)
                    if previous and previous.failure
                    else self.retry_after
                )
                answer.wait, answer.retry_at = wait, self._clock() + wait
            with self._lock:
                self._answers[origin] = answer
            return answer

    def _fetch(self, origin: str) -> _Answer:
        try:
            status, body, cut = self._guard.run(lambda exchange: self._read(exchange, origin), self.timeout)
        except requests.TooManyRedirects:
            return _Answer(None)  # RFC 9309 2.3.1.2: past the redirects followed, it is "unavailable"
        except (requests.RequestException, OSError) as exc:
            return self._unreachable(classify(exc))
        if 500 <= status <= 599:
            # RFC 9309 2.3.1.4: the server failed, so nothing is known to be allowed until it answers
            return _Answer(_DISALLOW_ALL, failure=str(status), lasting=False, status=status)
        if status != 200:
            return _Answer(None, status=status)  # 4xx (RFC 9309 2.3.1.3) and other odd answers: no rules
        if cut:  # a line cut in the middle could read as a broader rule than it is
            body = body[: body.rfind(b"\n") + 1]
        text = body.decode("utf-8", "replace")
        try:
            return _Answer(Protego.parse(text), status=200, text=text)
        except Exception:  # noqa: BLE001 - a robots.txt protego cannot read allows everything
            return _Answer(None, status=200, text=text)

    @staticmethod
    def _unreachable(kind: str) -> _Answer:
        # RFC 9309 would disallow everything here. For an audit that hides the facts: every page of a
        # host that is down would read "blocked by robots.txt" instead of its own DNS, refused or
        # timeout error, which is what the page's fetch records when it is allowed to try. So allow
        # for now, and ask again later so rules served once the host answers still apply.
        return _Answer(None, failure=kind, lasting=False)

    def _read(self, exchange: Exchange[tuple[int, bytes, bool]], origin: str) -> tuple[int, bytes, bool]:
        """Status, the first ``ROBOTS_LIMIT`` bytes and whether there was more (runs in a daemon thread)."""
        response = self._session.get(
            f"{origin}/robots.txt",
            headers={"User-Agent": self.user_agent},
            timeout=(self.timeout, self.timeout),
            stream=True,
        )
        try:
            if response.status_code != 200:
                return response.status_code, b"", False
            data = bytearray()
            for chunk in response.iter_content(64 * 1024):
                data += chunk
                if len(data) > ROBOTS_LIMIT:  # an endless robots.txt stops here, not in memory
                    return 200, bytes(data[:ROBOTS_LIMIT]), True
            return 200, bytes(data), False
        finally:
            response.close()

    def allowed(self, url: str) -> bool:
        """May the user agent fetch ``url``? Only http(s) URLs are checked."""
        if not self.enabled or urlsplit(url).scheme.lower() not in ("http", "https"):
            return True
        parser = self._answer(url).parser
        if parser is None:
            return True
        with self._lock:  # protego memoises matches in a plain dict
            return bool(parser.can_fetch(url, self.user_agent))

    def failure(self, url: str) -> str | None:
        """Why ``url``'s origin has no rules from its robots.txt: a 5xx status ("503") or an error kind
        ("timeout"); None when it answered (a 4xx, "no robots.txt", is an answer) or was not asked."""
        with self._lock:
            answer = self._answers.get(origin_of(url))
        return answer.failure if answer else None

    def crawl_delay(self, url: str) -> float | None:
        """The ``Crawl-delay`` for the user agent at ``url``'s origin, in seconds (None when unset)."""
        if not self.enabled or urlsplit(url).scheme.lower() not in ("http", "https"):
            return None
        parser = self._answer(url).parser
        if parser is None:
            return None
        with self._lock:
            delay = parser.crawl_delay(self.user_agent)
        return float(delay) if delay is not None else None

    def sitemaps(self, url: str) -> list[str]:
        """The ``Sitemap:`` lines of the robots.txt of ``url``'s origin, as written (none when not read)."""
        if not self.enabled or urlsplit(url).scheme.lower() not in ("http", "https"):
            return []
        parser = self._answer(url).parser
        if parser is None or parser is _DISALLOW_ALL:
            return []
        with self._lock:
            return [str(line) for line in parser.sitemaps]

    def files(self) -> list[RobotsFile]:
        """Each origin's robots.txt as last read: status, failure and body (what ``crawler_access`` judges)."""
        with self._lock:
            answers = sorted(self._answers.items())
        return [RobotsFile(origin, a.status, a.failure, a.text) for origin, a in answers]

    def fetched_origins(self) -> list[str]:
        with self._lock:
            return sorted(self._answers)
