"""/hostile-status/: answers a browser will not render (401 challenge, 204, 304, attachment), long chains, bad ports."""

from __future__ import annotations

from flask import Blueprint, Response, redirect

from test_server.routes._html import links, page

bp = Blueprint("hostile_status", __name__, url_prefix="/hostile-status")

LONG_CHAIN = 30  # hops; the preflight gives up after 20 and Chromium after 20 as well
BAD_PORTS = ("99999", "65536", "-1", "abc")


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Hostile Status Top",
        links(
            ("challenge", "Challenge"),
            ("forbidden", "Forbidden"),
            ("too-many", "Too many"),
            ("no-content", "No content"),
            ("not-modified", "Not modified"),
            ("attachment", "Attachment"),
            ("normal", "Normal"),
        ),
    )


@bp.get("/challenge")
def challenge():  # type: ignore[no-untyped-def]
    # A Basic-auth challenge: Chromium without credentials gives up with ERR_INVALID_AUTH_CREDENTIALS
    html = page("Login Required", "<p>Sign in.</p>", status=401)
    html.headers["WWW-Authenticate"] = 'Basic realm="hostile"'
    return html


@bp.get("/forbidden")
def forbidden():  # type: ignore[no-untyped-def]
    return page("Forbidden Here", "<p>No bots.</p>", status=403)


@bp.get("/too-many")
def too_many():  # type: ignore[no-untyped-def]
    # No Retry-After on purpose: the preflight must not wait, the answer itself is the fact
    return page("Slow Down", "<p>Too many requests.</p>", status=429)


@bp.get("/no-content")
def no_content():  # type: ignore[no-untyped-def]
    return Response(status=204)


@bp.get("/not-modified")
def not_modified():  # type: ignore[no-untyped-def]
    # 304 to an unconditional request: broken, but servers do it, and the status is what must be recorded
    return Response(status=304, headers={"ETag": '"hostile"'})


@bp.get("/attachment")
def attachment():  # type: ignore[no-untyped-def]
    html = page("Sent As A File", "<p>Save me.</p>")
    html.headers["Content-Disposition"] = 'attachment; filename="report.html"'
    return html


@bp.get("/normal")
def normal():  # type: ignore[no-untyped-def]
    return page("Hostile Normal")


@bp.get("/hops/")
def hops():  # type: ignore[no-untyped-def]
    return page(
        "Hops Top",
        links(
            (f"/hostile-status/hops/chain/{LONG_CHAIN}", "Thirty hops"),
            ("/hostile-status/hops/loop-a", "Loop"),
            ("/hostile-status/hops/chain/3", "Three hops"),
        ),
    )


@bp.get("/hops/chain/<int:left>")
def chain(left: int):  # type: ignore[no-untyped-def]
    # /hops/chain/30 → /hops/chain/29 → … → /hops/chain/0: a long chain that never repeats a URL (no loop)
    if left <= 0:
        return page("End Of The Chain")
    return redirect(f"/hostile-status/hops/chain/{left - 1}", code=302)


@bp.get("/hops/loop-a")
def loop_a():  # type: ignore[no-untyped-def]
    return redirect("/hostile-status/hops/loop-b", code=302)


@bp.get("/hops/loop-b")
def loop_b():  # type: ignore[no-untyped-def]
    return redirect("/hostile-status/hops/loop-a", code=302)


@bp.get("/bad-ports/")
def bad_ports():  # type: ignore[no-untyped-def]
    # Ports no URL may carry; a crawler that drops them would contact localhost:80 instead
    hrefs = [(f"http://localhost:{port}/x", f"Port {port}") for port in BAD_PORTS]
    return page("Bad Ports", links(*hrefs, ("/hostile-status/normal", "Normal")))


class _RawLocation(Response):
    """A redirect whose Location goes out as written (werkzeug parses it, and refuses a bad port)."""

    def get_wsgi_headers(self, environ):  # type: ignore[no-untyped-def]
        raw = self.headers.pop("Location")
        headers = super().get_wsgi_headers(environ)
        headers["Location"] = raw
        return headers


@bp.get("/bad-ports/redirect")
def bad_port_redirect():  # type: ignore[no-untyped-def]
    return _RawLocation("", status=302, headers={"Location": f"http://localhost:{BAD_PORTS[0]}/x"})
