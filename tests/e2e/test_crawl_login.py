"""End-to-end: logged-in crawls of test_server's /login-site/ (a form login, a session that expires, a members area).

A scripted login (the password from the environment) gets in and logs in again when the session expires;
--cookies (Netscape, JSON) and --storage-state get in too; a wrong password or a bad file is one line and
exit 1; and neither the password nor a session cookie's value is in any file the crawl wrote.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tarfile
import uuid
import zlib
from pathlib import Path

import pytest
import requests
from support import run_cli

from test_server.routes.login_site import MEMBER_PAGES, PASSWORD, USER

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


def test_login_command_without_a_display_is_one_line_exit_1(tmp_path):
    saved = tmp_path / "state.json"
    result = run_cli(
        "login", "http://localhost:1/login", "--save", str(saved), env={"DISPLAY": "", "WAYLAND_DISPLAY": ""}
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "there is no display here" in lines[0]
    assert not saved.exists()


def test_hook_crawl_login(bare_pm, site):
    """A plugin logs in by itself (no [login] URL): its context's cookies are the login state."""
    from nitpicker_core import hookimpl
    from nitpicker_core.crawler.login import LoginSetup, scripted_login

    run = _run("hook")

    class Login:
        @hookimpl
        async def crawl_login(self, context, page):
            await page.goto(f"{site}/login-site/{run}/login")
            await page.fill('[name="username"]', USER)
            await page.fill('[name="password"]', PASSWORD)
            await page.click("#sign-in")
            await page.wait_for_url("**/members/")

    bare_pm.add_plugin(Login(), "login")
    cookies = asyncio.run(scripted_login(LoginSetup(hook=True), bare_pm, "Nitpicker-test"))
    assert [c["name"] for c in cookies] == ["sid"]
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
