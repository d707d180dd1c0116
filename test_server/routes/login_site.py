"""/login-site/<run>/: a members area behind a form login, for logged-in crawls (docs/guide/login.md).

``/login-site/<run>/login`` shows a form (``username``, ``password``, a ``#sign-in`` button) and takes its POST:
the right password sets the ``sid`` session cookie (path ``/login-site/<run>/``) and redirects to the members
area; a wrong one shows the form again with "Wrong password". Every view of a members page (GET or HEAD)
spends one of the session's views: a run named ``…-n<N>`` gives N views, then the session is gone and the
page redirects to the login, as an expired session does. ``/login-site/<run>/logout`` ends the session.
``POST /login-site/<run>/mint`` hands a test a session of unlimited views (to write a cookies file with).
``/login-site/<run>/api/`` and its pages answer 401 without a session (an expired session shows as a 401 there).
``/login-site/<run>/app/`` is a single-page app whose login is a token in ``localStorage`` (a storage state's
``origins``): its script sends the token to ``…/app-data`` and writes the links that answer lists. With
``?frame-port=N`` it also frames ``…/app-frame`` of ``localhost:N`` (another origin: a second server), whose
script asks ``…/frame-seen``, and ``…/frame-data`` only when a token is in *its* localStorage. No page shows the session token or the password.

robots.txt and sitemaps live at an origin's root, where the shared site serves its own: ``gated_origin_app()``
is a site of its own behind the same kind of cookie gate, for them (see its docstring).
"""

from __future__ import annotations

import re
import secrets
import threading

from flask import Blueprint, Flask, Response, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from test_server.routes._html import links, page

bp = Blueprint("login_site", __name__, url_prefix="/login-site")
USER = "alice"
PASSWORD = "correct-horse-7Qx"  # the tests pass it through the environment, and grep the crawl's files for it
MEMBER_PAGES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
_sessions: dict[str, dict[str, object]] = {}  # token → {"run": …, "left": views left or None}
_lock = threading.Lock()


def _views(run: str) -> int | None:
    found = re.search(r"-n(\d+)$", run)
    return int(found.group(1)) if found else None


def _form(run: str, message: str = "") -> Response:
    notice = f'<p class="error">{message}</p>' if message else ""
    return page(
        "Log In",
        f'{notice}<form method="post" action="/login-site/{run}/login">'
        '<input name="username"><input name="password" type="password">'
        '<button id="sign-in" type="submit">Sign in</button></form>',
    )


@bp.get("/<run>/login")
def login_form(run: str):  # type: ignore[no-untyped-def]
    return _form(run)


@bp.post("/<run>/login")
def login(run: str):  # type: ignore[no-untyped-def]
    if request.form.get("username") != USER or request.form.get("password") != PASSWORD:
        return _form(run, "Wrong password")
    return _start(run, _views(run), redirect(f"/login-site/{run}/members/", code=303))


@bp.post("/<run>/mint")
def mint(run: str):  # type: ignore[no-untyped-def]
    token = _new(run, None)
    return {"token": token, "path": f"/login-site/{run}/"}


def _new(run: str, views: int | None) -> str:
    token = secrets.token_hex(16)
    with _lock:
        _sessions[token] = {"run": run, "left": views}
    return token


def _start(run: str, views: int | None, response: BaseResponse) -> BaseResponse:
    response.set_cookie("sid", _new(run, views), path=f"/login-site/{run}/", httponly=True)
    return response


def _spend(run: str) -> bool:
    """True when the request carries a live session of this run; spends one of its views."""
    token = request.cookies.get("sid", "")
    with _lock:
        session = _sessions.get(token)
        if session is None or session["run"] != run:
            return False
        left = session["left"]
        if left is not None:
            if int(left) <= 0:  # type: ignore[call-overload]
                del _sessions[token]
                return False
            session["left"] = int(left) - 1  # type: ignore[call-overload]
    return True


@bp.get("/<run>/members/")
def members(run: str):  # type: ignore[no-untyped-def]
    if not _spend(run):
        return redirect(f"/login-site/{run}/login", code=302)
    return page(
        "Members",
        links(
            *((f"/login-site/{run}/members/{name}", name.title()) for name in MEMBER_PAGES),
            (f"/login-site/{run}/logout", "Log out"),
        ),
    )


@bp.get("/<run>/members/<name>")
def member_page(run: str, name: str):  # type: ignore[no-untyped-def]
    if name not in MEMBER_PAGES:
        return page("Not Found", status=404)
    if not _spend(run):
        return redirect(f"/login-site/{run}/login", code=302)
    return page(f"Member {name.title()}", links((f"/login-site/{run}/members/", "Members")))


@bp.get("/<run>/api/")
@bp.get("/<run>/api/<name>")
def api(run: str, name: str = ""):  # type: ignore[no-untyped-def]
    if name and name not in MEMBER_PAGES:
        return page("Not Found", status=404)
    if not _spend(run):  # no redirect here: a session that is gone shows as a 401
        return Response("log in first", 401, content_type="text/plain")
    title = f"Api {name.title()}" if name else "Api"
    return page(title, links(*((f"/login-site/{run}/api/{other}", other.title()) for other in MEMBER_PAGES)))


@bp.get("/<run>/logout")
def logout(run: str):  # type: ignore[no-untyped-def]
    with _lock:
        _sessions.pop(request.cookies.get("sid", ""), None)
    return redirect(f"/login-site/{run}/login", code=302)


APP_PAGES = ("alpha", "bravo", "charlie")  # what the app lists once its token is accepted


def _token_run(token: str) -> str | None:
    with _lock:
        session = _sessions.get(token)
    return str(session["run"]) if session is not None else None


# The app reads the token and asks for its data synchronously, so the links are in the document before its
# load event, whatever the crawler waits for; the token never appears in a page or a URL.
_APP_SCRIPT = """
<script>
const token = localStorage.getItem("token");
if (token) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", "%(data)s", false);
  xhr.setRequestHeader("Authorization", "Bearer " + token);
  xhr.send();
  if (xhr.status === 200) {
    const list = document.createElement("ul");
    for (const [href, text] of JSON.parse(xhr.responseText)) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      list.appendChild(document.createElement("li")).appendChild(a);
    }
    document.body.appendChild(list);
  }
} else {
  document.body.appendChild(document.createTextNode("Log in first"));
}
</script>
"""


@bp.get("/<run>/app/")
def app_page(run: str):  # type: ignore[no-untyped-def]
    # ?frame-port=N frames …/app-frame of localhost:N: another origin, but the same site (a site has no port),
    # so its localStorage is its own, not the partitioned, often refused storage of a third party's frame
    port = request.args.get("frame-port", "")
    src = f"http://localhost:{int(port)}/login-site/{run}/app-frame" if port.isdigit() else ""
    frame = f'<iframe src="{src}" title="another site"></iframe>' if src else ""
    return page("App", frame + _APP_SCRIPT % {"data": f"/login-site/{run}/app-data"})


@bp.get("/<run>/app-data")
def app_data(run: str):  # type: ignore[no-untyped-def]
    token = request.headers.get("Authorization", "").removeprefix("Bearer ")
    if _token_run(token) != run:
        return Response("log in first", 401, content_type="text/plain")
    return [[f"/login-site/{run}/app/{name}", name.title()] for name in APP_PAGES]


@bp.get("/<run>/app/<name>")
def app_item(run: str, name: str):  # type: ignore[no-untyped-def]
    if name not in APP_PAGES:
        return page("Not Found", status=404)
    return page(f"App {name.title()}", links((f"/login-site/{run}/app/", "App")))


@bp.get("/<run>/app-frame")
def app_frame(run: str):  # type: ignore[no-untyped-def]
    # …/frame-seen says the frame's script ran (in a browser); a token in this origin's localStorage would
    # load …/frame-data too. Both in the frame's load, so before the page's.
    load = "document.write('<script src=\"/login-site/%s/%s\"><\\/script>');"
    script = (
        f"<script>{load % (run, 'frame-seen')}\n"
        f'if (localStorage.getItem("token")) {load % (run, "frame-data")}</script>'
    )
    return page("Another Site", script)


@bp.get("/<run>/frame-seen")
@bp.get("/<run>/frame-data")
def frame_script(run: str):  # type: ignore[no-untyped-def]
    return Response("/* counted by the server */", content_type="text/javascript")


def gated_origin_app() -> Flask:
    """A site whose every page, its robots.txt and its sitemaps included, is behind a cookie gate.

    ``POST /mint`` hands a test a session token (the ``sid`` cookie, path ``/``). Logged in, ``/robots.txt``
    names ``/maps/moved.xml`` in a ``Sitemap:`` line, which redirects (301, same host) to ``/maps/members.xml``,
    which lists ``/members/from-robots``, and ``/sitemap.xml`` lists ``/members/from-default``; no page links
    to either. ``/away`` redirects to the other site. Without the session every URL
    redirects to ``/login`` (a page, as such a site answers), so robots.txt and the sitemaps say nothing.
    ``/members/`` links to ``app.config["OUTSIDE"]``: another site, which must never get the cookie.
    ``app.extensions["requests"]`` holds ``(method, path, whether a sid cookie came)`` of every request.
    """
    app = Flask("gated-origin")
    app.extensions["stop_event"] = threading.Event()
    seen: list[tuple[str, str, bool]] = []
    tokens: set[str] = set()
    app.extensions["requests"] = seen
    app.config["OUTSIDE"] = ""

    def logged_in() -> bool:
        return request.cookies.get("sid", "") in tokens

    @app.before_request
    def _gate():  # type: ignore[no-untyped-def]
        seen.append((request.method, request.path, "sid" in request.cookies))
        if request.path not in ("/login", "/mint") and not logged_in():
            return redirect("/login", code=302)
        return None

    @app.post("/mint")
    def mint():  # type: ignore[no-untyped-def]
        token = secrets.token_hex(16)
        tokens.add(token)
        return {"token": token, "path": "/"}

    @app.get("/login")
    def login():  # type: ignore[no-untyped-def]
        return page("Log In", '<form method="post"><input name="password" type="password"></form>')

    @app.get("/robots.txt")
    def robots_txt():  # type: ignore[no-untyped-def]
        text = f"User-agent: *\nDisallow: /private/\nSitemap: {request.host_url}maps/moved.xml\n"
        return Response(text, content_type="text/plain")

    def urlset(*paths: str) -> Response:
        entries = "".join(f"<url><loc>{request.host_url.rstrip('/')}{path}</loc></url>" for path in paths)
        xml = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        return Response(xml, content_type="application/xml")

    @app.get("/maps/moved.xml")
    def moved():  # type: ignore[no-untyped-def]
        return redirect("/maps/members.xml", code=301)

    @app.get("/away")
    def away():  # type: ignore[no-untyped-def]
        return redirect(f"{app.config['OUTSIDE']}/members/", code=302)

    @app.get("/maps/members.xml")
    def from_robots():  # type: ignore[no-untyped-def]
        return urlset("/members/from-robots")

    @app.get("/sitemap.xml")
    def default_sitemap():  # type: ignore[no-untyped-def]
        return urlset("/members/from-default")

    @app.get("/members/")
    def members():  # type: ignore[no-untyped-def]
        outside = str(app.config["OUTSIDE"])
        return page("Members", links(*([(f"{outside}/members/", "Another site")] if outside else [])))

    @app.get("/members/<name>")
    def member(name: str):  # type: ignore[no-untyped-def]
        return page(f"Member {name}", links(("/members/", "Members")))

    return app
