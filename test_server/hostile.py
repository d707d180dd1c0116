"""A raw TCP server on 127.0.0.1 that sends its response headers one byte at a time, forever.

Flask cannot stall in the middle of a header block, so this one speaks bytes on a socket. Every
request gets ``HTTP/1.1 200 OK`` and then a header line that never ends, one byte per ``interval``:
each read a client makes succeeds, so only a deadline on the whole exchange ends it.
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["TrickleServer"]

_PREFIX = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Trickle: "


class TrickleServer:
    """``with TrickleServer(interval=0.2) as server: fetch(server.url + "/page")``.

    ``connections`` counts accepted connections and ``open`` the ones still open, so a test can wait
    until a client connected or until it hung up.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.connections = 0
        self.open = 0
        self._changed = threading.Condition()
        self._stop = threading.Event()
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner._trickle(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self._server.daemon_threads = True
        self._server.allow_reuse_address = True
        self._server.server_bind()
        self._server.server_activate()
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def _count(self, opened: int) -> None:
        with self._changed:
            self.connections += max(0, opened)
            self.open += opened
            self._changed.notify_all()

    def _trickle(self, sock: socket.socket) -> None:
        self._count(1)
        try:
            sent = 0
            while not self._stop.is_set():
                byte = _PREFIX[sent : sent + 1] or b"a"
                sock.sendall(byte)
                sent += 1
                # Waiting on readability tells at once when the client hung up (recv gives b"")
                readable, _, _ = select.select([sock], [], [], self.interval)
                if readable and not sock.recv(65536):
                    return
        except OSError:
            return  # the client cut the connection
        finally:
            self._count(-1)

    def wait_for(self, state: str | Callable[[TrickleServer], bool], timeout: float = 30.0) -> bool:
        """Wait until ``"connected"`` (some connection is open), ``"closed"`` (none is) or ``state(self)``."""
        checks: dict[str, Callable[[TrickleServer], bool]] = {
            "connected": lambda s: s.open > 0,
            "closed": lambda s: s.open == 0,
        }
        check = checks[state] if isinstance(state, str) else state
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if check(self):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)

    def __enter__(self) -> TrickleServer:
        threading.Thread(target=self._server.serve_forever, name="trickle-server", daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
