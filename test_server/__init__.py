"""A Flask site with one blueprint per crawler behaviour, served on a free port for tests."""

from __future__ import annotations

import threading
from collections import Counter

from flask import Flask, Response, jsonify, request
from werkzeug.serving import BaseWSGIServer

from nitpicker_demo import serve_app
from test_server.routes import BLUEPRINTS

__all__ = ["create_app", "serve"]


def create_app() -> Flask:
    """Build the app; ``app.extensions["stop_event"]`` releases routes that hang on purpose."""
    app = Flask(__name__)
    app.extensions["stop_event"] = threading.Event()
    counts: Counter[str] = Counter()
    method_counts: Counter[str] = Counter()
    lock = threading.Lock()

    @app.before_request
    def _count() -> None:
        if request.path.startswith("/__counts"):
            return
        with lock:
            counts[request.path] += 1
            method_counts[f"{request.method} {request.path}"] += 1

    @app.get("/__counts")
    def _counts():  # type: ignore[no-untyped-def]
        # ?by=method splits the counts so tests can tell a HEAD preflight from a GET
        with lock:
            data = dict(method_counts if request.args.get("by") == "method" else counts)
        return jsonify(data)

    @app.route("/__counts/reset", methods=["GET", "POST"])
    def _reset():  # type: ignore[no-untyped-def]
        with lock:
            counts.clear()
            method_counts.clear()
        return jsonify({})

    @app.errorhandler(404)
    def _not_found(_error):  # type: ignore[no-untyped-def]
        # Plain text like the original site, so a 404 never looks like a page
        return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")

    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app


def serve(
    host: str = "127.0.0.1", port: int = 0, app: Flask | None = None, *, quiet: bool = True
) -> tuple[BaseWSGIServer, str]:
    """Start the site in a daemon thread; returns the server and ``http://localhost:<port>``.

    ``server.shutdown()`` also releases the routes that hang, so shutdown never waits on them.
    """
    app = app or create_app()
    stop_event: threading.Event = app.extensions.setdefault("stop_event", threading.Event())
    # "localhost" is the internal host by convention; 127.0.0.1 plays the external one
    return serve_app(app, host, port, quiet=quiet, before_shutdown=stop_event.set)
