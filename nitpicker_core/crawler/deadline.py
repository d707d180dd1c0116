"""A total wall-time deadline and an abort switch for the HTTP exchanges nitpicker makes outside the browser.

requests only has per-read timeouts: a server sending a byte every few seconds keeps one request alive
for as long as it likes. Here every exchange runs in a daemon thread while the caller waits at most the
deadline; when the deadline passes (or ``abort()`` is called) the caller shuts down the sockets that
exchange opened, so the stalled read ends too, and returns at once. Daemon threads never hold up
interpreter exit, and the caller's wait ends on time even while DNS or a TLS handshake hangs.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["DeadlineAdapter", "DeadlineExceeded", "Exchange", "FetchAborted", "Guard"]

T = TypeVar("T")
_current = threading.local()  # the Exchange the running daemon thread works for


class FetchAborted(RuntimeError):
    """The fetcher was aborted (the crawl is stopping): no answer, and none will be asked for."""


class DeadlineExceeded(requests.exceptions.Timeout):
    """No complete answer within the total deadline (connect + headers + body)."""


def _cut(sock: socket.socket) -> None:
    # socket.socket.shutdown on the fd itself: SSLSocket.shutdown would drop its SSL object under the
    # thread reading it. A socket already closed or detached raises, which is fine: it is cut.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class Exchange(Generic[T]):
    """One exchange run by a daemon thread; knows its sockets so the caller can cut them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # re-entrant: abort() may run in a signal handler on this thread
        self._sockets: list[socket.socket] = []
        self.wake = threading.Event()
        self.reason: str | None = None  # "deadline" or "aborted" once cut
        self.finished = False
        self.result: T | None = None
        self.error: BaseException | None = None
        self.fallback: Callable[[], T] | None = None  # what arrived so far, kept when the deadline cuts

    def record(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.reason is None:
                return
        _cut(sock)  # opened after the cut (a slow connect): it has no business staying open

    def cut(self, reason: str) -> bool:
        """Shut down every socket of this exchange; False when it had finished already."""
        with self._lock:
            if self.finished:
                return False
            self.reason = self.reason or reason
            sockets = list(self._sockets)
        for sock in sockets:
            _cut(sock)
        self.wake.set()
        return True

    @property
    def is_cut(self) -> bool:
        return self.reason is not None

    def run(self, work: Callable[[Exchange[T]], T]) -> None:
        _current.exchange = self
        try:
            self.result = work(self)
        except BaseException as exc:  # noqa: BLE001 - handed over to the waiting caller
            self.error = exc
        finally:
            _current.exchange = None
            with self._lock:
                self.finished = True
            self.wake.set()


class Guard:
    """Runs exchanges under a deadline; ``abort()`` cuts those in flight and refuses new ones."""

    def __init__(self) -> None:
        self._aborted = threading.Event()
        self._lock = threading.RLock()  # re-entrant: abort() may run in a signal handler on this thread
        self._live: set[Exchange[Any]] = set()

    @property
    def aborted(self) -> bool:
        return self._aborted.is_set()

    def check(self) -> None:
        if self._aborted.is_set():
            raise FetchAborted("aborted: the crawl is stopping, no more requests are made")

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake up (with ``FetchAborted``) the moment the guard is aborted."""
        if seconds > 0:
            self._aborted.wait(seconds)
        self.check()

    def abort(self) -> None:
        self._aborted.set()
        with self._lock:
            live = list(self._live)
        for exchange in live:
            exchange.cut("aborted")

    def run(self, work: Callable[[Exchange[T]], T], seconds: float, *, deadline: float | None = None) -> T:
        """``work(exchange)`` in a daemon thread, for ``seconds`` of wall time at most.

        Raises ``DeadlineExceeded`` (unless ``work`` left a ``fallback``), ``FetchAborted``, or what
        ``work`` raised. ``deadline`` is the whole budget ``seconds`` is left of, for the message.
        """
        self.check()
        overdue = DeadlineExceeded(
            f"no complete answer within the {deadline or seconds:g} s deadline (connect + headers + body)"
        )
        if seconds <= 0:  # the attempt's time went on earlier hops: no new exchange
            raise overdue
        exchange: Exchange[T] = Exchange()
        with self._lock:
            self._live.add(exchange)
        try:
            if self._aborted.is_set():  # abort() ran between check() and the registration
                exchange.cut("aborted")
            else:
                threading.Thread(
                    target=exchange.run, args=(work,), name="nitpicker-fetch", daemon=True
                ).start()
                if not exchange.wake.wait(seconds):
                    exchange.cut("deadline")
        finally:
            with self._lock:
                self._live.discard(exchange)
        if exchange.reason == "aborted":
            self.check()
            raise FetchAborted("aborted: the crawl is stopping")
        if exchange.reason == "deadline":
            if exchange.fallback is not None:
                return exchange.fallback()
            # Raised here, outside any except block, so the error carries no stray context to classify
            raise overdue
        if exchange.error is not None:
            raise exchange.error
        return exchange.result  # type: ignore[return-value]


def _record(sock: socket.socket | None) -> None:
    exchange = getattr(_current, "exchange", None)
    if exchange is not None:
        exchange.record(sock)


class _Recording:
    """Reports each socket a connection uses to the exchange of the thread using it."""

    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()  # type: ignore[misc]
        _record(sock)  # the plain TCP socket, before a TLS handshake that could trickle as well
        return sock

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        _record(self.sock)  # after TLS: the wrapped socket owns the file descriptor now

    def request(self, *args: Any, **kwargs: Any) -> None:
        _record(self.sock)  # a kept-alive connection reused by another exchange
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Recording, HTTPConnection):
    pass


class _HTTPSConnection(_Recording, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class DeadlineAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections tell the running ``Exchange`` which sockets to cut."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)  # a copy: urllib3 shares the default

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = dict(_POOLS)
        return manager

    @classmethod
    def mount_on(cls, session: requests.Session, pool_size: int = 10) -> None:
        adapter = cls(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
