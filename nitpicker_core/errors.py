"""Exceptions that nitpicker turns into one-line messages for its users."""

from __future__ import annotations

import errno
import sqlite3


class NitpickerError(Exception):
    """A problem the user can fix; the CLI prints its message on one line and exits 1."""

    exit_code = 1


class UsageError(NitpickerError):
    """Bad arguments or configuration."""


class NotConfigured(Exception):
    """Raised by a plugin (usually in ``configure``) to switch itself off, with a reason.

    The plugin is recorded as unavailable with ``str(exc)`` as the reason; the rest of the run goes on.
    """


class ArchiveError(NitpickerError):
    """The archive cannot be opened or written (missing, corrupt, foreign, newer, locked)."""


class ArchiveLocked(ArchiveError):
    """Another live process holds the working directory's lock."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class RegistrationError(NitpickerError):
    """A plugin registered something invalid or a duplicate name."""


class OutOfSpace(ArchiveError):
    """A write found no room (a full disk, a quota, a file-size limit); what was written before is intact."""


# errno of a write that found no room, in words
_NO_ROOM = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file size limit exceeded",
}
_SQLITE_FULL = 13  # "database or disk is full": SQLite's answer to ENOSPC (and to a short write)
# SQLITE_IOERR_WRITE, _FSYNC, _TRUNCATE, _SHMSIZE: a write, or the growth of a file, that failed
_SQLITE_IOERR_WRITES = {778, 1034, 1546, 4874}


def no_room(exc: BaseException) -> str | None:
    """Why a write failed for want of room, in words, when ``exc`` (or an error it was raised from or during
    — a rollback that failed after SQLite had already rolled back, a wrapper's original) is one; else None.

    SQLite reports ENOSPC as SQLITE_FULL and other failed writes (EFBIG of a file-size limit, EIO) as
    SQLITE_IOERR_WRITE without the errno: those are named as a failed write, not guessed at.
    """
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        error = todo.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in _NO_ROOM:
            return _NO_ROOM[error.errno]
        if isinstance(error, sqlite3.Error):
            code = getattr(error, "sqlite_errorcode", None)
            if code == _SQLITE_FULL or "database or disk is full" in str(error):
                return "no space left on device"
            if code in _SQLITE_IOERR_WRITES:
                return "disk write failed (a full disk, a file-size limit or a failing disk)"
        todo += [e for e in (error.__cause__, error.__context__) if e is not None]
        todo += [a for a in error.args if isinstance(a, BaseException)]  # peewee wraps the driver's error
    return None


def out_of_space(exc: BaseException, name: str) -> OutOfSpace | None:
    """``exc`` as one line for the user when it is a write that found no room while writing ``name``."""
    why = no_room(exc)
    if why is None or isinstance(exc, OutOfSpace):
        return None
    return OutOfSpace(
        f"{why} while writing {name}; nothing was lost: {name} holds what it held before this write "
        "(an interrupted crawl continues with `crawl --resume`); make room and run the command again"
    )


# SQLite steps a statement this many virtual-machine instructions between calls of ``let_signals_in``
SIGNAL_STEPS = 10_000
_SQLITE_INTERRUPT = 9
_signalled: list[int] = []  # the signals ``interrupt`` was called for in this command


def interrupt(signum: int, frame: object = None) -> None:
    """A signal handler: Ctrl-C, SIGTERM and SIGHUP raise KeyboardInterrupt, and are remembered.

    Remembered because SQLite swallows the KeyboardInterrupt of a handler that ran inside a statement (in
    ``let_signals_in`` or a Python SQL function): the statement only fails, and the error it fails with is
    known for what it is by ``interrupted``.
    """
    _signalled.append(signum)
    raise KeyboardInterrupt


def forget_signals() -> None:
    """A new command starts: no signal came yet."""
    _signalled.clear()


def interrupted() -> bool:
    """Whether ``interrupt`` was called for a signal since ``forget_signals``."""
    return bool(_signalled)


def let_signals_in() -> int:
    """SQLite's progress handler (``watch_signals``): calling Python lets a pending signal's handler run.

    Python runs a signal's handler between bytecodes, never inside SQLite: without this a long statement
    held Ctrl-C and SIGTERM until it ended (640 s in the probe). The handler's KeyboardInterrupt aborts the
    statement, and so does an interrupt already taken (a caller that went on after the first abort); a
    handler that only asks for a stop (a crawl's) lets it go on.
    """
    return 1 if _signalled else 0


def watch_signals(conn: sqlite3.Connection) -> None:
    """Let signals interrupt the long statements of ``conn`` (``let_signals_in``)."""
    conn.set_progress_handler(let_signals_in, SIGNAL_STEPS)
