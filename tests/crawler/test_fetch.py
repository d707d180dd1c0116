"""HEAD preflight against the live test server."""

from __future__ import annotations

import socket
import time

import pytest
import requests

from nitpicker_core.crawler.errors import DnsBurnList
from nitpicker_core.crawler.fetch import (
    SLOWDOWN_CAP,
    SLOWDOWN_FIRST,
    Fetcher,
    HostThrottle,
    extract_title,
    normalize_content_type,
    parse_retry_after,
)

UA = "Nitpicker/0.1.0"


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(UA, timeouts=(2.0, 3.0, 4.0), retry_wait=0.0)


def test_plain_page(site: str, fetcher: Fetcher, counts) -> None:  # type: ignore[no-untyped-def]
    result = fetcher.fetch(f"{site}/about")
    assert result.ok and result.status == 200 and result.status_text == "OK"
    assert result.content_type == "text/html"
    assert result.content_length is not None and result.content_length > 100
    assert result.redirect_chain == [] and result.final_url == f"{site}/about"
    assert result.method == "HEAD" and result.body == b""
    assert counts(by_method=True) == {"HEAD /about": 1}


def test_redirect_chain(site: str, fetcher: Fetcher) -> None:
    result = fetcher.fetch(f"{site}/redirect/start")
    assert result.status == 200
    assert result.redirect_chain == [f"{site}/redirect/middle", f"{site}/redirect/dest"]
    assert result.final_url == f"{site}/redirect/dest"


def test_self_redirect_is_not_an_edge(site: str, fetcher: Fetcher) -> None:
    result = fetcher.fetch(f"{site}/redirect/self")
    assert result.status == 200 and result.redirect_chain == []


def test_redirect_loop_is_an_error(site: str, fetcher: Fetcher) -> None:
    started = time.monotonic()
    result = fetcher.fetch(f"{site}/redirect/loop-a")
    assert result.error_kind == "redirect-loop" and result.status is None
    assert "redirect loop" in result.error_message and "too long" not in result.error_message
    assert time.monotonic() - started < 2


def test_long_chain_is_not_a_loop(site: str, fetcher: Fetcher) -> None:
    # 30 distinct URLs in a row: too long to follow, but nothing came back, so no loop
    result = fetcher.fetch(f"{site}/hostile/hops/0")
    assert result.status is None and result.error_kind is not None
    assert result.error_message.startswith("RedirectChainTooLongError: redirect chain too long")
    assert "loop" not in result.error_message
    twenty = fetcher.fetch(f"{site}/hostile/hops/10")  # exactly max_redirects hops still arrive
    assert twenty.status == 200 and len(twenty.redirect_chain) == 20
    assert twenty.final_url == f"{site}/hostile/hops/30"


def test_long_chain_has_its_own_kind(site: str, fetcher: Fetcher) -> None:
    result = fetcher.fetch(f"{site}/hostile/hops/0")
    assert result.error_kind == "redirect-chain-too-long"


def test_diverging_head_and_get(site: str, fetcher: Fetcher) -> None:
    assert fetcher.fetch(f"{site}/diverge/").final_url == f"{site}/diverge/head-dest"
    assert fetcher.fetch(f"{site}/diverge/", method="GET").final_url == f"{site}/diverge/get-dest"


def test_get_reads_16k_and_title(site: str, fetcher: Fetcher) -> None:
    big = fetcher.fetch(f"{site}/big/", method="GET")
    assert big.status == 200 and len(big.body) == 16 * 1024 and big.title == "Big Page"
    assert big.content_length == 20 * 1024 * 1024
    sjis = fetcher.fetch(f"{site}/sjis/", method="GET")
    assert sjis.content_type == "text/html" and sjis.title == "日本語のページ"


def test_error_status_and_json(site: str, external: str, fetcher: Fetcher) -> None:
    assert fetcher.fetch(f"{site}/error-status/not-found").status == 404
    forbidden = fetcher.fetch(f"{site}/error-status/forbidden")
    assert forbidden.status == 403 and forbidden.status_text == "FORBIDDEN"
    data = fetcher.fetch(f"{external}/options/data.json")
    assert data.content_type == "application/json" and data.content_length == 14


def test_secret_headers_are_dropped(site: str, fetcher: Fetcher) -> None:
    result = fetcher.fetch(f"{site}/redirect/self")  # its first hop sets a cookie; the last one does not
    assert "set-cookie" not in result.headers
    assert result.headers["content-type"] == "text/html; charset=UTF-8"
    assert all(k == k.lower() for k in result.headers)


def test_external_redirect_to_internal(site: str, external: str, fetcher: Fetcher) -> None:
    result = fetcher.fetch(f"{external}/clobber/away")
    assert result.redirect_chain == [f"{site}/clobber/target"]


def test_credentials_are_used_and_not_kept(site: str, fetcher: Fetcher) -> None:
    port = site.rsplit(":", 1)[1]
    result = fetcher.fetch(f"http://user:pw@localhost:{port}/about")
    assert result.url == f"http://localhost:{port}/about" and result.status == 200


def test_timeout_then_escalation(site: str) -> None:
    fetcher = Fetcher(UA, timeouts=(0.2, 0.3), retries=2, retry_wait=0.0)
    started = time.monotonic()
    result = fetcher.fetch(f"{site}/slow/?seconds=5")
    # HEAD timed out (a middlebox symptom) → one GET, which also timed out → the browser should try
    assert result.error_kind == "timeout" and result.needs_browser and result.method == "GET"
    assert time.monotonic() - started < 2
    slow_ok = Fetcher(UA, timeouts=(0.2, 3.0), retry_wait=0.0).fetch(f"{site}/slow/?seconds=0.5")
    assert slow_ok.status == 200 and slow_ok.method == "GET"


def test_refused_is_permanent_and_fast() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    fetcher = Fetcher(UA, timeouts=(1.0,), retry_wait=5.0)
    started = time.monotonic()
    result = fetcher.fetch(f"http://127.0.0.1:{port}/page")
    assert result.error_kind == "connection-refused" and not result.needs_browser
    assert time.monotonic() - started < 1  # permanent: no retry wait


def test_dns_burn_short_circuits() -> None:
    burn = DnsBurnList()
    burn.record_failure("gone.invalid", "dns")
    result = Fetcher(UA, dns_burn=burn).fetch("http://gone.invalid/x")
    assert result.error_kind == "dns" and "earlier" in result.error_message


class _FakeResponse(requests.Response):
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        super().__init__()
        self.status_code = status
        self.headers.update(headers)
        self.reason = "X"
        self._content = b""
        self._content_consumed = True


class _ScriptedSession(requests.Session):
    """Answers from a script, to test status fallbacks no real server here produces."""

    def __init__(self, script: list[tuple[str, int, dict[str, str]]]) -> None:
        super().__init__()
        self.script = script
        self.calls: list[str] = []

    def request(self, method, url, **kwargs):  # type: ignore[no-untyped-def, override]
        self.calls.append(method)
        expected_method, status, headers = self.script.pop(0)
        assert method == expected_method
        return _FakeResponse(status, headers)


def test_405_and_503_fall_back_to_get() -> None:
    for status in (405, 501, 503):
        session = _ScriptedSession([("HEAD", status, {}), ("GET", 200, {"Content-Type": "text/plain"})])
        result = Fetcher(UA, session=session, retries=1).fetch("http://h.example/x")
        assert result.status == 200 and result.method == "GET" and session.calls == ["HEAD", "GET"]


def test_retry_after_throttles_only_that_host() -> None:
    slept: list[float] = []
    throttle = HostThrottle(sleep=slept.append)
    session = _ScriptedSession([("HEAD", 429, {"Retry-After": "7"}), ("HEAD", 200, {})])
    result = Fetcher(UA, session=session, throttle=throttle).fetch("http://busy.example/x")
    assert result.status == 200 and session.calls == ["HEAD", "HEAD"]
    assert slept and 6.5 < slept[0] <= 7.0
    assert throttle.delay_for("other.example") == 0.0


def test_host_throttle_interval() -> None:
    now = [100.0]
    slept: list[float] = []
    throttle = HostThrottle(clock=lambda: now[0], sleep=slept.append)
    throttle.set_interval("a", 2.0)
    assert throttle.wait("a") == 0.0
    assert throttle.wait("a") == 2.0 and throttle.wait("a") == 4.0  # parallel callers queue up
    assert throttle.wait("b") == 0.0


def test_parse_retry_after_and_content_type() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert normalize_content_type(" Text/HTML ; charset=UTF-8") == "text/html"
    assert normalize_content_type("") is None


def test_extract_title() -> None:
    assert extract_title("<html><head><title> A &amp; B\n  C </title>") == "A & B C"
    assert extract_title("<title>cut off here") == "cut off here"
    assert extract_title("<head></head><body><svg><title>icon</title></svg>") == "icon"
    assert extract_title("<p>none</p>") == ""
    sjis = '<meta charset="Shift_JIS"><title>日本語</title>'.encode("shift_jis")
    assert extract_title(sjis) == "日本語"
    assert extract_title("<title>é</title>".encode("latin-1"), "latin-1") == "é"


def test_host_throttle_slows_down_on_push_back_and_recovers() -> None:
    now = [100.0]
    throttle = HostThrottle(clock=lambda: now[0], sleep=lambda s: None)
    assert throttle.slow_down("a", "answers 429") == SLOWDOWN_FIRST
    assert throttle.slow_down("a", "answers 503") == 2 * SLOWDOWN_FIRST  # doubles…
    for _ in range(20):
        throttle.slow_down("a", "times out")
    assert throttle.slowed() == {"a": "times out"}
    assert throttle.wait("a") == 0.0 and throttle.wait("a") == SLOWDOWN_CAP  # … up to the cap
    assert throttle.wait("b") == 0.0  # other hosts are not slowed
    gaps = []
    while throttle.slowed():
        throttle.healthy("a")
        gaps.append(throttle.delay_for("a"))
    assert gaps[0] == SLOWDOWN_CAP + SLOWDOWN_CAP / 2  # the gap after the last slot halved
    assert throttle.slowed() == {}
    assert throttle.waits() == {"a": SLOWDOWN_CAP}


def test_max_rps_spaces_every_host_and_crawl_delay_may_space_more() -> None:
    now = [0.0]
    throttle = HostThrottle(clock=lambda: now[0], sleep=lambda s: None, max_rps=4)
    assert [throttle.wait("a") for _ in range(3)] == [0.0, 0.25, 0.5]
    throttle.set_interval("b", 1.0)
    assert [throttle.wait("b") for _ in range(2)] == [0.0, 1.0]


def test_a_503_is_asked_again_and_a_429_without_retry_after_is_the_answer() -> None:
    slept: list[float] = []
    throttle = HostThrottle(sleep=slept.append)
    session = _ScriptedSession(
        [("HEAD", 503, {}), ("GET", 503, {}), ("GET", 200, {"Content-Type": "text/plain"})]
    )
    result = Fetcher(UA, session=session, throttle=throttle).fetch("http://down.example/x")
    assert result.status == 200 and session.calls == ["HEAD", "GET", "GET"]
    assert slept and slept[-1] > SLOWDOWN_FIRST  # waited the slowdown (doubled by the second 503)
    assert throttle.slowed() == {"down.example": "answers 503"}  # the 200 halved the gap to SLOWDOWN_FIRST…
    throttle.healthy("down.example")
    assert throttle.slowed() == {}  # … and the next good answer ends the slowdown
    session = _ScriptedSession([("HEAD", 429, {})])
    result = Fetcher(UA, session=session, throttle=throttle).fetch("http://busy.example/x")
    assert result.status == 429 and throttle.slowed() == {"busy.example": "answers 429"}
    session = _ScriptedSession([("HEAD", 429, {"Retry-After": "500"})])  # longer than the cap: the answer
    result = Fetcher(UA, session=session, throttle=throttle, max_retry_after=60).fetch(
        "http://slow.example/x"
    )
    assert result.status == 429 and throttle.delay_for("slow.example") <= 60


def test_a_host_burned_by_an_earlier_run_is_counted_and_said() -> None:
    burn = DnsBurnList()
    burn.carry("Gone.invalid")
    fetcher = Fetcher(UA, dns_burn=burn)
    assert fetcher.dns_burn is burn  # an empty list is falsy: it was once replaced by a new one
    results = [fetcher.fetch(f"http://gone.invalid/{n}") for n in range(2)]
    assert {r.error_message for r in results} == {
        "DNS lookup of gone.invalid failed in an earlier run: not asked again"
    }
    assert burn.skipped_before == {"gone.invalid": 2}
