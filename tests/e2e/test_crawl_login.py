"""End-to-end: logged-in crawls of test_server's /login-site/ (a form login, a session that expires, a members area).

A scripted login (the password from the environment) gets in and logs in again when the session expires;
--cookies (Netscape, JSON) and --storage-state get in too, a storage state's localStorage logs a single-page
app in, and robots.txt and sitemaps behind the login are read logged in; a wrong password or a bad file is
one line and exit 1; and neither the password nor a session cookie's value is in any file the crawl wrote.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import uuid
import zlib
from pathlib import Path

import pytest
import requests
from support import run_cli, wait_until

from test_server.routes.login_site import APP_PAGES, MEMBER_PAGES, PASSWORD, USER

MEMBERS = {f"Member {name.title()}" for name in MEMBER_PAGES} | {"Members"}


def _run(prefix: str, views: int | None = None) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}" + (f"-n{views}" if views else "")


def _counts(site: str, run: str) -> dict[str, int]:
    counts = requests.get(f"{site}/__counts?by=method", timeout=10).json()
    return {key: n for key, n in counts.items() if f"/login-site/{run}/" in key}


def _config(tmp_path: Path, site: str, run: str, password: str = "env:SITE_PASSWORD") -> None:
    (tmp_path / "nitpicker.toml").write_text(
        f'[login]\nurl = "{site}/login-site/{run}/login"\nsubmit = "#sign-in"\n'
        f'[login.fields]\nusername = "{USER}"\npassword = "{password}"\n',
        encoding="utf-8",
    )


def _texts(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` as bytes: archives unpacked, SQLite databases dumped, zlib blobs inflated."""
    found: dict[str, bytes] = {}
    for path in root.rglob("*"):
        if path.is_file() and path.name != "nitpicker.toml":  # the config file is the user's, not the crawl's
            found[str(path)] = path.read_bytes()
            if tarfile.is_tarfile(path):
                unpacked = root / f"unpacked-{path.name}"
                with tarfile.open(path) as tar:
                    tar.extractall(unpacked, filter="data")
    for path in root.rglob("*"):
        if path.is_file() and path.read_bytes()[:16] == b"SQLite format 3\x00":
            with sqlite3.connect(path) as db:
                found[f"{path} (dump)"] = "\n".join(db.iterdump()).encode()
                for (table,) in db.execute("select name from sqlite_master where type = 'table'"):
                    for n, row in enumerate(db.execute(f'select * from "{table}"')):
                        for i, value in enumerate(row):
                            if isinstance(value, bytes):
                                try:
                                    found[f"{path} {table} row {n} column {i}"] = zlib.decompress(value)
                                except zlib.error:
                                    found[f"{path} {table} row {n} column {i}"] = value
    return found


def assert_nowhere(root: Path, secrets: list[str], *outputs: str) -> None:
    files = _texts(root)
    assert any(name.endswith("(dump)") for name in files), "no archive database found to search"
    for secret in secrets:
        for name, data in files.items():
            assert secret.encode() not in data, f"{secret[:4]}… found in {name}"
        for output in outputs:
            assert secret not in output


@pytest.mark.parametrize("render", ["always", "never"])
def test_scripted_login_gets_in_and_renews_the_expired_session(site, tmp_path, render):
    run = _run("form", views=5)
    _config(tmp_path, site, run)
    archive = tmp_path / "members.nitpicker"
    result = run_cli(
        "--verbose",
        "crawl",
        f"{site}/login-site/{run}/members/",
        "-o",
        str(archive),
        "--render",
        render,
        "--no-image",
        "--json",
        cwd=tmp_path,
        env={"SITE_PASSWORD": PASSWORD},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        titles = {page["url"].rsplit("/", 1)[-1]: page["title"] for page in reader.pages() if page["status"]}
        options = reader.info()["options"]
    assert set(titles.values()) == MEMBERS, titles  # every page of the members area, none the login form
    summary = json.loads(result.stdout)
    counts = _counts(site, run)
    posts = counts.get(f"POST /login-site/{run}/login", 0)
    # the server saw the first login and one more for every renewal the crawl reports
    assert summary["login"]["renewals"] >= 1 and posts == 1 + summary["login"]["renewals"], (counts, summary)
    assert "Logged in again: " in result.stderr
    # the logout link was left out, never requested, and said so
    assert not any("logout" in key for key in counts), counts
    assert summary["login"]["logout_skipped"] == 1
    assert options["login"]["fields"] == ["password", "username"]
    assert_nowhere(tmp_path, [PASSWORD], result.stdout, result.stderr)
    with pytest.raises(AssertionError, match="found in"):  # the search does reach the pages' stored HTML
        assert_nowhere(tmp_path, ["<title>Member Alpha</title>"])


def test_a_401_after_200s_is_an_expired_session_and_renewed(site, tmp_path):
    run = _run("api", views=4)
    _config(tmp_path, site, run)
    result = run_cli(
        "crawl",
        f"{site}/login-site/{run}/api/",
        "-o",
        str(tmp_path / "api.nitpicker"),
        "--render",
        "never",
        "--json",
        cwd=tmp_path,
        env={"SITE_PASSWORD": PASSWORD},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.archive import open_archive

    with open_archive(tmp_path / "api.nitpicker") as reader:
        statuses = {page["title"]: page["status"] for page in reader.pages()}
    assert statuses == {"Api": 200, **{f"Api {name.title()}": 200 for name in MEMBER_PAGES}}
    renewals = json.loads(result.stdout)["login"]["renewals"]
    assert renewals >= 1 and _counts(site, run)[f"POST /login-site/{run}/login"] == 1 + renewals


def _mint(site: str, run: str) -> tuple[str, str]:
    got = requests.post(f"{site}/login-site/{run}/mint", timeout=10).json()
    return got["token"], got["path"]


@pytest.mark.parametrize(
    ("kind", "render"), [("netscape", "always"), ("json", "never"), ("storage-state", "always")]
)
def test_cookies_and_storage_state_get_into_the_gated_area(site, tmp_path, kind, render):
    run = _run("cookies")
    token, path = _mint(site, run)
    stranger = "stranger-value-31337"  # a cookie of another site, dropped
    if kind == "netscape":
        text = (
            "# Netscape HTTP Cookie File\n"
            f"#HttpOnly_localhost\tFALSE\t{path}\tFALSE\t0\tsid\t{token}\n"
            f".example.org\tTRUE\t/\tFALSE\t0\tother\t{stranger}\n"
        )
        flag, name = "--cookies", "cookies.txt"
    else:
        cookies = [
            {
                "name": "sid",
                "value": token,
                "domain": "localhost",
                "path": path,
                "expires": -1,
                "httpOnly": True,
            },
            {"name": "other", "value": stranger, "domain": ".example.org", "path": "/"},
        ]
        data: object = cookies if kind == "json" else {"cookies": cookies, "origins": []}
        text = json.dumps(data)
        flag, name = ("--cookies", "cookies.json") if kind == "json" else ("--storage-state", "state.json")
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    (secrets_dir / name).write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    given = [flag, str(secrets_dir / name)]
    if kind == "json":  # the config file's [crawl] table may name the file instead of the flag
        (work / "nitpicker.toml").write_text(f"[crawl]\ncookies = {json.dumps(str(secrets_dir / name))}\n")
        given = []
    result = run_cli(
        "crawl",
        f"{site}/login-site/{run}/members/",
        "-o",
        str(work / "members.nitpicker"),
        *given,
        "--render",
        render,
        "--no-image",
        "--json",
        cwd=work,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.archive import open_archive

    with open_archive(work / "members.nitpicker") as reader:
        titles = {page["title"] for page in reader.pages() if page["status"]}
    assert titles == MEMBERS
    summary = json.loads(result.stdout)["login"]
    assert summary["cookies"] == 1 and summary["dropped_cookies"] == 1
    assert "1 cookie(s) of other hosts dropped" in result.stderr
    assert_nowhere(work, [token, stranger], result.stdout, result.stderr)


def test_a_pipeline_run_logged_in_keeps_the_cookie_out_of_its_journal(site, tmp_path):
    run = _run("pipeline")
    token, path = _mint(site, run)
    state = tmp_path / "secrets" / "state.json"
    state.parent.mkdir()
    cookie = {"name": "sid", "value": token, "domain": "localhost", "path": path}
    state.write_text(json.dumps({"cookies": [cookie], "origins": []}), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = run_cli(
        "pipeline",
        f"{site}/login-site/{run}/members/",
        "-o",
        str(work / "members.nitpicker"),
        "--journal-dir",
        str(work / "runs"),
        "--no-analyze",
        "--storage-state",
        str(state),
        "--no-image",
        cwd=work,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    journals = list((work / "runs").glob("*.jsonl"))
    assert journals and "state.json" in journals[0].read_text()  # the journal names the file, not its cookies
    from nitpicker_core.archive import open_archive

    with open_archive(work / "members.nitpicker") as reader:
        assert {page["title"] for page in reader.pages() if page["status"]} == MEMBERS
    assert_nowhere(work, [token], result.stdout, result.stderr)


def test_wrong_password_is_one_line_exit_1_and_writes_nothing(site, tmp_path):
    run = _run("wrong")
    _config(tmp_path, site, run, password="file:" + str(tmp_path / "pw.txt"))
    (tmp_path / "pw.txt").write_text("not-the-password-42\n", encoding="utf-8")
    archive = tmp_path / "members.nitpicker"
    result = run_cli(
        "crawl", f"{site}/login-site/{run}/members/", "-o", str(archive), cwd=tmp_path, timeout=120
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "the login failed: still on the login page" in lines[0], result.stderr
    assert "not-the-password-42" not in result.stderr + result.stdout
    assert not archive.exists() and not Path(f"{archive}.stub").exists()
    assert _counts(site, run).get(f"POST /login-site/{run}/login") == 1
    assert not any("members" in key for key in _counts(site, run))  # no page was crawled


@pytest.mark.parametrize(
    ("flag", "content", "says"),
    [
        ("--cookies", "this is\tnot a cookies file\n", "is neither a Netscape cookies.txt nor a JSON list"),
        ("--cookies", '[{"name": "sid"', "is not valid JSON"),
        ("--storage-state", '{"origins": []}', "is not a Playwright storage state"),
        (
            "--storage-state",
            '{"cookies": [{"name": "sid", "value": "v-98765", "domain": ".example.org", "path": "/"}]}',
            "is for the crawl's hosts (localhost): a file of another site?",
        ),
        (
            "--storage-state",
            '{"cookies": [], "origins": [{"origin": "https://example.org", '
            '"localStorage": [{"name": "token", "value": "v-98765"}]}]}',
            "none of the 0 cookie(s) and 1 origin(s) with localStorage of given.txt (--storage-state) is for "
            "the crawl's hosts (localhost): a file of another site?",
        ),
        ("--storage-state", '{"cookies": [], "origins": []}', "holds no cookies and no localStorage"),
    ],
)
def test_bad_cookies_file_is_one_line_exit_1(site, tmp_path, flag, content, says):
    given = tmp_path / "given.txt"
    given.write_text(content, encoding="utf-8")
    archive = tmp_path / "out.nitpicker"
    result = run_cli(
        "crawl", f"{site}/login-site/x/members/", "-o", str(archive), flag, str(given), cwd=tmp_path
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert "v-98765" not in result.stderr
    assert not archive.exists() and not Path(f"{archive}.stub").exists()


@pytest.fixture
def second_site():
    """test_server again on a port of its own: localhost there is another origin of the same site name."""
    from test_server import serve

    server, base = serve()
    yield base
    server.shutdown()


def test_a_storage_state_s_local_storage_logs_an_app_in_and_another_site_s_is_not_used(
    site, second_site, tmp_path
):
    """/login-site/<run>/app/ shows its links only to a token in localStorage; the state also holds one for
    localhost on another port (another site for the crawl), framed by the app, which must not reach it."""
    run = _run("app")
    token, _ = _mint(site, run)
    item = [{"name": "token", "value": token}]
    state = tmp_path / "secrets" / "state.json"
    state.parent.mkdir()
    origins = [{"origin": site, "localStorage": item}, {"origin": second_site, "localStorage": item}]
    state.write_text(json.dumps({"cookies": [], "origins": origins}), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    port = second_site.rsplit(":", 1)[1]
    result = run_cli(
        "crawl",
        f"{site}/login-site/{run}/app/?frame-port={port}",
        "-o",
        str(work / "app.nitpicker"),
        "--storage-state",
        str(state),
        "--no-image",
        "--json",
        cwd=work,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.archive import open_archive

    with open_archive(work / "app.nitpicker") as reader:
        titles = {page["title"] for page in reader.pages() if page["status"]}
    assert {"App", *(f"App {name.title()}" for name in APP_PAGES)} <= titles, titles
    assert _counts(site, run).get(f"GET /login-site/{run}/app-data", 0) >= 1  # the app sent its token
    # the other origin's frame ran its script in the browser, and found no token in its localStorage
    framed = _counts(second_site, run)
    assert framed.get(f"GET /login-site/{run}/frame-seen", 0) >= 1, framed
    assert not framed.get(f"GET /login-site/{run}/frame-data"), framed
    summary = json.loads(result.stdout)["login"]
    assert (summary["origins"], summary["dropped_origins"]) == (1, 1)
    warned = [line for line in result.stderr.splitlines() if "origin(s) of other sites" in line]
    assert len(warned) == 1 and second_site in warned[0] and "is not used" in warned[0], result.stderr
    assert_nowhere(work, [token], result.stdout, result.stderr)


@pytest.fixture
def gated_sites():
    """Two sites behind a cookie gate (test_server's gated_origin_app): the one crawled, which links to the other."""
    from test_server import serve
    from test_server.routes.login_site import gated_origin_app

    inside, outside = gated_origin_app(), gated_origin_app()
    (server_in, site_in), (server_out, site_out) = serve(app=inside), serve(app=outside)
    inside.config["OUTSIDE"] = site_out
    yield (inside, site_in), (outside, site_out)
    server_in.shutdown()
    server_out.shutdown()


def test_robots_txt_and_sitemaps_behind_the_login_are_read_logged_in(gated_sites, tmp_path):
    (inside, site), (outside, _) = gated_sites
    token = requests.post(f"{site}/mint", timeout=10).json()["token"]
    cookies = tmp_path / "secrets" / "cookies.json"
    cookies.parent.mkdir()
    # a cookie has no port: this one matches the other site (localhost too) as well, and must not go there
    cookies.write_text(json.dumps([{"name": "sid", "value": token, "domain": "localhost", "path": "/"}]))
    work = tmp_path / "work"
    work.mkdir()
    archive = work / "gated.nitpicker"
    result = run_cli(
        "crawl",
        f"{site}/members/",
        "-o",
        str(archive),
        "--cookies",
        str(cookies),
        "--render",
        "never",
        cwd=work,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        titles = {page["title"] for page in reader.pages() if page["status"]}
    # linked from nowhere: listed by the sitemap robots.txt names, and by /sitemap.xml
    assert {"Members", "Member from-robots", "Member from-default"} <= titles, titles
    asked = inside.extensions["requests"]
    for path in ("/robots.txt", "/maps/moved.xml", "/maps/members.xml", "/sitemap.xml"):
        assert ("GET", path, True) in asked, (path, asked)
    assert not any(path != "/mint" and not cookie for _, path, cookie in asked), asked
    reached = outside.extensions["requests"]
    assert {path for _, path, _ in reached} >= {"/robots.txt", "/members/"}, reached  # it was asked …
    assert not any(cookie for _, _, cookie in reached), reached  # … and never with the cookie
    assert_nowhere(work, [token], result.stdout, result.stderr)


def test_the_login_cookie_session_decides_each_redirect_hop(gated_sites):
    """requests drops a Cookie header at a redirect: a same-host hop would lose the login, another host's keep it."""
    from nitpicker_core.crawler.login import CookieSession

    (inside, site), (outside, _) = gated_sites
    token = requests.post(f"{site}/mint", timeout=10).json()["token"]
    session = CookieSession()
    session.use_login(lambda url: f"sid={token}" if url.startswith(site + "/") else None)
    moved = session.get(f"{site}/maps/moved.xml", timeout=10)
    assert moved.status_code == 200 and "/members/from-robots" in moved.text  # the hop after the 301 too
    away = session.get(f"{site}/away", timeout=10)
    assert away.status_code == 200 and "Log In" in away.text  # the other site, not logged in
    assert ("GET", "/away", True) in inside.extensions["requests"]
    assert [cookie for _, path, cookie in outside.extensions["requests"] if path == "/members/"] == [False]


def test_login_command_without_a_display_is_one_line_exit_1(tmp_path):
    saved = tmp_path / "state.json"
    result = run_cli(
        "login", "http://localhost:1/login", "--save", str(saved), env={"DISPLAY": "", "WAYLAND_DISPLAY": ""}
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "there is no display here" in lines[0]
    assert not saved.exists()


@pytest.fixture
def xvfb_display():
    """A virtual X display for `nitpicker login`'s visible browser; Xvfb tells its number once it is ready."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        # bin/setup '[test]' installs it: on CI (which runs that setup) its absence is a missing install step,
        # not a reason to leave the visible-login path untested
        if os.environ.get("CI"):
            pytest.fail("Xvfb is not installed although bin/setup '[test]' ran: the install step is missing")
        pytest.skip("Xvfb is not installed (`bin/setup '[test]'` installs it)")
    reading, writing = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(writing), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(writing,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(writing)
    with os.fdopen(reading) as ready:
        number = ready.readline().strip()  # written once the display accepts clients; "" if Xvfb died
    if not number:
        proc.kill()
        pytest.fail("Xvfb did not start")
    yield f":{number}"
    proc.terminate()
    proc.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _targets(port: int) -> list[dict[str, str]]:
    """The pages Chromium's remote debugging lists (none while it is not listening yet)."""
    try:
        return list(requests.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json())
    except (requests.RequestException, ValueError):
        return []


@pytest.mark.parametrize("ending", ["enter", "close"])
def test_login_command_saves_the_session_a_person_logged_in_with(site, tmp_path, xvfb_display, ending):
    """`nitpicker login` under Xvfb: the test logs in in its visible Chromium (through Chromium's remote
    debugging, as a person would with the mouse), then presses Enter or closes the window."""
    from playwright.sync_api import sync_playwright

    run = _run("by-hand")
    login_url = f"{site}/login-site/{run}/login"
    saved = tmp_path / "state.json"
    port = _free_port()
    args = f"{os.environ.get('NITPICKER_BROWSER_ARGS', '')} --remote-debugging-port={port}"
    env = dict(os.environ, DISPLAY=xvfb_display, WAYLAND_DISPLAY="", NITPICKER_BROWSER_ARGS=args)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "login", login_url, "--save", str(saved)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        wait_until(
            lambda: any(t.get("url") == login_url for t in _targets(port)) or proc.poll() is not None,
            "the login page in the visible browser",
        )
        assert proc.poll() is None, proc.communicate()
        with sync_playwright() as playwright:
            browser = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = next(p for c in browser.contexts for p in c.pages if p.url == login_url)
            page.fill('[name="username"]', USER)
            page.fill('[name="password"]', PASSWORD)
            page.click("#sign-in")
            page.wait_for_url("**/members/")
            if ending == "close":
                page.close()
        if ending == "enter":
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        # with the window closed, the terminal's input stays open: the command must not wait for a line
        code = proc.wait(timeout=60)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, stderr
    assert "saved 1 cookie(s)" in stderr
    text = saved.read_text(encoding="utf-8")
    assert PASSWORD not in text
    assert saved.stat().st_mode & 0o777 == 0o600
    (sid,) = [c for c in json.loads(text)["cookies"] if c["name"] == "sid"]
    assert sid["domain"] == "localhost"
    members = requests.get(f"{site}/login-site/{run}/members/", cookies={"sid": sid["value"]}, timeout=10)
    assert "<title>Members</title>" in members.text  # the saved session is the live one


def test_hook_crawl_login(bare_pm, site):
    """A plugin logs in by itself (no [login] URL): its context's cookies and localStorage are the login state."""
    from nitpicker_core import hookimpl
    from nitpicker_core.crawler.login import LoginSetup, scripted_login, scripted_login_state

    run = _run("hook")

    class Login:
        @hookimpl
        async def crawl_login(self, context, page):
            await page.goto(f"{site}/login-site/{run}/login")
            await page.fill('[name="username"]', USER)
            await page.fill('[name="password"]', PASSWORD)
            await page.click("#sign-in")
            await page.wait_for_url("**/members/")
            await page.evaluate("localStorage.setItem('token', 'kept-by-the-app')")  # a single-page app's

    bare_pm.add_plugin(Login(), "login")
    cookies, origins = asyncio.run(scripted_login_state(LoginSetup(hook=True), bare_pm, "Nitpicker-test"))
    assert [c["name"] for c in cookies] == ["sid"]
    assert origins == [{"origin": site, "localStorage": [{"name": "token", "value": "kept-by-the-app"}]}]
    assert requests.get(
        f"{site}/login-site/{run}/members/alpha", cookies={"sid": cookies[0]["value"]}, timeout=10
    ).text.count("Member Alpha")

    class Refuses:
        @hookimpl
        def crawl_login(self, context, page):
            return False

    bare_pm.add_plugin(Refuses(), "refuses")
    from nitpicker_core.crawler.login import LoginError

    with pytest.raises(LoginError, match="a crawl_login hook said so"):
        asyncio.run(scripted_login(LoginSetup(hook=True), bare_pm, "Nitpicker-test"))
