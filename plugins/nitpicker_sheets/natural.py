"""Natural order (digit runs as numbers, case-insensitive, stable) with an external merge sort."""

from __future__ import annotations

import heapq
import pickle
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

_RUNS = re.compile(r"(\d+)")
RUN_SIZE = 20000  # items sorted in memory at once; longer inputs spill sorted runs to temporary files


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """``file2`` < ``file10``, ``A`` == ``a`` (ties broken by the caller's stable order)."""
    parts = []
    for i, run in enumerate(_RUNS.split(text or "")):
        if not run:
            continue
        parts.append((0, int(run), "") if i % 2 else (1, 0, run.casefold()))
    return tuple(parts)


def _spill(items: list[Any]) -> IO[bytes]:
    handle = tempfile.TemporaryFile()
    for item in items:
        pickle.dump(item, handle, protocol=pickle.HIGHEST_PROTOCOL)
    handle.seek(0)
    return handle


def _read(handle: IO[bytes]) -> Iterator[Any]:
    with handle:
        while True:
            try:
                yield pickle.load(handle)
            except EOFError:
                return


def natural_sorted(
    items: Iterable[Any], text: Callable[[Any], str], run_size: int = RUN_SIZE
) -> Iterator[Any]:
    """``items`` in natural order of ``text(item)``, holding at most ``run_size`` items in memory.

    Equal keys keep their input order: each run is sorted stably and ``heapq.merge`` prefers earlier runs.
    """

    def key(item: Any) -> Any:
        return natural_key(text(item))

    runs: list[IO[bytes]] = []
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= run_size:
            chunk.sort(key=key)
            runs.append(_spill(chunk))
            chunk = []
    chunk.sort(key=key)
    if not runs:
        yield from chunk
        return
    if chunk:
        runs.append(_spill(chunk))
    yield from heapq.merge(*(_read(run) for run in runs), key=key)
