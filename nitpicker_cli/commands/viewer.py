"""`nitpicker viewer ARCHIVE`: serve the viewer on loopback, on a free port near the preferred one."""

from __future__ import annotations

import errno
import logging
import signal
import socket
import threading
import webbrowser
from typing import Any

import click

from nitpicker_cli.app import get_app
from nitpicker_core import UsageError, hookimpl

__all__ = ["bind_near", "server_url"]

PORT_ATTEMPTS = 50


def bind_near(host: str, port: int, app: Any) -> Any:
    """A threaded WSGI server listening on ``host`` at ``port`` or the next free port after it.

    Binding is the probe: each port is tried on the very host that will serve, and the bound socket is
    handed to the server, so nothing can take the port between the probe and its use.
    """
    from werkzeug.serving import make_server

    try:
        family, kind, proto, _, _ = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror}") from None
    last: OSError | None = None
    for candidate in range(port, min(port + PORT_ATTEMPTS, 65536)):
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
            )  # TIME_WAIT only; a listener still blocks
            sock.bind((host, candidate))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES) or port == 0:
                raise UsageError(f"cannot listen on {host}: {exc.strerror}") from None
            last = exc
            continue
        try:
            return make_server(host, candidate, app, threaded=True, fd=sock.fileno())
        finally:
            sock.close()  # the server holds its own duplicate of the descriptor
    detail = f" ({last.strerror})" if last else ""
    raise UsageError(f"no free port on {host} between {port} and {port + PORT_ATTEMPTS - 1}{detail}")


def server_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("viewer")
    @click.argument("archive", type=click.Path(path_type=str))
    @click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="Address to bind; anything but loopback exposes the archive to the network.",
    )
    @click.option(
        "--port",
        default=8765,
        show_default=True,
        type=click.IntRange(0, 65535),
        help="Preferred port; the next free one is used when it is taken.",
    )
    @click.option("--no-open", is_flag=True, help="Do not open a browser.")
    def viewer(archive: str, host: str, port: int, no_open: bool) -> None:
        """Browse ARCHIVE (a .nitpicker file or a live crawl's working directory) in a local web viewer.

        Ctrl-C stops the server and closes the archive.
        """
        # imported here, like Flask itself: every other command starts faster without them
        from nitpicker_viewer.app import create_app
        from nitpicker_viewer.guard import is_loopback

        app_state = get_app()
        app_state.config()
        if not is_loopback(host):
            app_state.warn(f"binding {host}: anyone who can reach this address can read the archive")
        if not app_state.verbose:
            logging.getLogger("werkzeug").setLevel(
                logging.WARNING
            )  # one line per request only with --verbose
        flask_app = create_app(archive, app_state.pm, host=host)
        close = flask_app.config["NITPICKER_CLOSE"]
        try:
            server = bind_near(host, port, flask_app)
        except BaseException:
            close()
            raise
        url = server_url(host, server.port)
        click.echo(f"nitpicker viewer: {url} (Ctrl-C stops)", err=True)
        click.echo(url)
        previous = signal.signal(signal.SIGTERM, _interrupt)
        if not no_open:
            threading.Timer(0.5, webbrowser.open, args=(url,)).start()
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            server.server_close()
            close()
            app_state.info("nitpicker viewer: stopped")


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
