"""The append-only run journal: one JSON object per line, written as events happen, never rewritten."""

from __future__ import annotations

import json
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from nitpicker_core.errors import ArchiveError, NitpickerError, UsageError

RUNS_SUFFIX = ".runs"
RETRYABLE = ("network", "timeout", "interrupted")
HARD = ("usage", "archive", "internal")
TORN_WINDOW = 1 << 20  # how far back a torn line is measured; an event is far smaller


def runs_dir_for(archive: Path) -> Path:
    """Where the journals of an archive's runs live by default: ``X.nitpicker.runs/`` next to it."""
    return archive.with_name(archive.name + RUNS_SUFFIX)


def new_run_id(now: datetime | None = None) -> str:
    """Sortable by start time, unique enough for concurrent runs: ``20261130T154000Z-3f9a``."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}Z-{secrets.token_hex(2)}"


def classify(exc: BaseException) -> tuple[str, str]:
    """(reason, class) of a failure: retryable ones may succeed when run again, hard ones need a person."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", "retryable"
    if isinstance(exc, UsageError):
        return "usage", "hard"
    if isinstance(exc, ArchiveError):
        return "archive", "hard"
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return "timeout", "retryable"
    if isinstance(exc, (ConnectionError, socket.gaierror)) or type(exc).__module__.startswith("requests"):
        return "network", "retryable"
    if isinstance(exc, NitpickerError):
        return "usage", "hard"
    return "internal", "hard"


def failure_class(reason: str) -> str:
    return "retryable" if reason in RETRYABLE else "hard"


class Journal:
    """Appends events to ``<dir>/<run-id>.jsonl``; safe to call from the heartbeat thread and the run."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path, self.run_id = path, run_id
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def _line(self, event: str, fields: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        now = time.time()
        record = {
            "event": event,
            "run": self.run_id,
            "ts": round(now, 3),
            "at": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
            **fields,
        }
        return record, (json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n").encode()

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        record, line = self._line(event, fields)
        with self._lock, self.path.open("a+b") as handle:
            torn = torn_tail(handle)
            if torn:  # a writer killed mid-line: end its fragment so this event gets a line of its own
                _, note = self._line("journal_torn", {"torn_bytes": torn})
                line = b"\n" + note + line
            handle.write(line)  # one write per line: a reader never sees half of two events interleaved
            handle.flush()
            os.fsync(handle.fileno())
        return record


def torn_tail(handle: BinaryIO) -> int:
    """Bytes after the last newline of an open journal: 0 unless its last line was cut off mid-write."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return 0
    handle.seek(end - 1)
    if handle.read(1) == b"\n":
        return 0
    start = max(0, end - TORN_WINDOW)
    handle.seek(start)
    tail = handle.read(end - start)
    return len(tail) - tail.rfind(b"\n") - 1


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every complete event of a journal; a torn last line (the writer was killed mid-write) is ignored."""
    return list(iter_lines(path.read_text(encoding="utf-8")))


def iter_lines(text: str) -> Iterator[dict[str, Any]]:
    """The journal's events; a line that is not JSON, or JSON of another shape, is passed over."""
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nesting deeper than the parser goes
            continue
        if well_formed(event):
            yield event


# The type of each field a reader of the journal uses; a line where one has another type is not an event
# nitpicker wrote (a hand edit, another program, a damaged disk) and must not bring a reader down.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "event": (str,),
    "ts": (int, float),
    "at": (str,),
    "run": (str,),
    "stage": (str,),
    "state": (str,),
    "mode": (str, type(None)),
    "reason": (str, type(None)),
    "class": (str, type(None)),
    "message": (str, type(None)),
    "exit_code": (int, type(None)),
    "passed": (bool, type(None)),
    "checks": (list,),
    "declaration": (dict, type(None)),
    "progress": (dict, type(None)),
    "outputs": (dict, type(None)),
}
_MAX_DEPTH = 20  # progress and outputs are a few levels deep; deeper is not ours


def well_formed(event: Any) -> bool:
    if not isinstance(event, dict) or "event" not in event:
        return False
    for name, types in _FIELD_TYPES.items():
        if name in event:
            value = event[name]
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                return False
    if "ts" in event and not math.isfinite(event["ts"]):
        return False
    stages = (event.get("declaration") or {}).get("stages", [])
    if not isinstance(stages, list) or not all(isinstance(s, str) for s in stages):
        return False
    return all(_depth(event.get(name)) <= _MAX_DEPTH for name in ("progress", "outputs", "declaration"))


def _depth(value: Any, level: int = 0) -> int:
    if level > _MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def journals_in(directory: Path) -> list[Path]:
    """Journals directly in ``directory`` and in any ``*.nitpicker.runs/`` directory inside it."""
    found = list(directory.glob("*.jsonl")) + list(directory.glob(f"*{RUNS_SUFFIX}/*.jsonl"))
    return sorted(found, key=lambda p: p.name)


def find_journal(ref: str, directories: list[Path]) -> Path:
    """A journal from a path to one, an archive (its latest run) or a run id looked up in ``directories``."""
    path = Path(ref)
    if path.suffix == ".jsonl" and path.is_file():
        return path
    if path.suffix == ".nitpicker" or runs_dir_for(path).is_dir():
        runs = sorted(runs_dir_for(path).glob("*.jsonl"), key=lambda p: p.name)
        if not runs:
            raise UsageError(f"{path.name} has no pipeline run to resume")
        return runs[-1]
    for directory in directories:
        for candidate in journals_in(directory):
            if candidate.stem == ref:
                return candidate
    raise UsageError(f"no pipeline run {ref!r} (give a journal file, an archive, or --journal-dir)")
