"""Flask app of the dashboard: `/` (the page) and `/api/snapshot` (everything the page shows, as JSON)."""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, render_template

from nitpicker_core.pipeline.state import STALE_AFTER, STALL_AFTER, Monitor
from nitpicker_viewer import guard

# the page is one script and one stylesheet of its own that poll one JSON endpoint: nothing else is allowed
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def create_app(
    directories: list[Path],
    stale_after: float = STALE_AFTER,
    poll_ms: int = 1500,
    stall_after: float = STALL_AFTER,
    host: str = "127.0.0.1",
) -> Flask:
    """One Monitor for the app's lifetime, so journals are replayed incrementally between polls.

    ``host`` is the address the server binds: besides the loopback names, the only Host it answers.
    """
    app = Flask(__name__)
    guard.install(app, host, CSP)
    app.json.sort_keys = True  # type: ignore[attr-defined]
    monitor = Monitor(directories, stale_after, stall_after)
    lock = threading.Lock()
    app.extensions["nitpicker_monitor"] = monitor

    @app.get("/")
    def page() -> str:
        return render_template("dashboard.html", poll_ms=poll_ms)

    @app.get("/api/snapshot")
    def snapshot() -> Any:
        with lock:  # the tails keep file offsets: one poll at a time
            data = monitor.snapshot()
        response = jsonify(data)
        response.headers["Cache-Control"] = "no-store"
        return response

    return app


def free_port(host: str, preferred: int, tries: int = 20) -> int:
    """The preferred port or one of the next few, probed on the host the server will bind; else any."""
    for port in [*range(preferred, preferred + tries), 0] if preferred else [0]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError as exc:
                if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                    continue
                raise
            return int(sock.getsockname()[1])
    raise OSError("no free port")


def serve_in_thread(app: Flask, host: str, port: int) -> Any:
    """Start a threaded werkzeug server in a daemon thread; ``.shutdown()`` stops it."""
    import logging

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server(host, port, app, threaded=True)
    threading.Thread(target=server.serve_forever, name="nitpicker-dashboard", daemon=True).start()
    return server
