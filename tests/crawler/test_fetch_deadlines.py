"""The preflight's total deadline and abort, against servers that trickle their headers or body."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nitpicker_core.crawler.fetch import Fetcher
from test_server.hostile import TrickleServer

UA = "Nitpicker/0.1.0"
# A 1 s deadline answers in about 2 s (HEAD, then the one GET); the bound is loose for a loaded machine
BOUND = 10.0


@pytest.fixture
def trickle() -> Iterator[TrickleServer]:
    with TrickleServer(interval=0.2) as server:
        yield server


class Background:
    """Runs a call in a thread so a test can bound how long it waits for it, even before the fix."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.seconds: float | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc
        self.seconds = time.monotonic() - self.started

    def finished_within(self, seconds: float) -> bool:
        self.thread.join(seconds)
        return not self.thread.is_alive()


def test_slow_headers_end_at_the_deadline(trickle: TrickleServer) -> None:
    # Each byte comes well within the per-read timeout: only a deadline on the whole exchange ends it
    fetcher = Fetcher(UA, timeouts=(1.0,), retries=1, retry_wait=0.0)
    call = Background(lambda: fetcher.fetch(f"{trickle.url}/page"))
    assert call.finished_within(BOUND * 2), "the preflight went on past its deadline"
    assert call.error is None
    result = call.result
    assert result.error_kind == "timeout" and result.status is None
    assert "deadline" in result.error_message
    assert result.method == "GET" and result.needs_browser  # HEAD, then the one GET, both cut
    assert call.seconds is not None and call.seconds < BOUND
    assert trickle.wait_for(lambda s: s.connections == 2, 10)  # the server may accept late under load
    assert trickle.wait_for("closed", 10), "the fetcher left its sockets open"


def test_deadline_covers_every_retry(trickle: TrickleServer) -> None:
    fetcher = Fetcher(UA, timeouts=(0.5, 1.0), retries=3, retry_wait=0.0)
    call = Background(lambda: fetcher.fetch(f"{trickle.url}/data.json"))  # not HTML: no browser fallback
    assert call.finished_within(BOUND * 2)
    assert call.result.error_kind == "timeout" and not call.result.needs_browser
    assert call.seconds is not None and call.seconds < BOUND
    assert trickle.wait_for(lambda s: s.connections == 3, 10)  # HEAD, its GET, then one more GET


def test_slow_body_keeps_the_status(site: str) -> None:
    # The status arrives at once and the body trickles: the deadline cuts the body, the answer stays
    fetcher = Fetcher(UA, timeouts=(1.0,), retries=1, retry_wait=0.0)
    call = Background(lambda: fetcher.fetch(f"{site}/hang/forever.png", method="GET"))
    assert call.finished_within(BOUND * 2), "the body read went on past the deadline"
    result = call.result
    assert result.ok and result.status == 200 and result.content_type == "image/png"
    assert result.body.startswith(b"\x89PNG") and len(result.body) < 1024
    assert call.seconds is not None and call.seconds < BOUND


def test_abort_cuts_a_fetch_in_flight(trickle: TrickleServer) -> None:
    from nitpicker_core.crawler.fetch import FetchAborted

    fetcher = Fetcher(UA, timeouts=(60.0,), retries=3, retry_wait=30.0)
    call = Background(lambda: fetcher.fetch(f"{trickle.url}/page"))
    assert trickle.wait_for("connected")
    fetcher.abort()
    assert call.finished_within(5), "abort() left the fetch waiting on the network"
    assert isinstance(call.error, FetchAborted) and "aborted" in str(call.error)
    assert trickle.wait_for("closed", 10), "abort() left the socket open"
    # Later fetches fail at once without touching the network
    started = time.monotonic()
    with pytest.raises(FetchAborted, match="aborted"):
        fetcher.fetch(f"{trickle.url}/other")
    assert time.monotonic() - started < 1 and trickle.connections == 1


def test_abort_wakes_a_retry_wait(trickle: TrickleServer) -> None:
    from nitpicker_core.crawler.fetch import FetchAborted

    fetcher = Fetcher(UA, timeouts=(0.3,), retries=3, retry_wait=600.0)
    call = Background(lambda: fetcher.fetch(f"{trickle.url}/data.json"))
    # HEAD and its GET were cut and nothing is connected: the fetch now waits 600 s before its next try
    assert trickle.wait_for(lambda s: s.connections == 2 and s.open == 0)
    assert call.thread.is_alive()
    fetcher.abort()
    assert call.finished_within(5), "abort() did not wake the wait between retries"
    assert isinstance(call.error, FetchAborted)
