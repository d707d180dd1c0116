"""/login-site/<run>/: a members area behind a form login, for logged-in crawls (docs/guide/login.md).

``/login-site/<run>/login`` shows a form (``username``, ``password``, a ``#sign-in`` button) and takes its POST:
the right password sets the ``sid`` session cookie (path ``/login-site/<run>/``) and redirects to the members
area; a wrong one shows the form again with "Wrong password". Every view of a members page (GET or HEAD)
spends one of the session's views: a run named ``…-n<N>`` gives N views, then the session is gone and the
page redirects to the login, as an expired session does. ``/login-site/<run>/logout`` ends the session.
``POST /login-site/<run>/mint`` hands a test a session of unlimited views (to write a cookies file with).
``/login-site/<run>/api/`` and its pages answer 401 without a session (an expired session shows as a 401 there).
No page shows the session token or the password.
"""

from __future__ import annotations

import re
import secrets
import threading

from flask import Blueprint, Response, redirect, request
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
