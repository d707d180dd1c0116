"""/polite/<site>/: servers that push back, and a log of every request with the time it arrived.

Each ``<site>`` name is an independent site (its own counters and log), so tests never share state.

- ``/polite/<site>/busy``: the first ``BUSY`` requests answer 429 with ``Retry-After: RETRY_AFTER``, then 200.
- ``/polite/<site>/unavailable``: the first ``BUSY`` requests answer 503 without Retry-After, then 200.
- ``/polite/<site>/browser-busy``: HEAD always 200; the first GET answers 429 with Retry-After, then 200 (a
  server that pushes back on the browser's navigation, not on the preflight).
- ``/polite/<site>/`` links to ``p1`` … ``p{PAGES}``; each page links back (a small site for ``--max-rps``).
- ``/polite/<site>/__log`` is JSON: ``[[method, path, seconds], …]`` in arrival order (``time.monotonic``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict

from flask import Blueprint, Response, jsonify, request

from test_server.routes._html import links, page

bp = Blueprint("polite", __name__, url_prefix="/polite")

BUSY = 2  # pushed-back answers before the 200
RETRY_AFTER = 1  # seconds
PAGES = 6

_lock = threading.Lock()
_log: defaultdict[str, list[tuple[str, str, float]]] = defaultdict(list)
_seen: Counter[tuple[str, str]] = Counter()


def _arrived(site: str, name: str, gets_only: bool = False) -> int:
    """Log this request; returns how many requests (GETs only, if asked) reached ``name`` before it."""
    with _lock:
        _log[site].append((request.method, request.path, time.monotonic()))
        if gets_only and request.method != "GET":
            return -1
        before = _seen[(site, name)]
        _seen[(site, name)] += 1
        return before


@bp.get("/<site>/busy")
def busy(site: str):  # type: ignore[no-untyped-def]
    if _arrived(site, "busy") < BUSY:
        answer = page("Slow Down", "<p>Too many requests.</p>", status=429)
        answer.headers["Retry-After"] = str(RETRY_AFTER)
        return answer
    return page("Busy Page", "<p>Served at last.</p>")


@bp.get("/<site>/unavailable")
def unavailable(site: str):  # type: ignore[no-untyped-def]
    if _arrived(site, "unavailable") < BUSY:
        return page("Unavailable", "<p>Try later.</p>", status=503)
    return page("Available Again", "<p>Back.</p>")


@bp.get("/<site>/browser-busy")
def browser_busy(site: str):  # type: ignore[no-untyped-def]
    if 0 <= _arrived(site, "browser-busy", gets_only=True) < 1:
        answer = page("Slow Down", "<p>Too many requests.</p>", status=429)
        answer.headers["Retry-After"] = str(RETRY_AFTER)
        return answer
    return page("Browser Busy Page", "<p>Rendered at last.</p>")


@bp.get("/<site>/")
def top(site: str):  # type: ignore[no-untyped-def]
    _arrived(site, "top")
    return page("Polite Top", links(*((f"p{n}", f"Page {n}") for n in range(1, PAGES + 1))))


@bp.get("/<site>/p<int:n>")
def numbered(site: str, n: int):  # type: ignore[no-untyped-def]
    _arrived(site, f"p{n}")
    return page(f"Polite Page {n}", links(("./", "Top")))


@bp.get("/<site>/__log")
def log(site: str) -> Response:
    with _lock:
        return jsonify([list(entry) for entry in _log[site]])
