"""The login state: cookie files parsed, scoped to the crawl's hosts, sent where a browser would; expiry rules;
secrets kept out of reprs, stored options and error messages; the config file's [login] table checked."""

from __future__ import annotations

import asyncio
import json

import pytest

from nitpicker_core.config import load_config
from nitpicker_core.crawler.login import (
    LoginError,
    LoginSession,
    LoginSetup,
    cookie_header,
    load_cookies,
    load_storage_state,
    read_storage_state,
    resolve_secret,
    scope_cookies,
    scope_origins,
    storage_script,
)
from nitpicker_core.crawler.options import CrawlOptions

NETSCAPE = (
    "# Netscape HTTP Cookie File\n"
    "#HttpOnly_.example.com\tTRUE\t/\tTRUE\t4102444800\tsid\tsecret-sid-1\n"
    "www.example.com\tFALSE\t/app\tFALSE\t0\tpref\tdark\n"
    ".tracker.net\tTRUE\t/\tFALSE\t0\tt\tx\n"
)


def test_netscape_cookies_are_read_with_their_attributes(tmp_path):
    path = tmp_path / "cookies.txt"
    path.write_text(NETSCAPE, encoding="utf-8")
    cookies = {c["name"]: c for c in load_cookies(path)}
    assert set(cookies) == {"sid", "pref", "t"}
    sid = cookies["sid"]
    assert (sid["value"], sid["domain"], sid["secure"], sid["httpOnly"], sid["expires"]) == (
        "secret-sid-1",
        ".example.com",
        True,
        True,
        4102444800.0,
    )
    assert cookies["pref"]["path"] == "/app" and cookies["pref"]["expires"] == -1


def test_json_cookies_and_storage_states_are_read(tmp_path):
    listed = [
        {"name": "a", "value": "1", "domain": "example.com", "path": "/", "expirationDate": 4102444800.5},
        {"name": "b", "value": "2", "url": "https://www.example.com/x", "sameSite": "Lax"},
    ]
    (tmp_path / "c.json").write_text(json.dumps(listed), encoding="utf-8")
    got = load_cookies(tmp_path / "c.json")
    assert [(c["name"], c["domain"], c["expires"]) for c in got] == [
        ("a", "example.com", 4102444800.5),
        ("b", "www.example.com", -1),
    ]
    assert got[1]["sameSite"] == "Lax"
    (tmp_path / "s.json").write_text(json.dumps({"cookies": listed, "origins": []}), encoding="utf-8")
    assert [c["name"] for c in load_storage_state(tmp_path / "s.json")] == ["a", "b"]


def test_a_storage_state_s_local_storage_is_read_per_origin(tmp_path):
    origins = [
        {"origin": "https://WWW.Example.com", "localStorage": [{"name": "token", "value": "t-1"}]},
        {"origin": "https://empty.example.com", "localStorage": []},  # nothing to write there
        {"origin": "http://localhost:8000", "localStorage": [{"name": "n", "value": 2}]},
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"cookies": [], "origins": origins}), encoding="utf-8")
    cookies, got = read_storage_state(path)
    assert cookies == []  # a login kept in localStorage only needs no cookie
    assert got == [
        {"origin": "https://www.example.com", "localStorage": [{"name": "token", "value": "t-1"}]},
        {"origin": "http://localhost:8000", "localStorage": [{"name": "n", "value": "2"}]},
    ]
    kept, other = scope_origins(got, lambda url: url.startswith("https://www.example.com/"))
    assert [o["origin"] for o in kept] == ["https://www.example.com"] and other == ["http://localhost:8000"]


@pytest.mark.parametrize(
    ("origins", "says"),
    [
        ('{"origin": "file:///x", "localStorage": []}', r"origin 1 is not an http\(s\) origin"),
        ('{"localStorage": []}', "origin 1 has no origin or localStorage list"),
        ('{"origin": "https://e.com", "localStorage": [{"value": "v-4242"}]}', "has no name or value"),
    ],
)
def test_a_storage_state_with_bad_origins_is_one_line_without_values(tmp_path, origins, says):
    path = tmp_path / "s.json"
    path.write_text(f'{{"cookies": [], "origins": [{origins}]}}', encoding="utf-8")
    with pytest.raises(LoginError, match=says) as raised:
        read_storage_state(path)
    assert "4242" not in str(raised.value)


def test_the_storage_script_writes_each_origin_s_items_in_that_origin_only():
    script = storage_script(
        [{"origin": "https://e.com", "localStorage": [{"name": "k", "value": 'quote " and </script>'}]}]
    )
    state = json.loads(script[script.index("({") + 1 : script.rindex(");")])
    assert state == {"https://e.com": [["k", 'quote " and </script>']]}
    assert "state[location.origin]" in script


def test_a_session_keeps_the_site_s_origins_and_says_which_are_not(caplog):
    item = [{"name": "token", "value": "t"}]
    setup = LoginSetup(
        origins=[
            {"origin": "http://e.com:8080", "localStorage": item},
            {"origin": "http://e.com", "localStorage": item},
        ],
        source="s.json (--storage-state)",
    )
    # the crawl's scope says which origin is the site's: the same host on another port is another site
    session = LoginSession(setup, ["e.com"], None, "ua", own=lambda url: url.startswith("http://e.com:8080/"))
    assert [o["origin"] for o in session.browser_storage()] == ["http://e.com:8080"]
    with caplog.at_level("WARNING"):
        asyncio.run(session.start())
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [
        "the localStorage of 1 origin(s) of other sites in s.json (--storage-state) is not used: http://e.com"
    ]
    assert session.stats()["origins"] == 1 and session.stats()["dropped_origins"] == 1


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("garbage\tline\n", "neither a Netscape cookies.txt nor a JSON list"),
        ("[", "not valid JSON"),
        ("[]", "holds no cookies"),
        ('[{"value": "v-4242"}]', "cookie 1 has no name or value"),
        ('[{"name": "n", "value": "v-4242"}]', "has no domain"),
    ],
)
def test_a_cookies_file_that_does_not_parse_is_one_line_without_values(tmp_path, content, says):
    path = tmp_path / "cookies.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LoginError, match=says) as raised:
        load_cookies(path)
    assert "\n" not in str(raised.value) and "4242" not in str(raised.value)


def test_cookies_are_scoped_to_the_crawl_hosts(tmp_path):
    path = tmp_path / "cookies.txt"
    path.write_text(NETSCAPE, encoding="utf-8")
    kept, dropped = scope_cookies(load_cookies(path), ["www.example.com"])
    assert sorted(c["name"] for c in kept) == ["pref", "sid"] and dropped == 1
    # an IP host is matched exactly, never as a suffix
    ip = [{"name": "n", "value": "v", "domain": "1.1", "path": "/"}]
    assert scope_cookies(ip, ["10.1.1"]) == ([], 1)


def test_the_cookie_header_is_what_a_browser_would_send(tmp_path):
    path = tmp_path / "cookies.txt"
    path.write_text(NETSCAPE, encoding="utf-8")
    cookies = load_cookies(path)
    assert cookie_header(cookies, "https://www.example.com/app/page") == "pref=dark; sid=secret-sid-1"
    assert cookie_header(cookies, "https://www.example.com/other") == "sid=secret-sid-1"
    assert cookie_header(cookies, "http://www.example.com/app/") == "pref=dark"  # sid is secure-only
    assert cookie_header(cookies, "https://example.org/app/") is None  # another site
    assert cookie_header(cookies, "https://www.example.com/apple") == "sid=secret-sid-1"  # /app is no prefix
    expired = [{"name": "old", "value": "v", "domain": "example.com", "path": "/", "expires": 1.0}]
    assert cookie_header(expired, "https://example.com/") is None


def test_expiry_is_a_redirect_to_the_login_page_or_a_401_after_a_200():
    setup = LoginSetup(url="https://example.com/login", fields={"password": "pw"})
    session = LoginSession(setup, ["example.com"], None, "ua")
    page = "https://example.com/members/a"
    assert session.expired(page, 200, ["https://example.com/login?next=/members/a"])
    assert not session.expired(page, 401, [])  # a 401 before any 200: that page is closed, not expired
    assert not session.expired(page, 200, [])
    assert session.expired(page, 401, [])  # a 401 where there were 200s
    assert not session.expired("https://example.com/login", 200, [])  # the login page itself
    fresh = LoginSession(setup, ["example.com"], None, "ua")
    fresh.generation = 2
    assert fresh.expired(page, 401, [], seen=1)  # sent with an earlier login's cookies
    assert not fresh.expired(page, 401, [], seen=2)


def test_a_session_without_a_scripted_login_is_not_renewed_and_says_why():
    session = LoginSession(LoginSetup(cookies=[]), ["example.com"], None, "ua")
    assert asyncio.run(session.renew(0)) is False
    assert session.stats()["not_renewed"] == "no scripted login to renew it with"


def test_logout_links_are_recognised_and_the_patterns_can_be_replaced():
    default = LoginSession(LoginSetup(), ["example.com"], None, "ua")
    for url in (
        "https://example.com/logout",
        "https://example.com/account/sign-out",
        "https://example.com/%E3%83%AD%E3%82%B0%E3%82%A2%E3%82%A6%E3%83%88",
    ):
        assert default.is_logout(url), url
    assert not default.is_logout("https://example.com/logbook")
    none = LoginSession(LoginSetup(logout=()), ["example.com"], None, "ua")
    assert not none.is_logout("https://example.com/logout")


def test_secrets_stay_out_of_reprs_and_stored_options():
    setup = LoginSetup(
        cookies=[{"name": "sid", "value": "cookie-value-77", "domain": "example.com", "path": "/"}],
        url="https://example.com/login",
        fields={"password": "password-value-77"},
        source="c.txt (--cookies)",
    )
    options = CrawlOptions(roots=["https://example.com/"], login=setup)
    stored = json.dumps(options.for_storage())
    for text in (repr(setup), repr(options), stored, repr(LoginSession(setup, ["example.com"], None, "ua"))):
        assert "cookie-value-77" not in text and "password-value-77" not in text
    assert options.for_storage()["login"]["fields"] == ["password"]
    from nitpicker_core.crawler.remote import RenderJob

    job = RenderJob("p", "https://example.com/", False, 1.0, cookies=setup.cookies)
    assert "cookie-value-77" not in repr(job)
    origins = [{"origin": "https://example.com", "localStorage": [{"name": "t", "value": "token-value-77"}]}]
    stateful = LoginSetup(origins=origins, source="s.json (--storage-state)")
    job = RenderJob("p", "https://example.com/", False, 1.0, storage=origins)
    stored = json.dumps(CrawlOptions(roots=["https://example.com/"], login=stateful).for_storage())
    for text in (
        repr(stateful),
        repr(job),
        stored,
        repr(LoginSession(stateful, ["example.com"], None, "ua")),
    ):
        assert "token-value-77" not in text


def test_field_values_come_from_the_environment_or_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NP_TEST_PW", "from-env")
    (tmp_path / "pw").write_text("from-file\n", encoding="utf-8")
    assert resolve_secret("env:NP_TEST_PW", "f") == "from-env"
    assert resolve_secret(f"file:{tmp_path / 'pw'}", "f") == "from-file"
    assert resolve_secret("plain", "f") == "plain"
    monkeypatch.delenv("NP_TEST_PW")
    with pytest.raises(
        LoginError, match="login.fields.password: the environment variable NP_TEST_PW is not set"
    ):
        resolve_secret("env:NP_TEST_PW", "login.fields.password")


def test_the_login_table_is_checked_without_quoting_values(bare_pm):
    good = load_config(bare_pm, data={"login": {"url": "https://e.com/login", "fields": {"pw": "env:X"}}})
    assert good.login == {"url": "https://e.com/login", "fields": {"pw": "env:X"}}
    bad = load_config(bare_pm, data={"login": {"url": "https://e.com/login", "fields": {"pw": 12345678}}})
    with pytest.raises(Exception, match="login.fields must be a table of strings") as raised:
        _ = bad.login
    assert "12345678" not in str(raised.value)
    warned = load_config(bare_pm, data={"login": {"submitt": "#go"}})
    assert any("did you mean 'submit'" in w for w in warned.warnings)
    assert load_config(bare_pm, data={}).login == {}
