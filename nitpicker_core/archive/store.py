"""Shared plumbing of the writer: the connection, URL ids, chunked IN-lookups and timestamps."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

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
    """The writer's one database and what its collaborators share: URL ids, commits whose aggregates must be
    built again, and whether anything changed since the file was written."""

    def __init__(self, db: pw.SqliteDatabase, is_external: Callable[[str], bool] | None = None) -> None:
        self.db = db
        self.is_external = is_external
        self.url_cache: dict[str, int] = {}
        self.unaggregated: set[int] = set()
        self.dirty = False

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.connection()

    def lookup(self, sql: str, keys: Iterable[Any]) -> dict[Any, Any]:
        """Run ``sql`` (with one ``{marks}`` placeholder) over ``keys`` in chunks; rows are (key, value)."""
        found: dict[Any, Any] = {}
        key_list = list(keys)
        for part in chunks(key_list, IN_CHUNK):
            marks = ",".join("?" * len(part))
            found.update(self.conn.execute(sql.format(marks=marks), part).fetchall())
        return found

    def url_ids(self, urls: Iterable[str]) -> dict[str, int]:
        """Ids of ``urls``, creating rows for new ones; URLs never change, so ids are cached for good."""
        cache = self.url_cache
        wanted = {u for u in urls if u not in cache}
        if wanted:
            found = self.lookup("SELECT url, id FROM url WHERE url IN ({marks})", wanted)
            missing = [(u,) for u in wanted if u not in found]
            if missing:
                self.conn.executemany("INSERT OR IGNORE INTO url (url) VALUES (?)", missing)
                found.update(
                    self.lookup("SELECT url, id FROM url WHERE url IN ({marks})", [m[0] for m in missing])
                )
            cache.update(found)
        return cache

    def url_id(self, url: str) -> int:
        return self.url_ids((url,))[url]

    def changing(self, commit_id: int) -> None:
        """Drop ``commit_id``'s stored aggregates before its content changes (once per commit and build)."""
        if commit_id not in self.unaggregated:
            aggregates.changing(self.conn, commit_id)
            referrers.clear(self.conn, commit_id)
            self.unaggregated.add(commit_id)

    def touch(self) -> None:
        self.dirty = True


P = ParamSpec("P")
R = TypeVar("R")


class via(Generic[P, R]):  # lower case: it reads as a verb in a class body, put_page = via("pages", ...)
    """A method offered by the writer but done by a collaborator: ``put_page = via("pages", Pages.put_page)``
    makes ``writer.put_page(...)`` call ``writer.pages.put_page(...)``, with the collaborator's signature."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part, self.name = part, method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> via[P, R]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type) -> via[P, R] | Callable[P, R]:
        if obj is None:
            return self
        return getattr(getattr(obj, self.part), self.name)  # type: ignore[no-any-return]
