"""The test site answers every route the crawler tests rely on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests
from support import wait_until

from test_server import serve


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, str]]:
    srv, base = serve()
    yield base, f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def get(url: str, **kwargs) -> requests.Response:  # type: ignore[no-untyped-def]
    return requests.get(url, allow_redirects=False, timeout=5, **kwargs)


@pytest.mark.parametrize(
    ("path", "status", "title"),
    [
        ("/", 200, "Test Top"),
        ("/about", 200, "About"),
        ("/recursive/", 200, "Recursive Top"),
        ("/recursive/page-c", 200, "Page C"),
        ("/external-like", 200, "External Page"),
        ("/redirect/dest", 200, "Redirect Destination"),
        ("/meta/full", 200, "Full Meta Page"),
        ("/meta/minimal", 200, "Minimal Page"),
        ("/exclude/secret/hidden", 200, "Secret Hidden"),
        ("/options/page-a?tab=1", 200, "Options Page A"),
        ("/error-status/not-found", 404, "Not Found"),
        ("/error-status/server-error", 500, "Server Error"),
        ("/error-status/forbidden", 403, "Forbidden"),
        ("/scope/blog/post-2", 200, "Post 2"),
        ("/scope/admin/settings", 200, "Settings"),
        ("/pagination/page/10", 200, "Page 10"),
        ("/query/?kind=beta", 200, "Query Beta"),
        ("/private/page", 200, "Private Page"),
        ("/jsonld/valid", 200, "JSON-LD Valid"),
        ("/analytics/", 200, "Analytics"),
        ("/scroll-jack/", 200, "Scroll Jack"),
    ],
)
def test_pages(server: tuple[str, str], path: str, status: int, title: str) -> None:
    response = get(server[0] + path)
    assert response.status_code == status
    assert f"<title>{title}</title>" in response.text
    assert response.headers["Content-Type"] == "text/html; charset=UTF-8"
    head = requests.head(server[0] + path, timeout=5)
    assert head.status_code == status and head.content == b""


def test_redirects(server: tuple[str, str]) -> None:
    base, external = server
    assert (get(f"{base}/redirect/start").status_code, get(f"{base}/redirect/start").headers["Location"]) == (
        301,
        "/redirect/middle",
    )
    assert get(f"{base}/redirect/middle").status_code == 302
    assert get(f"{base}/redirect/loop-b").headers["Location"] == "/redirect/loop-a"
    port = base.rsplit(":", 1)[1]
    assert get(f"{external}/clobber/away").headers["Location"] == f"http://localhost:{port}/clobber/target"
    assert requests.head(f"{base}/diverge/", timeout=5).headers["Location"] == "/diverge/head-dest"
    assert get(f"{base}/diverge/").headers["Location"] == "/diverge/get-dest"


def test_external_links_use_the_request_port(server: tuple[str, str]) -> None:
    base, external = server
    assert f'href="{external}/external-like"' in get(f"{base}/recursive/page-b").text
    assert f'href="{external}/exclude/external-a"' in get(f"{base}/exclude/").text


def test_meta_full(server: tuple[str, str]) -> None:
    text = get(f"{server[0]}/meta/full").text
    for needle in (
        'lang="ja"',
        'content="Test description"',
        'content="test,meta,nitpicker"',
        'content="index,follow"',
        'rel="canonical"',
        'property="og:image"',
        'content="summary_large_image"',
        "<base href=",
        'hreflang="x-default"',
        'name="viewport"',
        'name="theme-color"',
        'rel="icon"',
        'name="author"',
        'name="generator"',
    ):
        assert needle in text
    assert 'content="noindex,nofollow,noarchive"' in get(f"{server[0]}/meta/robots-noindex").text


def test_misc_content(server: tuple[str, str]) -> None:
    base = server[0]
    top = get(f"{base}/").text
    assert 'alt="test image" width="100" height="100"' in top and 'loading="lazy"' in top
    assert get(f"{base}/options/data.json").json() == {"test": True}
    assert get(f"{base}/pagination/page/11").status_code == 404
    assert get(f"{base}/pagination/page/0").status_code == 404
    assert get(f"{base}/nowhere").headers["Content-Type"].startswith("text/plain")
    robots = get(f"{base}/robots.txt").text
    assert "Disallow: /private/" in robots and "Crawl-delay: 2" in robots
    sjis = get(f"{base}/sjis/")
    assert sjis.headers["Content-Type"] == "text/html" and "日本語".encode("shift_jis") in sjis.content
    analytics = get(f"{base}/analytics/").text
    assert "GTM-ABC1234" in analytics and "G-XXXX1234" in analytics and "WordPress 6.4" in analytics
    assert "<script src=" not in analytics  # inline only: nothing is loaded from the network
    assert 'type="speculationrules"' in get(f"{base}/jsonld/speculation").text
    assert "location.href" in get(f"{base}/js-redirect/").text
    assert 'http-equiv="refresh"' in get(f"{base}/meta-refresh/").text
    assert 'href="/query/?PHPSESSID=abc123&amp;kind=alpha"' in get(f"{base}/query/").text
    assert get(f"{base}/lazy/img/2.svg").headers["Content-Type"] == "image/svg+xml"


def test_big_page_is_20_mb(server: tuple[str, str]) -> None:
    response = requests.get(f"{server[0]}/big/", timeout=10)
    assert len(response.content) == 20 * 1024 * 1024 == int(response.headers["Content-Length"])
    assert response.text.endswith("</body></html>\n")


def test_counts(server: tuple[str, str]) -> None:
    base = server[0]
    get(f"{base}/__counts/reset")
    get(f"{base}/reuse/pic.png")
    requests.head(f"{base}/reuse/pic.png", timeout=5)
    assert get(f"{base}/__counts").json() == {"/reuse/pic.png": 2}
    assert get(f"{base}/__counts?by=method").json() == {"GET /reuse/pic.png": 1, "HEAD /reuse/pic.png": 1}
    assert get(f"{base}/reuse/pic.png").content.startswith(b"\x89PNG")


def test_hanging_subresource_does_not_block_shutdown() -> None:
    srv, base = serve()
    received: list[bytes] = []

    def read() -> None:
        with requests.get(f"{base}/hang/forever.png", stream=True, timeout=10) as response:
            for chunk in response.iter_content(1):
                received.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_until(lambda: received, "the first byte of the hanging image", timeout=30)
    assert reader.is_alive()  # still loading
    started = time.monotonic()
    srv.shutdown()
    reader.join(3)
    assert not reader.is_alive()  # the stream ended once the server stopped
    assert time.monotonic() - started < 3


def test_login_site_gates_its_members_area_and_expires_sessions(server) -> None:
    from test_server.routes.login_site import PASSWORD, USER

    site, _ = server
    base = f"{site}/login-site/routes-n2"
    assert get(f"{base}/members/").headers["location"].endswith("/login-site/routes-n2/login")
    assert get(f"{base}/api/").status_code == 401
    wrong = requests.post(
        f"{base}/login", data={"username": USER, "password": "nope"}, allow_redirects=False, timeout=5
    )
    assert wrong.status_code == 200 and "Wrong password" in wrong.text and "sid" not in wrong.cookies
    ok = requests.post(
        f"{base}/login", data={"username": USER, "password": PASSWORD}, allow_redirects=False, timeout=5
    )
    assert ok.status_code == 303 and ok.headers["location"].endswith("/members/")
    sid = {"sid": ok.cookies["sid"]}
    alpha = get(f"{base}/members/alpha", cookies=sid).text
    assert "Member Alpha" in alpha and sid["sid"] not in alpha  # no page shows the token
    assert get(f"{base}/members/bravo", cookies=sid).status_code == 200
    assert get(f"{base}/members/charlie", cookies=sid).status_code == 302  # two views, then it expired


def test_login_site_app_shows_its_data_to_a_token_and_gated_origin_gates_robots_txt(server) -> None:
    from test_server.routes.login_site import gated_origin_app

    site, _ = server
    base = f"{site}/login-site/routes-app"
    token = requests.post(f"{base}/mint", timeout=5).json()["token"]
    assert get(f"{base}/app-data").status_code == 401
    data = get(f"{base}/app-data", headers={"Authorization": f"Bearer {token}"}).json()
    assert data[0] == ["/login-site/routes-app/app/alpha", "Alpha"]
    assert token not in get(f"{base}/app/").text  # the token lives in localStorage only

    gated = gated_origin_app().test_client()
    assert gated.get("/robots.txt").headers["location"] == "/login"
    minted = gated.post("/mint").json
    assert minted is not None
    gated.set_cookie("sid", minted["token"])
    assert "Sitemap: http://localhost/maps/moved.xml" in gated.get("/robots.txt").text
    assert gated.get("/maps/moved.xml").headers["location"] == "/maps/members.xml"
