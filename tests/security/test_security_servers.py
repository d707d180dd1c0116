"""The viewer and the dashboard answer only their own Host and Origin, send security headers on every
response, and the viewer's JSON API answers malformed arguments with a one-line 400."""

from __future__ import annotations

import html
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archives import SITE, build_archive
from support import as_from_a_terminal, wait_until

BIG = str(2**63)


def cli(*args: str, cwd: Path, stderr: Path) -> subprocess.Popen[str]:
    # SIGINT at its default in the child: a test worker that ignores SIGINT would pass that on, and each
    # stop() below would then wait its whole minute before killing the server (CI: 60 s per server)
    with stderr.open("w") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "nitpicker_cli.main", *args, "--no-open"],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            env=dict(os.environ),
            preexec_fn=as_from_a_terminal,
        )


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fetch(
    port: int, path: str = "/", *, host: str | None = None, origin: str | None = None, method: str = "GET"
) -> tuple[int, Any, bytes]:
    """One real HTTP request to 127.0.0.1:port; ``host`` forges the Host header (as a rebound name would)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {} if host is None else {"Host": host}
    if origin is not None:
        headers["Origin"] = origin
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("servers")


@pytest.fixture(scope="module")
def archive(workdir) -> Path:
    return build_archive(workdir / "site.nitpicker")


@pytest.fixture(scope="module")
def viewer(archive, workdir) -> Iterator[int]:
    """`nitpicker viewer --port 0` as a real process: the Host check must know the port it picked."""
    proc = cli("viewer", str(archive), "--port", "0", cwd=workdir, stderr=workdir / "viewer.err")
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (workdir / "viewer.err").read_text()
        yield int(url.rsplit(":", 1)[1].rstrip("/"))
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def dashboard(workdir) -> Iterator[int]:
    """`nitpicker dashboard --port 0` as a real process; its URL is on stderr."""
    runs = workdir / "runs"
    runs.mkdir()
    err = workdir / "dashboard.err"
    proc = cli("dashboard", str(runs), "--port", "0", cwd=workdir, stderr=err)
    try:
        wait_until(
            lambda: "dashboard: http://" in err.read_text() or proc.poll() is not None, "the dashboard's URL"
        )
        line = next((x for x in err.read_text().splitlines() if x.startswith("dashboard: http://")), "")
        assert line, err.read_text()
        yield int(line.split()[1].rsplit(":", 1)[1].rstrip("/"))
    finally:
        stop(proc)


@pytest.fixture(params=["viewer", "dashboard"])
def server(request) -> tuple[str, int, str]:
    """Each app with a JSON path that reads what it serves (the issue's exploit for the viewer)."""
    port = request.getfixturevalue(request.param)
    path = f"/api/page-html?url={SITE}/" if request.param == "viewer" else "/api/snapshot"
    return request.param, port, path


# --- Host -----------------------------------------------------------------------------------------

FOREIGN_HOSTS = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example",
    "127.0.0.1:{other}",
    "localhost:{other}",
    "127.0.0.3:{port}",
    "10.0.0.1",
    "[::2]:{port}",
    "127.0.0.1:{port}@evil.example",
    "localhost/evil",
    "",
    "LOCALHOST:{port} x",
]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_a_foreign_host_gets_421_with_a_short_plain_text_body(server, host):
    name, port, path = server
    status, headers, body = fetch(port, path, host=host.format(port=port, other=port + 1))
    assert status == 421, (name, host, body[:200])
    assert headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    assert text.count("\n") <= 1 and len(text) < 200 and "Home" not in text and "runs" not in text


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:{port}",
        "localhost",
        "localhost:{port}",
        "LocalHost:{port}",
        "[::1]",
        "[::1]:{port}",
    ],
)
def test_the_loopback_names_with_or_without_the_port_are_served(server, host):
    name, port, path = server
    status, headers, body = fetch(port, path, host=host.format(port=port))
    assert status == 200, (name, host, body[:200])
    assert headers["Content-Type"].startswith(("application/json", "text/html"))


def test_the_viewer_answers_the_host_it_was_given(archive, workdir):
    # 127.0.0.2 is loopback on Linux but not one of the loopback *names*: only --host makes it acceptable.
    proc = cli(
        "viewer",
        str(archive),
        "--port",
        "0",
        "--host",
        "127.0.0.2",
        cwd=workdir,
        stderr=workdir / "viewer2.err",
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.2:"), (workdir / "viewer2.err").read_text()
        port = int(url.rsplit(":", 1)[1].rstrip("/"))
        conn = http.client.HTTPConnection("127.0.0.2", port, timeout=120)
        conn.request("GET", "/api/info")
        assert conn.getresponse().status == 200
        conn.close()
        for host, status in [(f"127.0.0.2:{port}", 200), ("127.0.0.3", 421), (f"evil.example:{port}", 421)]:
            conn = http.client.HTTPConnection("127.0.0.2", port, timeout=120)
            conn.request("GET", "/api/info", headers={"Host": host})
            assert conn.getresponse().status == status, host
            conn.close()
    finally:
        stop(proc)


def serve(app: Any) -> tuple[Any, int]:
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    return server, server.server_port


@pytest.mark.parametrize("kind", ["viewer", "dashboard"])
def test_a_host_name_given_is_served_and_a_wildcard_accepts_only_ip_literals(kind, archive, workdir):
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_dashboard import create_app as dashboard_app
    from nitpicker_viewer.app import create_app as viewer_app

    def make(host: str) -> Any:
        if kind == "viewer":
            return viewer_app(archive, make_plugin_manager(), host=host)
        return dashboard_app([workdir], host=host)

    named, named_port = serve(make("Audit.Example"))
    wildcard, wildcard_port = serve(make("0.0.0.0"))
    try:
        assert fetch(named_port, "/", host=f"audit.example:{named_port}")[0] == 200
        assert fetch(named_port, "/", host="other.example")[0] == 421
        # a rebound name is always a name: an address typed into the address bar cannot be rebound
        assert fetch(wildcard_port, "/", host=f"192.168.1.5:{wildcard_port}")[0] == 200
        assert fetch(wildcard_port, "/", host=f"[fe80::1]:{wildcard_port}")[0] == 200
        assert fetch(wildcard_port, "/", host=f"evil.example:{wildcard_port}")[0] == 421
        assert fetch(wildcard_port, "/", host=f"127.0.0.1:{wildcard_port + 1}")[0] == 421
    finally:
        for srv in (named, wildcard):
            srv.shutdown()
            srv.server_close()


# --- Origin ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}"]
)
def test_a_same_origin_request_is_served(server, origin):
    name, port, path = server
    assert fetch(port, path, origin=origin.format(port=port))[0] == 200


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD"])
@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://evil.example:{port}",
        "null",
        "http://127.0.0.1:{other}",
        "https://127.0.0.1:{port}",
        "http://127.0.0.1",
        "http://127.0.0.1:{port}.evil.example",
        "http://127.0.0.3:{port}",
        "garbage",
    ],
)
def test_a_foreign_origin_gets_403(server, origin, method):
    name, port, path = server
    status, headers, body = fetch(port, path, origin=origin.format(port=port, other=port + 1), method=method)
    assert status == 403, (name, origin, method, body[:200])
    assert b"Home" not in body and b"runs" not in body
    assert headers["X-Content-Type-Options"] == "nosniff"


# --- Security headers -----------------------------------------------------------------------------

VIEWER_PATHS = [
    "/",
    "/pages",
    "/api/",
    "/api/pages",
    "/static/viewer.css",
    "/static/viewer.js",
    "/nowhere",
    "/api/nowhere",
    "/static/nowhere.js",
    f"/page?url={SITE}/",
    "/api/pages?offset=-1",
]
DASHBOARD_PATHS = [
    "/",
    "/api/snapshot",
    "/static/dashboard.js",
    "/static/dashboard.css",
    "/nowhere",
    "/static/nowhere.js",
]


def assert_security_headers(headers: Any, where: str) -> dict[str, str]:
    assert headers["X-Content-Type-Options"] == "nosniff", where
    assert headers["Referrer-Policy"] in ("no-referrer", "same-origin"), where
    csp = headers["Content-Security-Policy"]
    assert csp, where
    directives = {part.split()[0]: part.strip() for part in csp.split(";") if part.strip()}
    assert directives["frame-ancestors"] == "frame-ancestors 'none'", (where, csp)
    assert "'unsafe-inline'" not in directives.get("script-src", directives["default-src"]), (where, csp)
    assert "'unsafe-eval'" not in csp, (where, csp)
    return directives


@pytest.mark.parametrize("path", VIEWER_PATHS)
def test_every_viewer_response_carries_the_security_headers(viewer, path):
    status, headers, _ = fetch(viewer, path)
    assert status in (200, 400, 404), path
    assert_security_headers(headers, path)


@pytest.mark.parametrize("path", DASHBOARD_PATHS)
def test_every_dashboard_response_carries_the_security_headers(dashboard, path):
    status, headers, _ = fetch(dashboard, path)
    assert status in (200, 404), path
    directives = assert_security_headers(headers, path)
    assert directives["default-src"] == "default-src 'self'"


def test_refusals_carry_the_security_headers_too(server):
    name, port, path = server
    for status, headers, _ in (fetch(port, path, host="evil.example"), fetch(port, path, origin="null")):
        assert status in (421, 403)
        assert_security_headers(headers, f"{name} {status}")


def test_the_dashboard_page_has_no_inline_script(dashboard):
    # the dashboard's CSP forbids inline script, so the page must not depend on one
    _, _, body = fetch(dashboard, "/")
    html = body.decode()
    assert "<script>" not in html and "<script src=" in html and "data-poll-ms=" in html


def test_the_sandboxed_snapshot_keeps_its_own_stricter_policy(viewer):
    status, headers, body = fetch(viewer, f"/page/html?url={SITE}/")
    assert status == 200 and b"<h1>Home</h1>" in body
    csp = headers["Content-Security-Policy"]
    assert csp.startswith("sandbox;") and "default-src 'none'" in csp
    assert "frame-ancestors 'self'" in csp  # framed by the viewer's own page view, by nobody else
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"


# --- The dashboard's loopback warning -------------------------------------------------------------


def test_the_dashboard_warns_about_a_non_loopback_host(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is not on this machine: the warning comes, then binding fails in one line.
    proc = cli("dashboard", str(tmp_path), "--host", "192.0.2.1", cwd=tmp_path, stderr=tmp_path / "err")
    out, _ = proc.communicate(timeout=120)
    lines = (tmp_path / "err").read_text().splitlines()
    assert proc.returncode == 1 and out == "", lines
    assert lines == [
        "nitpicker: warning: binding 192.0.2.1: anyone who can reach this address can watch the "
        "pipeline runs",
        "nitpicker: error: cannot listen on 192.0.2.1: Cannot assign requested address",
    ]


# --- The viewer's JSON API: malformed arguments are one-line 400s ---------------------------------

BAD_API = [
    ("/api/pages?offset=" + BIG, "offset"),
    ("/api/pages?limit=" + BIG, "limit"),
    ("/api/pages?commit=" + BIG, "commit"),
    ("/api/page-detail?commit=" + "9" * 40 + f"&url={SITE}/", "commit"),
    ("/api/diff?base=" + BIG, "base"),
    ("/api/pages?offset=-1", "offset"),
    ("/api/pages?commit=-1", "commit"),
    ("/api/pages?commit=%EF%BC%91", "commit"),
    ("/api/pages?commit=1%00", "commit"),
    ("/api/pages?url=a%00b", "url"),
    ("/api/page-detail?url=a%00b", "url"),
    ("/api/resources?url=%00", "url"),
    ("/api/pages?ca%00t=1", None),
    ("/api/page-detail?url=" + "a" * 5000, "url"),
    ("/api/pages?url=" + "a" * 5000, "url"),
    ("/api/pages?url=%5B%5B%5B", "url"),
    ("/api/pages?url=*%5B%5B%5B*", "url"),
]


@pytest.mark.parametrize(("path", "param"), BAD_API, ids=[p[:60] for p, _ in BAD_API])
def test_malformed_api_arguments_are_a_one_line_400(viewer, workdir, path, param):
    status, headers, body = fetch(viewer, path)
    assert status == 400, body[:300]
    assert headers["Content-Type"] == "application/json"
    data = json.loads(body)
    error = data["error"]
    assert data["status"] == 400 and "\n" not in error and len(error) < 300, error
    assert str(workdir) not in error and "Traceback" not in error and "internal" not in error.lower()
    if param:
        assert param in error, error


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/pages?commit=" + BIG, "parameter 'commit' must be a commit id"),
        ("/pages?url=%00", "contains a NUL byte"),
        ("/page?url=" + "b" * 5000, "is too long (5,000 characters"),
    ],
)
def test_malformed_arguments_to_pages_are_a_400_page(viewer, path, message):
    status, headers, body = fetch(viewer, path)
    assert status == 400 and headers["Content-Type"].startswith("text/html")
    assert message in html.unescape(body.decode())


@pytest.mark.browser
def test_a_rebound_name_in_chromium_reads_nothing(server):
    # Chromium resolves evil.example to 127.0.0.1, as after DNS rebinding: the page is its own origin,
    # so its script could read every answer, if the server gave one
    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    name, port, path = server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=find_browser(),
            args=[*browser_args(), "--host-resolver-rules=MAP evil.example 127.0.0.1"],
        )
        try:
            page = browser.new_page()
            response = page.goto(f"http://evil.example:{port}{path}")
            assert response is not None and response.status == 421, name
            assert "Misdirected" in page.content()
            response = page.goto(f"http://localhost:{port}{path}")
            assert response is not None and response.status == 200, name
        finally:
            browser.close()
