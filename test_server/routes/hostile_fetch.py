"""/hostile/: what nitpicker's own fetches (preflight, robots.txt) must survive: 30 hops, bad robots.txt.

``bp`` holds the 30-hop chain on the shared site. A robots.txt lives at an origin's
root, where the site already serves a good one, so the hostile ones come from their own small app:
``robots_app()``, whose ``/robots.txt`` does what ``app.config["ROBOTS"]`` says (``endless``,
``slow``, ``big``, ``rules`` or a status such as ``503``); a test may change it between fetches.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Flask, Response, redirect

from test_server.routes._html import links, page

bp = Blueprint("hostile_fetch", __name__, url_prefix="/hostile")

HOPS = 30  # distinct URLs in a row: more than the preflight's 20 redirects, and no loop at all
ROBOTS_RULES = "User-agent: *\nDisallow: /private/\n"
ENDLESS_LIMIT = 1024**3  # "endless": a GiB of comment lines, far more than any client should read


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Hostile Fetch Top", links(("/hostile/hops/0", "Thirty hops")))


@bp.get("/hops/<int:number>")
def hops(number: int):  # type: ignore[no-untyped-def]
    if number >= HOPS:
        return page("After Thirty Hops")
    return redirect(f"/hostile/hops/{number + 1}", code=302)


def robots_app() -> Flask:
    """An app whose only page is a robots.txt misbehaving as ``app.config["ROBOTS"]`` says.

    ``app.extensions["robots_hits"]`` counts the fetches of it, so a test sees when it was asked again.
    """
    app = Flask("hostile-robots")
    app.config["ROBOTS"] = "endless"
    app.config["ENDLESS_LIMIT"] = ENDLESS_LIMIT
    app.extensions["robots_hits"] = 0
    app.extensions["stop_event"] = threading.Event()  # serve() sets it on shutdown, releasing "slow"

    @app.get("/robots.txt")
    def robots_txt():  # type: ignore[no-untyped-def]
        app.extensions["robots_hits"] += 1
        mode = str(app.config["ROBOTS"])
        stop: threading.Event = app.extensions["stop_event"]  # the generators run outside the app context
        if mode.isdigit():
            return Response(f"{mode} from robots.txt\n", status=int(mode), content_type="text/plain")
        if mode == "slow":
            return Response(_slow(stop), content_type="text/plain")
        if mode == "rules":
            return Response(ROBOTS_RULES, content_type="text/plain")
        if mode == "big":  # a rule after 600 KiB of comments, beyond what RFC 9309 asks a crawler to read
            padding = ("# " + "x" * 1021 + "\n") * 600
            return Response(f"{ROBOTS_RULES}{padding}Disallow: /late/\n", content_type="text/plain")
        return Response(_endless(int(app.config["ENDLESS_LIMIT"]), stop), content_type="text/plain")

    @app.get("/<path:path>")
    def anything(path: str):  # type: ignore[no-untyped-def]
        return page(f"Page {path}")

    return app


def _endless(limit: int, stop: threading.Event):  # type: ignore[no-untyped-def]
    """Real rules first, then comment lines until ``limit`` bytes or the server stops."""
    yield ROBOTS_RULES.encode()
    line = b"# " + b"x" * 1021 + b"\n"
    sent = len(ROBOTS_RULES)
    while sent < limit and not stop.is_set():
        yield line * 64
        sent += len(line) * 64


def _slow(stop: threading.Event):  # type: ignore[no-untyped-def]
    """The rules, then one comment line every half second until the server stops."""
    yield ROBOTS_RULES.encode()
    while not stop.wait(0.5):
        yield b"# still here\n"
