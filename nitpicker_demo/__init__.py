"""The demo site `nitpicker pipeline` crawls without a URL: a small shop with one of every kind of finding."""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import threading
from collections.abc import Callable

from flask import Flask, Response, redirect
from werkzeug.serving import BaseWSGIServer, make_server

from nitpicker_demo.site import PREFIX, VERSIONS, bp

__all__ = ["PREFIX", "VERSIONS", "bp", "create_app", "serve", "serve_app"]


def create_app(version: int = 1) -> Flask:
    """The demo as a Flask app; ``version`` 2 is the same shop a little later (pages added, removed, fixed)."""
    if version not in VERSIONS:
        raise ValueError(f"the demo site has versions {', '.join(map(str, VERSIONS))}, not {version}")
    app = Flask(__name__)
    app.config["NITPICKER_DEMO_VERSION"] = version
    app.register_blueprint(bp)
    app.add_url_rule("/", "root", lambda: redirect(f"{PREFIX}/"))
    # a plain-text 404, so a missing page never looks like a page of the shop
    app.register_error_handler(
        404, lambda _e: Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")
    )
    return app


def serve_app(
    app: Flask,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    quiet: bool = True,
    before_shutdown: Callable[[], None] | None = None,
) -> tuple[BaseWSGIServer, str]:
    """Serve ``app`` in a daemon thread; returns the server and ``http://localhost:<port>``.

    ``server.shutdown()`` runs ``before_shutdown`` (say, to release requests that wait), stops the server
    and closes its socket.
    """
    if quiet:  # one access-log line per request would drown the run's own output
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # Werkzeug prints its own advice before it exits
            server = make_server(host, port, app, threaded=True)
    except SystemExit:  # Werkzeug's answer to a port in use: sys.exit(1)
        raise OSError(errno.EADDRINUSE, f"port {port} is in use") from None
    original_shutdown = server.shutdown

    def shutdown() -> None:
        if before_shutdown is not None:
            before_shutdown()
        original_shutdown()
        server.server_close()

    server.shutdown = shutdown  # type: ignore[method-assign]
    threading.Thread(target=server.serve_forever, name=f"serve-{app.name}", daemon=True).start()
    # "localhost" is the site; the same server as 127.0.0.1 plays another host (external links)
    name = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    return server, f"http://{name}:{server.server_port}"


def serve(
    host: str = "127.0.0.1", port: int = 0, version: int = 1, *, quiet: bool = True
) -> tuple[BaseWSGIServer, str]:
    """Serve the demo shop in a daemon thread; returns the server and ``http://localhost:<port>``."""
    return serve_app(create_app(version), host, port, quiet=quiet)
