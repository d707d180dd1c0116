"""A per-origin robots.txt cache built on protego."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import requests
from protego import Protego

__all__ = ["RobotsCache", "origin_of"]


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}"


class RobotsCache:
    """Fetches each origin's robots.txt once (with the crawler's user agent) and answers from it.

    A failed fetch or any status other than 200 allows everything, as the original tool did. With
    ``enabled=False`` (``--ignore-robots``) nothing is fetched and everything is allowed.
    """

    def __init__(
        self,
        user_agent: str,
        *,
        session: requests.Session | None = None,
        timeout: float = 10.0,
        enabled: bool = True,
    ) -> None:
        self.user_agent = user_agent
        self.timeout = timeout
        self.enabled = enabled
        self._session = session or requests.Session()
        self._parsers: dict[str, Protego | None] = {}
        self._origin_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _parser(self, url: str) -> Protego | None:
        origin = origin_of(url)
        with self._lock:
            if origin in self._parsers:
                return self._parsers[origin]
            origin_lock = self._origin_locks.setdefault(origin, threading.Lock())
        # One fetch per origin: other threads asking for the same origin wait for it, not for all origins
        with origin_lock:
            with self._lock:
                if origin in self._parsers:
                    return self._parsers[origin]
            parser = self._fetch(origin)
            with self._lock:
                self._parsers[origin] = parser
            return parser

    def _fetch(self, origin: str) -> Protego | None:
        try:
            response = self._session.get(
                f"{origin}/robots.txt", headers={"User-Agent": self.user_agent}, timeout=self.timeout
            )
        except requests.RequestException:
            return None
        if response.status_code != 200:
            return None
        try:
            return Protego.parse(response.content.decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - a robots.txt protego cannot read allows everything
            return None

    def allowed(self, url: str) -> bool:
        """May the user agent fetch ``url``? Only http(s) URLs are checked."""
        if not self.enabled or urlsplit(url).scheme.lower() not in ("http", "https"):
            return True
        parser = self._parser(url)
        if parser is None:
            return True
        with self._lock:  # protego memoises matches in a plain dict
            return bool(parser.can_fetch(url, self.user_agent))

    def crawl_delay(self, url: str) -> float | None:
        """The ``Crawl-delay`` for the user agent at ``url``'s origin, in seconds (None when unset)."""
        if not self.enabled or urlsplit(url).scheme.lower() not in ("http", "https"):
            return None
        parser = self._parser(url)
        if parser is None:
            return None
        with self._lock:
            delay = parser.crawl_delay(self.user_agent)
        return float(delay) if delay is not None else None

    def fetched_origins(self) -> list[str]:
        with self._lock:
            return sorted(self._parsers)
