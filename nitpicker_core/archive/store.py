"""Shared plumbing of the writer: the connection, URL ids, chunked IN-lookups and timestamps."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import peewee as pw

from . import aggregates, referrers

# Keep bound variables per statement well under SQLite's portable limit of 32766.
IN_CHUNK = 900
ROW_CHUNK = 2000


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Store:
    """What every writer part shares; ``ArchiveWriter`` sets these attributes in ``open``."""

    _db: pw.SqliteDatabase
    _url_cache: dict[str, int]
    _dirty: bool
    _unaggregated: set[int]
    is_external: Callable[[str], bool] | None

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._db.connection()

    def _lookup(self, sql: str, keys: Iterable[Any]) -> dict[Any, Any]:
        """Run ``sql`` (with one ``{marks}`` placeholder) over ``keys`` in chunks; rows are (key, value)."""
        found: dict[Any, Any] = {}
        key_list = list(keys)
        for part in chunks(key_list, IN_CHUNK):
            marks = ",".join("?" * len(part))
            found.update(self._conn.execute(sql.format(marks=marks), part).fetchall())
        return found

    def _url_ids(self, urls: Iterable[str]) -> dict[str, int]:
        """Ids of ``urls``, creating rows for new ones; URLs never change, so ids are cached for good."""
        cache = self._url_cache
        wanted = {u for u in urls if u not in cache}
        if wanted:
            found = self._lookup("SELECT url, id FROM url WHERE url IN ({marks})", wanted)
            missing = [(u,) for u in wanted if u not in found]
            if missing:
                self._conn.executemany("INSERT OR IGNORE INTO url (url) VALUES (?)", missing)
                found.update(
                    self._lookup("SELECT url, id FROM url WHERE url IN ({marks})", [m[0] for m in missing])
                )
            cache.update(found)
        return cache

    def _url_id(self, url: str) -> int:
        return self._url_ids((url,))[url]

    def _changing(self, commit_id: int) -> None:
        """Drop ``commit_id``'s stored aggregates before its content changes (once per commit and build)."""
        if commit_id not in self._unaggregated:
            aggregates.changing(self._conn, commit_id)
            referrers.clear(self._conn, commit_id)
            self._unaggregated.add(commit_id)

    def _touch(self) -> None:
        self._dirty = True
