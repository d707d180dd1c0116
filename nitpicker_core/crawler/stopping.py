"""Stop requests for a crawl: the first SIGINT/SIGTERM/SIGHUP stops it cleanly, the second ends the process now."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["PageAbandoned", "StopSignals", "given_secrets", "resume_hint"]

# SIGHUP (the terminal closed, an ssh session dropped) stops like SIGTERM, unless it is ignored (nohup)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_INTERRUPTED = 130


class PageAbandoned(Exception):  # noqa: N818 - an outcome, not a failure
    """Raised instead of recording a failure for a page that was in flight when the crawl stopped.

    The page goes back to pending, so ``--resume`` crawls it; it is never stored as an error.
    """


def resume_hint(
    output: Any, *, needs_secrets: bool = False, executor: str | None = None, command: str = "crawl"
) -> str:
    """The exact command that finishes an interrupted crawl of ``output`` (on ``executor`` when one was given).

    ``command``: ``pipeline``, whose ``--resume`` takes the run's journal as ``output``.
    """
    import shlex

    hint = f"nitpicker {command} --resume {shlex.quote(str(output))}"
    if executor:
        hint += f" --executor {shlex.quote(executor)}"
    if needs_secrets:  # credentials and --header values are never stored, so they must be given again
        hint += (
            " (give the root URL with its credentials, every --header, --cookies and --storage-state again)"
        )
    return hint


def given_secrets(options: Any, *, login_kept: bool = False) -> bool:
    """Whether the crawl of ``options`` had what is never stored: root credentials, --header values, a login.

    ``login_kept``: the command keeps where its login comes from (a pipeline's journal), so it need not be
    given again.
    """
    return (
        bool(options.headers)
        or (options.login is not None and not login_kept)
        or any("@" in root.split("://", 1)[-1].split("/", 1)[0] for root in options.roots)
    )


class StopSignals:
    """Owns SIGINT, SIGTERM and SIGHUP from the moment it is installed until it is removed.

    Signals are handled with plain ``signal.signal`` handlers, not the event loop's, so they are seen
    while no loop runs (plugin setup, the archive write at the end) as well as during the crawl. The
    first signal calls every ``on_first`` callback (inside a running loop, through
    ``call_soon_threadsafe``); the second runs ``on_second`` callbacks (last chance to kill child
    processes, say what to do next) and ends the process at once with exit code 130, leaving the
    working directory as it is: SQLite's WAL keeps what was written, and ``--resume`` goes on from it.
    """

    def __init__(self, *, exit_now: Callable[[int], Any] = os._exit) -> None:
        self.count = 0
        self._exit_now = exit_now
        self._first: list[Callable[[], Any]] = []
        self._second: list[Callable[[], Any]] = []
        self._loop: Any = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.count > 0

    def install(self) -> StopSignals:
        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may own signals; a crawl in a thread is stopped by its owner
        for sig in SIGNALS:
            previous = signal.getsignal(sig)
            if sig == signal.SIGHUP and previous == signal.SIG_IGN:
                continue  # started under nohup: a hangup must not stop the crawl
            self._previous[sig] = previous
            signal.signal(sig, self._handle)
        return self

    def remove(self) -> None:
        for sig, previous in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def __enter__(self) -> StopSignals:
        return self.install()

    def __exit__(self, *_exc: object) -> None:
        self.remove()

    def attach_loop(self, loop: Any) -> None:
        """First-signal callbacks run on ``loop`` from now on (None: called directly)."""
        self._loop = loop

    def on_first(self, callback: Callable[[], Any]) -> None:
        self._first.append(callback)
        if self.count:  # the signal came before this part of the crawl existed: it still applies
            self._dispatch(callback)

    def on_second(self, callback: Callable[[], Any]) -> None:
        self._second.append(callback)

    def request(self) -> None:
        """Behave as if a signal arrived (the handler's work, callable from code and tests)."""
        self.count += 1  # signals arrive on the main thread only, so no lock (a handler must never block)
        if self.count == 1:
            for callback in list(self._first):
                self._dispatch(callback)
            return
        for callback in list(self._second):
            with contextlib.suppress(BaseException):
                callback()
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        self._exit_now(EXIT_INTERRUPTED)

    def _dispatch(self, callback: Callable[[], Any]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(callback)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        callback()

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.request()
