"""Archives stay open between tool calls: one reader per resolved path, reference counted.

A call holds a reference for its duration. An archive whose file changed on disk (a new crawl was packed,
a live crawl finished) is reopened on the next call; the old reader is closed once no call uses it.
Everything is closed when the server exits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nitpicker_core.archive import open_archive, stub_path

log = logging.getLogger(__name__)


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
    reader: Any
    stamp: tuple[Any, ...] | None
    refs: int = 0
    calls: int = 0
    stale: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # one query at a time per SQLite connection


class ArchiveManager:
    def __init__(self, opener: Callable[[Path], Any] = open_archive) -> None:
        self._opener = opener
        self._entries: dict[Path, _Entry] = {}
        self._lock = threading.Lock()

    @contextmanager
    def use(self, given: str) -> Iterator[Any]:
        """The open reader of the archive at ``given``, opening it on first use."""
        entry = self._acquire(given)
        try:
            with entry.lock:
                yield entry.reader
        finally:
            self._release(entry)

    def _acquire(self, given: str) -> _Entry:
        path = Path(given).expanduser()
        key = path.resolve()
        stamp = _stamp(key)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and (stamp is None or entry.stamp != stamp):
                log.info("%s changed on disk; reopening it", path.name)
                del self._entries[key]
                self._retire(entry)
                entry = None
            if entry is None:
                entry = _Entry(given, self._opener(path), stamp)
                self._entries[key] = entry
                log.info("opened %s", path.name)
            entry.refs += 1
            entry.calls += 1
            return entry

    def _release(self, entry: _Entry) -> None:
        with self._lock:
            entry.refs -= 1
            if entry.stale and entry.refs == 0:
                entry.reader.close()

    def _retire(self, entry: _Entry) -> None:
        entry.stale = True
        if entry.refs == 0:
            entry.reader.close()

    def describe(self) -> list[dict[str, Any]]:
        """The open archives, as given by the client, with their commit count and HEAD."""
        with self._lock:
            entries = list(self._entries.values())
            for entry in entries:
                entry.refs += 1
        out = []
        try:
            for entry in entries:
                with entry.lock:
                    reader = entry.reader
                    out.append({"archive": entry.given, "name": reader.name, "commits": len(reader.commits()),
                                "head": reader.head(), "live": reader.live_pid is not None, "calls": entry.calls})
        finally:
            for entry in entries:
                self._release(entry)
        return out

    def close_all(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            try:
                entry.reader.close()
            except Exception:  # closing must go on for the others
                log.exception("closing %s failed", entry.reader.name)
        if entries:
            log.info("closed %d archive(s)", len(entries))

    def __len__(self) -> int:
        return len(self._entries)
