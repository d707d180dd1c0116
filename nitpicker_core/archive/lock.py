"""Advisory lock on a working directory: atomic mkdir plus a pid file; a dead holder's lock is taken over once."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

from nitpicker_core.errors import ArchiveLocked

LOCK_DIR = "lock"
PID_FILE = "pid"
# A lock dir without a readable pid may be a holder between mkdir and writing its pid; give it this long.
PIDLESS_GRACE_SECONDS = 5.0

_holder: int | None = None  # the process this one's locks are held for (see ``hold_for``)


def hold_for(pid: int) -> None:
    """Locks this process takes from now on name ``pid`` as their holder.

    A crawl's archive writer process holds the archive for its crawler: when the crawler is killed the lock
    is free at once, as when the crawler wrote it itself, though the writer ends a moment later (it ends when
    it finds the crawler gone; its transactions are SQLite's, whole or not at all).
    """
    global _holder
    _holder = pid


def _me() -> int:
    return _holder if _holder is not None else os.getpid()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:  # a zombie (ended, not yet reaped by its parent) holds nothing
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc here
        return True


def read_pid(lock_dir: Path) -> int | None:
    try:
        return int((lock_dir / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def live_pid(stub: Path) -> int | None:
    """The pid of the live process holding ``stub``'s lock, or None."""
    pid = read_pid(stub / LOCK_DIR)
    return pid if pid is not None and pid_alive(pid) else None


class StubLock:
    """The lock of one stub directory; ``name`` is what messages call the archive."""

    def __init__(self, stub: Path, name: str) -> None:
        self.stub = stub
        self.name = name
        self.path = stub / LOCK_DIR
        self.held = False

    def acquire(self) -> None:
        if self._try_mkdir():
            return
        pid = read_pid(self.path)
        deadline = time.monotonic() + 1.0
        while pid is None and not self._old_enough() and time.monotonic() < deadline:
            time.sleep(0.01)  # the holder is between its mkdir and its pid file: wait to name it
            pid = read_pid(self.path)
        if pid is not None and pid_alive(pid):
            raise self._locked(pid)
        if pid is None and not self._old_enough():
            raise ArchiveLocked(f"{self.name} is being locked by another process right now", None)
        self._take_over(pid)

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        # Only remove the lock if it is still ours (a takeover elsewhere must not be undone).
        if read_pid(self.path) == _me():
            shutil.rmtree(self.path, ignore_errors=True)

    def _try_mkdir(self) -> bool:
        try:
            os.mkdir(self.path)
        except FileExistsError:
            return False
        tmp = self.path / f"{PID_FILE}.{os.getpid()}.tmp"
        tmp.write_text(f"{_me()}\n")
        os.replace(tmp, self.path / PID_FILE)  # readers never see a half-written pid
        self.held = True
        return True

    def _old_enough(self) -> bool:
        try:
            return time.time() - self.path.stat().st_mtime > PIDLESS_GRACE_SECONDS
        except FileNotFoundError:
            return True

    def _take_over(self, stale_pid: int | None) -> None:
        target = self.stub / f"{LOCK_DIR}.stale-{uuid.uuid4().hex[:12]}"
        aside: Path | None = target
        try:
            os.rename(self.path, target)
        except FileNotFoundError:
            aside = None  # someone else moved it first; fall through to one mkdir attempt
        if aside is not None:
            moved_pid = read_pid(aside)
            if moved_pid != stale_pid and moved_pid is not None and pid_alive(moved_pid):
                # We raced with another takeover and moved its fresh lock: put it back and yield.
                try:
                    os.rename(aside, self.path)
                except OSError:
                    pass
                raise self._locked(moved_pid)
            shutil.rmtree(aside, ignore_errors=True)
        if self._try_mkdir():
            return
        raise self._locked(read_pid(self.path))

    def _locked(self, pid: int | None) -> ArchiveLocked:
        who = f"process {pid}" if pid is not None else "another process"
        return ArchiveLocked(f"{self.name} is being written by {who}", pid)
