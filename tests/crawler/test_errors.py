"""The error classifier, blocked-status detection and the DNS burn list."""

from __future__ import annotations

import socket
import ssl

import pytest
import requests

from nitpicker_core.crawler.errors import (
    KINDS,
    PERMANENT_KINDS,
    SETTLED_KINDS,
    DnsBurnList,
    classify,
    is_blocked_status,
)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("net::ERR_NAME_NOT_RESOLVED at https://nope.invalid/", "dns"),
        ("net::ERR_NAME_RESOLUTION_FAILED", "dns-transient"),
        ("page.goto: net::ERR_CONNECTION_REFUSED at http://localhost:1/", "connection-refused"),
        ("net::ERR_CONNECTION_RESET", "connection-reset"),
        ("net::ERR_EMPTY_RESPONSE", "connection-reset"),
        ("net::ERR_CONNECTION_TIMED_OUT", "connection-timeout"),
        ("net::ERR_TIMED_OUT", "timeout"),
        ("net::ERR_CERT_AUTHORITY_INVALID", "tls"),
        ("net::ERR_CERT_DATE_INVALID", "tls"),
        ("net::ERR_SSL_PROTOCOL_ERROR", "tls"),
        ("net::ERR_INVALID_HTTP_RESPONSE", "parse-error"),
        ("net::ERR_BLOCKED_BY_CLIENT", "client-blocked"),
        ("net::ERR_ADDRESS_UNREACHABLE", "local-network"),
        ("net::ERR_INTERNET_DISCONNECTED", "local-network"),
        # Chromium stops at 20 redirects whether they loop or not: what it saw is a chain too long
        ("net::ERR_TOO_MANY_REDIRECTS", "redirect-chain-too-long"),
        (
            "RedirectLoopError: redirect chain too long: 21 redirects from http://h/a",
            "redirect-chain-too-long",
        ),
        ("RedirectLoopError: redirect loop at http://h/a after 4 redirects", "redirect-loop"),
        ("Timeout 30000ms exceeded.", "timeout"),
        ("[Errno -2] Name or service not known", "dns"),
        ("[Errno -3] Temporary failure in name resolution", "dns-transient"),
        ("[Errno 101] Network is unreachable", "local-network"),
        ("something odd happened", "unknown"),
    ],
)
def test_classify_messages(message: str, kind: str) -> None:
    assert classify(message) == kind


def _wrapped(inner: BaseException, outer: type[Exception] = requests.ConnectionError) -> Exception:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer("wrapped") from exc
    except Exception as exc:  # noqa: BLE001
        return exc


def test_classify_exception_chains() -> None:
    assert classify(_wrapped(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))) == "dns"
    assert classify(_wrapped(socket.gaierror(socket.EAI_AGAIN, "Temporary failure"))) == "dns-transient"
    assert classify(_wrapped(ConnectionRefusedError(111, "Connection refused"))) == "connection-refused"
    assert classify(_wrapped(ConnectionResetError(104, "reset"))) == "connection-reset"
    assert classify(_wrapped(ssl.SSLCertVerificationError("certificate verify failed"))) == "tls"
    assert classify(requests.ConnectTimeout("connect timed out")) == "connection-timeout"
    assert classify(requests.ReadTimeout("read timed out")) == "timeout"
    assert classify(requests.TooManyRedirects("Exceeded 30 redirects.")) == "redirect-chain-too-long"
    assert (
        classify(requests.TooManyRedirects("redirect chain too long: 21 redirects"))
        == "redirect-chain-too-long"
    )
    assert (
        classify(requests.TooManyRedirects("redirect loop at http://h/a after 4 redirects"))
        == "redirect-loop"
    )
    assert classify(_wrapped(requests.TooManyRedirects("Redirect chain too long"), RuntimeError)) == (
        "redirect-chain-too-long"
    )
    assert classify(requests.exceptions.ChunkedEncodingError("broken")) == "parse-error"
    assert classify(ValueError("no idea")) == "unknown"


def test_classify_real_requests_failures(external: str) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(requests.ConnectionError) as refused:
        requests.get(f"http://127.0.0.1:{port}/", timeout=2)
    assert classify(refused.value) == "connection-refused"
    with pytest.raises(requests.Timeout) as slow:
        requests.get(f"{external}/slow/?seconds=2", timeout=0.2)
    assert classify(slow.value) == "timeout"
    with pytest.raises(requests.ConnectionError) as dns:
        requests.get("http://does-not-exist.invalid/", timeout=2)
    assert classify(dns.value) in ("dns", "dns-transient")


def test_permanent_kinds() -> None:
    assert {
        "dns",
        "tls",
        "connection-refused",
        "parse-error",
        "client-blocked",
        "redirect-loop",
        "invalid-url",
    } <= PERMANENT_KINDS
    # a site may shorten a long chain any day, so --retry-failed asks again
    assert (
        not {"dns-transient", "timeout", "connection-reset", "unknown", "redirect-chain-too-long"}
        & PERMANENT_KINDS
    )
    assert PERMANENT_KINDS <= set(KINDS)
    assert {"redirect-chain-too-long", "invalid-url"} <= set(KINDS)
    assert SETTLED_KINDS == PERMANENT_KINDS | {"redirect-chain-too-long"}  # not retried within one crawl


def test_is_blocked_status() -> None:
    for status in (401, 403, 429, 999):
        assert is_blocked_status(status, {}, "")
    assert not is_blocked_status(404, {}, "")
    assert not is_blocked_status(500, {"Server": "nginx"}, "<h1>Internal error</h1>")
    assert not is_blocked_status(200, {}, "<title>Welcome</title>")
    assert is_blocked_status(503, {"Server": "cloudflare"}, "<title>Just a moment...</title>")
    assert is_blocked_status(403, {"cf-mitigated": "challenge"}, b"")
    assert is_blocked_status(503, {"CF-Mitigated": "challenge"}, "")
    assert is_blocked_status(200, {}, b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate'>")
    assert is_blocked_status(202, {"x-amzn-waf-action": "challenge"}, "")


def test_what_bot_protection_puts_in_every_page_is_no_bot_wall() -> None:
    """Cloudflare's JavaScript detections and Imperva add a script to every page they serve, and a loading
    placeholder may say "Just a moment...": such a 200 page is a page. Their challenge and block pages are
    walls (the test site's /bot-walls/ serves both kinds, crawled in tests/e2e/test_crawl_bot_walls.py)."""
    jsd = "<script>var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';"
    assert not is_blocked_status(
        200, {"Server": "cloudflare"}, f"<title>Shoes</title><h1>Shoes</h1>{jsd}</script>"
    )
    imperva = '<script src="/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3&ns=1"></script>'
    assert not is_blocked_status(200, {}, f"<title>Boots</title>{imperva}")
    assert not is_blocked_status(200, {}, "<title>Sandals</title><p>Just a moment... checking the stock.</p>")
    # a Turnstile widget in an ordinary form, as rendered: Cloudflare's frame and its hidden field
    turnstile = (
        '<form><div class="cf-turnstile"><iframe src="https://challenges.cloudflare.com/cdn-cgi/challenge-platform'
        '/h/b/turnstile/if/ov2/av0/rcv0/0/abc12/0x4AAAAAAA/auto/normal"></iframe><input type="hidden" '
        'name="cf-turnstile-response" id="cf-chl-widget-abc12_response"></div></form>'
    )
    assert not is_blocked_status(200, {}, f"<title>Contact</title>{turnstile}")
    assert is_blocked_status(
        200, {}, '<form id="challenge-form" action="/shop?__cf_chl_f_tk=abc" method="POST">'
    )
    chl = "<script>window._cf_chl_opt={cType: 'managed'};</script>"
    assert is_blocked_status(200, {}, f"<title>Shop</title>{chl}")
    assert is_blocked_status(200, {}, "<title>Just a moment...</title><noscript>Enable JavaScript</noscript>")
    assert is_blocked_status(
        200,
        {},
        '<iframe src="/_Incapsula_Resource?CWUDNSAI=24&incident_id=1-2">Request unsuccessful.</iframe>',
    )
    assert is_blocked_status(200, {}, "<p>Request unsuccessful. Incapsula incident ID: 123-456</p>")
    # DataDome names itself on every answer of a site it protects; its block is a 403, or says X-DD-B
    assert not is_blocked_status(
        200, {"X-DataDome": "protected", "X-DataDome-CID": "abc"}, "<title>Shop</title>"
    )
    assert is_blocked_status(403, {"X-DataDome": "protected"}, "")
    assert is_blocked_status(200, {"X-DataDome": "protected", "X-DD-B": "1"}, '{"url": "captcha"}')
    # a page about a CDN's errors is no CDN's error page; Akamai's says "Access Denied" in its title or heading
    article = "<title>Fixing 403s</title><p>Access denied errors came from a rule on Akamai's edge.</p>"
    assert not is_blocked_status(200, {}, article)
    akamai = (
        "<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don't have "
        "permission to access this server.<P>\nReference&#32;&#35;18&#46;5f3c<P>https&#58;&#47;&#47;errors&#46;"
        "edgesuite&#46;net&#47;18&#46;5f3c</P>\n</BODY>\n</HTML>"
    )
    assert is_blocked_status(200, {}, akamai) and is_blocked_status(503, {}, akamai)


def test_a_bot_wall_is_found_in_any_case_beyond_ascii_too() -> None:
    """Pages with characters beyond ASCII (a docs page's ¶) are read as lower case as any other."""
    assert is_blocked_status(200, {}, "<p>¶</p><title>JUST A MOMENT...</title>")
    assert is_blocked_status(503, {}, "ü <TITLE>ACCESS DENIED</TITLE> reference from Akamai")
    # KELVIN SIGN lower-cases to "k": "bloc\u212aer" reads as "blocker"
    assert is_blocked_status(200, {}, "ü Please enable JS and disable any ad bloc\u212aer")
    assert not is_blocked_status(200, {}, "<p>¶ İ \u212a, a page</p><p>Akamai, access</p>")


def test_dns_burn_list() -> None:
    burn = DnsBurnList()
    assert not burn.record_failure("flaky.example", "dns-transient")
    assert not burn.is_burned("flaky.example")
    assert burn.record_failure("Gone.Example", "dns")
    assert burn.is_burned("gone.example") and len(burn) == 1
    burn.mark_answered("alive.example")
    assert not burn.record_failure("alive.example", "dns")
    assert not burn.is_burned("alive.example")
    burn.mark_answered("gone.example")  # it answered after all: never burned again
    assert not burn.is_burned("gone.example")
    assert not burn.record_failure("gone.example", "dns")
