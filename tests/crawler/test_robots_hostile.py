"""robots.txt that is endless, slow, failing or cut off: bounded memory and time, RFC 9309 on 5xx."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from nitpicker_core.crawler.robots import RobotsCache
from test_server import serve
from test_server.hostile import TrickleServer
from test_server.routes.hostile_fetch import robots_app

UA = "Nitpicker/0.1.0"
LIMIT = 500 * 1024  # RFC 9309 2.5: parse at least 500 KiB; nitpicker reads no more than that
BOUND = 10.0  # seconds for a 1 s deadline: loose, for a loaded machine


@pytest.fixture
def hostile() -> Iterator[tuple[Flask, str]]:
    app = robots_app()
    server, base = serve(app=app)
    yield app, base
    server.shutdown()


def _in_thread(call, seconds: float):  # type: ignore[no-untyped-def]
    """``call()``'s result, or a failure when it is still running after ``seconds``."""
    box: dict[str, object] = {}
    thread = threading.Thread(target=lambda: box.setdefault("result", call()), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return box["result"], time.monotonic() - started


# Measured in a process of its own, so the test server's side of the transfer is not counted
_MEASURE = """
import sys, tracemalloc
from nitpicker_core.crawler.robots import RobotsCache
robots = RobotsCache("Nitpicker/0.1.0", timeout=20)
tracemalloc.start()
about = robots.allowed(sys.argv[1] + "/about")
private = robots.allowed(sys.argv[1] + "/private/page")
print(about, private, tracemalloc.get_traced_memory()[1])
"""


def test_endless_robots_is_read_up_to_500_kib(hostile: tuple[Flask, str]) -> None:
    app, base = hostile
    app.config["ENDLESS_LIMIT"] = 32 * 1024 * 1024  # "endless" enough: 64 times the limit
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, base],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    about, private, peak = done.stdout.split()
    assert (about, private) == ("True", "False")  # the rules at its top were parsed
    assert int(peak) < 4 * LIMIT, f"reading robots.txt peaked at {peak} bytes"
    assert app.extensions["robots_hits"] == 1


def test_rules_after_the_limit_are_ignored(hostile: tuple[Flask, str]) -> None:
    app, base = hostile
    app.config["ROBOTS"] = "big"
    robots = RobotsCache(UA, timeout=20)
    assert not robots.allowed(f"{base}/private/page")
    assert robots.allowed(f"{base}/late/page")  # its Disallow comes after 500 KiB


def test_slow_robots_answers_within_the_deadline(hostile: tuple[Flask, str]) -> None:
    app, base = hostile
    app.config["ROBOTS"] = "slow"
    robots = RobotsCache(UA, timeout=1.0)
    allowed, seconds = _in_thread(lambda: robots.allowed(f"{base}/private/page"), BOUND * 3)
    assert seconds < BOUND
    # Unreachable is not a rule: the page's own fetch will record what really happens there
    assert allowed is True and robots.failure(f"{base}/") == "timeout"


def test_slow_robots_headers_answer_within_the_deadline() -> None:
    with TrickleServer(interval=0.2) as trickle:
        robots = RobotsCache(UA, timeout=1.0)
        allowed, seconds = _in_thread(lambda: robots.allowed(f"{trickle.url}/page"), BOUND * 3)
        assert allowed is True and seconds < BOUND
        assert trickle.wait_for("closed", 10)


def test_server_error_disallows_until_it_answers(hostile: tuple[Flask, str]) -> None:
    app, base = hostile
    app.config["ROBOTS"] = "503"
    now = [1000.0]
    robots = RobotsCache(UA, timeout=5, retry_after=30.0, clock=lambda: now[0])
    assert not robots.allowed(f"{base}/about")  # RFC 9309 2.3.1.4: a 5xx robots.txt is a full disallow
    assert robots.failure(f"{base}/") == "503"
    app.config["ROBOTS"] = "rules"
    now[0] += 10
    assert not robots.allowed(f"{base}/about")  # asked again only after retry_after
    assert app.extensions["robots_hits"] == 1
    now[0] += 25
    assert robots.allowed(f"{base}/about")  # it answers now: its rules apply from here on
    assert not robots.allowed(f"{base}/private/page")
    assert app.extensions["robots_hits"] == 2 and robots.failure(f"{base}/") is None
    now[0] += 3600
    assert robots.allowed(f"{base}/about") and app.extensions["robots_hits"] == 2  # a good answer is kept


def test_client_error_allows_all_for_good(hostile: tuple[Flask, str]) -> None:
    app, base = hostile
    app.config["ROBOTS"] = "404"
    now = [1000.0]
    robots = RobotsCache(UA, timeout=5, retry_after=30.0, clock=lambda: now[0])
    assert robots.allowed(f"{base}/private/page")
    now[0] += 3600
    assert robots.allowed(f"{base}/private/page") and app.extensions["robots_hits"] == 1


def test_abort_cuts_a_robots_fetch_in_flight() -> None:
    from nitpicker_core.crawler.fetch import FetchAborted

    with TrickleServer(interval=0.2) as trickle:
        robots = RobotsCache(UA, timeout=60.0)
        errors: list[BaseException] = []

        def ask() -> None:
            try:
                robots.allowed(f"{trickle.url}/page")
            except FetchAborted as exc:
                errors.append(exc)

        thread = threading.Thread(target=ask, daemon=True)
        thread.start()
        assert trickle.wait_for("connected")
        robots.abort()
        thread.join(5)
        assert not thread.is_alive() and errors and "aborted" in str(errors[0])
        assert trickle.wait_for("closed", 10)
