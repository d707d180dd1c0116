"""Archives stay open between tool calls: one reader per resolved path, reference counted.

A call holds a reference for its duration. An archive whose file changed on disk (a new crawl was packed,
a live crawl finished) is reopened on the next call; the old reader is closed once no call uses it.
Everything is closed when the server exits.

Opening and querying never happen under the manager's own lock: each archive has a lock of its own, so a
slow (or stuck) archive holds up only the calls that name it, and those give up after ``wait`` seconds.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core import ArchiveError
from nitpicker_core.archive import locate, open_archive, stub_path

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

log = logging.getLogger(__name__)

WAIT = 60.0  # seconds a call waits for an archive another call is opening or querying


class ArchiveBusy(ArchiveError):
    """Another call kept the archive longer than this call may wait."""


def _stamp(path: Path) -> tuple[Any, ...] | None:
    """What identifies this version of the archive on disk (None: there is nothing there)."""
    for kind, candidate in (("file", path), ("stub", stub_path(path))):
        try:
            st = candidate.stat()
        except (OSError, ValueError):
            continue
        if candidate.is_dir():  # a live working directory changes all the time; its reader sees the changes
            return (kind, "dir", st.st_ino)
        return (kind, st.st_ino, st.st_size, st.st_mtime_ns)
    return None


@dataclass(eq=False)
class _Entry:
    given: str
    reader: ArchiveReader
    stamp: tuple[Any, ...] | None
    refs: int = 0
    calls: int = 0
    stale: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # one query at a time per SQLite connection


@dataclass(eq=False)
class _Gate:
    """The per-archive lock held while a call looks up, reopens or opens that archive."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0


CLOSE_WAIT = 5.0  # seconds close_all waits for a call still using an archive


class ArchiveManager:
    def __init__(self, opener: Callable[[Path], Any] = open_archive, wait: float = WAIT) -> None:
        self._opener = opener
        self._wait = wait
        self._entries: dict[Path, _Entry] = {}
        self._gates: dict[Path, _Gate] = {}
        self._lock = threading.Lock()  # guards the two dicts and the counters only; never held while waiting

    @contextmanager
    def use(self, given: str) -> Iterator[Any]:
        """The open reader of the archive at ``given``, opening it on first use."""
        deadline = time.monotonic() + self._wait
        entry = self._acquire(given, deadline)
        try:
            if not entry.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise ArchiveBusy(f"{entry.reader.name} is busy with another call; try again")
            try:
                yield entry.reader
            finally:
                entry.lock.release()
        finally:
            self._release(entry)

    def _acquire(self, given: str, deadline: float) -> _Entry:
        path = Path(given).expanduser()
        locate(path)  # stat only: a FIFO, a device, a bad path fail here, before any lock
        key = Path(
            os.path.realpath(path)
        )  # the .nitpicker path names the archive even while only its stub exists
        with self._lock:
            gate = self._gates.setdefault(key, _Gate())
            gate.users += 1
        try:
            if not gate.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise ArchiveBusy(f"{path.name} is still being opened by another call; try again")
            try:
                return self._open_locked(given, path, key)
            finally:
                gate.lock.release()
        finally:
            with self._lock:
                gate.users -= 1
                if gate.users == 0:
                    del self._gates[key]

    def _open_locked(self, given: str, path: Path, key: Path) -> _Entry:
        """Reuse, reopen or open the archive; the caller holds its gate, so only one call opens it."""
        stamp = _stamp(key)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and (stamp is None or entry.stamp != stamp):
                log.info("%s changed on disk; reopening it", path.name)
                del self._entries[key]
                self._retire(entry)
                entry = None
            if entry is not None:
                entry.refs += 1
                entry.calls += 1
                return entry
        reader = self._opener(path)  # may take long (a first unpack); other archives are served meanwhile
        entry = _Entry(given, reader, stamp, refs=1, calls=1)
        with self._lock:
            self._entries[key] = entry
        log.info("opened %s", path.name)
        return entry

    def _release(self, entry: _Entry) -> None:
        with self._lock:
            entry.refs -= 1
            close = entry.stale and entry.refs == 0
        if close:
            entry.reader.close()

    def _retire(self, entry: _Entry) -> None:
        entry.stale = True
        if entry.refs == 0:
            entry.reader.close()

    def describe(self) -> list[dict[str, Any]]:
        """The open archives, as given by the client, with their commit count and HEAD.

        An archive another call is querying right now is listed as ``busy``, without waiting for it.
        """
        with self._lock:
            entries = list(self._entries.values())
            for entry in entries:
                entry.refs += 1
        out = []
        try:
            for entry in entries:
                reader = entry.reader
                row = {
                    "archive": entry.given,
                    "name": reader.name,
                    "live": reader.live_pid is not None,
                    "calls": entry.calls,
                }
                if entry.lock.acquire(blocking=False):
                    try:
                        row.update(commits=len(reader.commits()), head=reader.head())
                    finally:
                        entry.lock.release()
                else:
                    row["busy"] = True
                out.append(row)
        finally:
            for entry in entries:
                self._release(entry)
        return out

    def interrupt_all(self) -> None:
        """Abort the statement each open archive runs now, if any (its call fails with an error)."""
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            entry.reader.interrupt()

    def close_all(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            # a call that was interrupted ends in moments; one that runs on is not waited for long
            if not entry.lock.acquire(timeout=CLOSE_WAIT):
                log.warning("%s is still busy with a call; left open", entry.reader.name)
                continue
            try:
                entry.reader.close()
            except Exception:  # closing must go on for the others
                log.exception("closing %s failed", entry.reader.name)
            finally:
                entry.lock.release()
        if entries:
            log.info("closed %d archive(s)", len(entries))

    def __len__(self) -> int:
        return len(self._entries)
