"""Stored findings: each check's findings on a commit, and their new/fixed/persisting counts against its base.

This module stores and reads them; it never runs a check. Checks run once when a commit completes (crawl
checks) and when an analyzer run completes (that analyzer's checks), by ``nitpicker_core.indexing`` with the
caller's plugins, and their findings are stored with the commit, so `issues` reads counts instead of re-running 400
checks over every page, and lifecycles are SQL set operations on (check, url, detail). A check's findings
are stored as a set, once per distinct content: a re-crawl that finds exactly what its parent found points
at the parent's set, so an unchanged commit costs one row per check, not a copy of every finding. Each
stored check carries a token naming what its findings were made from (the commit's finish time, the analyzer run, the
code that made them); a reader uses a stored check only when the token still matches, and computes it in
memory otherwise (an older archive, a resumed commit, a new check, a read-only copy).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from nitpicker_core.records import Finding

log = logging.getLogger(__name__)

# Set NITPICKER_FINDINGS=0 to make writers store nothing and readers ignore what is stored.
ENV_SWITCH = "NITPICKER_FINDINGS"
FINDINGS_VERSION = 4
STATES = ("new", "persisting", "fixed")

SCHEMA = (
    # check ids as small integers: a 100,000-page commit stores a million findings
    "CREATE TABLE IF NOT EXISTS finding_name (id INTEGER PRIMARY KEY, check_id TEXT NOT NULL UNIQUE)",
    # a distinct set of findings, named by the digest of its sorted content (shared by the commits that found it)
    "CREATE TABLE IF NOT EXISTS finding_set (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE)",
    # one row per (commit, check) whose findings are stored: which set; `error` when the check failed there
    "CREATE TABLE IF NOT EXISTS check_result (commit_id INTEGER NOT NULL, check_no INTEGER NOT NULL, "
    "token TEXT NOT NULL, set_id INTEGER NOT NULL, findings INTEGER NOT NULL, urls INTEGER NOT NULL, error TEXT, "
    "PRIMARY KEY (commit_id, check_no)) WITHOUT ROWID",
    # a set's findings in (url, detail) order: lists page through the key, lifecycles seek it
    "CREATE TABLE IF NOT EXISTS set_finding (set_id INTEGER NOT NULL, url TEXT NOT NULL, detail TEXT NOT NULL, "
    "PRIMARY KEY (set_id, url, detail)) WITHOUT ROWID",
    # each finding as a 64-bit hash of (url, detail): lifecycles merge two sets' sorted hashes (one pass over
    # small rows, INTERSECT/EXCEPT) instead of seeking every URL text of one set in the other
    "CREATE TABLE IF NOT EXISTS set_hash (set_id INTEGER NOT NULL, h INTEGER NOT NULL, "
    "PRIMARY KEY (set_id, h)) WITHOUT ROWID",
    # counts against a base (the default one, stored with the commit); `tokens` names both sides' tokens
    "CREATE TABLE IF NOT EXISTS finding_delta (commit_id INTEGER NOT NULL, base_id INTEGER NOT NULL, "
    "check_no INTEGER NOT NULL, tokens TEXT NOT NULL, new INTEGER NOT NULL, fixed INTEGER NOT NULL, "
    "persisting INTEGER NOT NULL, regressed INTEGER NOT NULL, new_urls INTEGER, fixed_urls INTEGER, "
    "persisting_urls INTEGER, regressed_urls INTEGER, PRIMARY KEY (commit_id, base_id, check_no)) WITHOUT ROWID",
)
TABLES = ("check_result", "finding_set", "set_finding", "set_hash", "finding_delta")
# the tables of format 3 (findings copied per commit): dropped when a writer opens the archive
RETIRED = ("finding_check", "finding", "finding_hash")


class StoredCheck(Protocol):
    """What storing needs of a check (``nitpicker_core.Check`` is one): its id, analyzer and defect key."""

    @property
    def id(self) -> str: ...

    @property
    def analyzer(self) -> str: ...

    @property
    def defect(self) -> str: ...


#: one check's outcome on a commit, as stored: the check, its token, its findings, its error (None: it ran)
Result = tuple[StoredCheck, str, set[Finding], str | None]


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


def create_tables(conn: sqlite3.Connection) -> None:
    for table in RETIRED:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA:
        conn.execute(statement)


def has_tables(reader: Any) -> bool:
    return bool(reader.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'check_result'"))


def gc(conn: sqlite3.Connection) -> int:
    """Drop the finding sets no stored check points at any more (after commits were dropped); how many."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'finding_set'"
    ).fetchone():
        return 0
    unused = "SELECT id FROM finding_set WHERE id NOT IN (SELECT set_id FROM check_result)"
    conn.execute(f"DELETE FROM set_finding WHERE set_id IN ({unused})")
    conn.execute(f"DELETE FROM set_hash WHERE set_id IN ({unused})")
    return int(conn.execute(f"DELETE FROM finding_set WHERE id IN ({unused})").rowcount)


def base_of(reader: Any, commit: int) -> int | None:
    """The commit's parent, or the nearest complete ancestor when the parent is incomplete; None for a root."""
    commits: dict[Any, dict[str, Any]] = {c["id"]: c for c in reader.commits()}
    parent: Any = commits[commit]["parent_id"] if commit in commits else None
    seen: set[Any] = set()
    while parent in commits and commits[parent]["status"] != "complete" and parent not in seen:
        seen.add(parent)
        parent = commits[parent]["parent_id"]
    return parent if parent in commits else None


def _token(text: str) -> str:
    """What a token names, as 16 hex digits: stored once per check and commit, compared, never read back."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class Tokens:
    """What a check's findings on a commit depend on, for many checks: commits and runs read once."""

    def __init__(self, reader: Any, codes: dict[str, str]) -> None:
        self.reader, self.codes = reader, codes
        self._commits = {
            int(r[0]): (str(r[1]), str(r[2] or ""))
            for r in reader.execute("SELECT id, status, finished_at FROM commits")
        }
        self._runs: dict[int, dict[str, str]] = {}

    def _run_tokens(self, commit: int) -> dict[str, str]:
        if commit not in self._runs:
            self._runs[commit] = {
                r[
                    "analyzer"
                ]: f"run:{r['version']}:{r['settings_hash']}:{r['started_at']}:{r['finished_at']}:"
                f"{r['status']}"
                for r in self.reader.analyzer_runs(commit)
                if str(r.get("status") or "").startswith("complete")
            }
        return self._runs[commit]

    def of(self, check: StoredCheck, commit: int) -> str | None:
        """The check's token on the commit; None when its findings are not worth storing (unfinished)."""
        code = self.codes.get(check.id)
        info = self._commits.get(commit)
        if code is None or info is None or info[0] != "complete":
            return None
        if not check.analyzer:
            return _token(f"v{FINDINGS_VERSION}|{code}|commit:{info[1]}")
        run = self._run_tokens(commit).get(check.analyzer)
        return None if run is None else _token(f"v{FINDINGS_VERSION}|{code}|{run}")


class Stored:
    """What the archive stores for the checks of some commits, read once per reader."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.available = enabled() and has_tables(reader)
        self.numbers: dict[str, int] = {}
        self._checks: dict[int, dict[str, tuple[str, int, int, str | None]]] = {}
        self._sets: dict[int, dict[str, int]] = {}
        if self.available:
            self.numbers = {r[1]: r[0] for r in reader.execute("SELECT id, check_id FROM finding_name")}

    def checks(self, commit: int) -> dict[str, tuple[str, int, int, str | None]]:
        """check id → (token, findings, urls, error) of the commit's stored checks."""
        if commit not in self._checks:
            found: dict[str, tuple[str, int, int, str | None]] = {}
            sets: dict[str, int] = {}
            if self.available:
                names = {v: k for k, v in self.numbers.items()}
                for r in self.reader.execute(
                    "SELECT check_no, token, findings, urls, error, set_id FROM check_result WHERE commit_id = ?",
                    [commit],
                ):
                    if r[0] in names:
                        found[names[r[0]]] = (r[1], r[2], r[3], r[4])
                        sets[names[r[0]]] = r[5]
            self._checks[commit], self._sets[commit] = found, sets
        return self._checks[commit]

    def set_of(self, commit: int, check_id: str) -> int | None:
        """The id of the check's finding set on the commit (None when not stored there)."""
        self.checks(commit)
        return self._sets[commit].get(check_id)

    def _sets_of(self, commit: int, check_ids: list[str]) -> str:
        found = [self.set_of(commit, c) for c in check_ids]
        return ", ".join(str(s) for s in found if s is not None) or "NULL"

    def valid(
        self, commit: int, check_id: str, wanted: str | None
    ) -> tuple[str, int, int, str | None] | None:
        row = self.checks(commit).get(check_id)
        return row if row is not None and wanted is not None and row[0] == wanted else None

    def findings(self, commit: int, check_id: str) -> set[Finding]:
        return {
            Finding(r[0], r[1])
            for r in self.reader.execute(
                "SELECT url, detail FROM set_finding WHERE set_id = ?", [self.set_of(commit, check_id)]
            )
        }

    def details_on(self, commit: int, check_id: str, url: str) -> set[str] | None:
        """The details of the check's stored findings on ``url`` (None when the commit stored no set)."""
        set_id = self.set_of(commit, check_id)
        if set_id is None:
            return None
        rows = self.reader.execute(
            "SELECT detail FROM set_finding WHERE set_id = ? AND url = ?", [set_id, url]
        )
        return {row[0] for row in rows}

    def delta(
        self, commit: int, base: int, check_id: str, tokens: str, by_url: bool = False
    ) -> dict[str, int] | None:
        """Stored counts against ``base`` when both sides' tokens still match (``by_url``: of affected URLs,
        stored for checks with a defect key, which merged rows count by URL)."""
        if not self.available or check_id not in self.numbers:
            return None
        now, then = self.checks(commit).get(check_id), self.checks(base).get(check_id)
        same = self.set_of(commit, check_id)
        if now and then and same is not None and same == self.set_of(base, check_id):
            # the same set on both sides: nothing new, nothing fixed (no row is stored for it)
            if tokens != f"{now[0]}\n{then[0]}":
                return None
            return {"new": 0, "fixed": 0, "persisting": now[2] if by_url else now[1], "regressed": 0}
        rows = self.reader.execute(
            "SELECT tokens, new, fixed, persisting, regressed, new_urls, fixed_urls, persisting_urls, regressed_urls "
            "FROM finding_delta WHERE commit_id = ? AND base_id = ? AND check_no = ?",
            [commit, base, self.numbers[check_id]],
        )
        if not rows or rows[0][0] != tokens:
            return None
        values = list(rows[0][5:9] if by_url else rows[0][1:5])
        if None in values:
            return None
        return dict(zip(("new", "fixed", "persisting", "regressed"), values, strict=True))

    def persisting(self, commit: int, base: int, check_id: str) -> int:
        """Findings of the check on both commits (one merge of the two sets' sorted hashes)."""
        now, then = self.set_of(commit, check_id), self.set_of(base, check_id)
        if now is not None and now == then:
            return self.checks(commit)[check_id][1]
        return _count(self.reader, f"{_HASHES} INTERSECT {_HASHES}", [now, then])

    def regressed(self, commit: int, base: int, prior: int, check_id: str) -> int:
        """New findings (on the commit, not the base) that the commit before the base had."""
        sets = [self.set_of(c, check_id) for c in (commit, base, prior)]
        if sets[0] is not None and sets[0] == sets[1]:
            return 0
        return _count(self.reader, f"{_HASHES} EXCEPT {_HASHES} INTERSECT {_HASHES}", sets)

    def urls(self, commit: int, check_ids: list[str]) -> int:
        """How many URLs any of the checks found on the commit (the count of a merged defect)."""
        return int(
            self.reader.execute(
                f"SELECT count(DISTINCT url) FROM set_finding WHERE set_id IN ({self._sets_of(commit, check_ids)})"
            )[0][0]
        )

    def shared_urls(
        self, commit: int, base: int, check_ids: list[str], base_ids: list[str] | None = None
    ) -> int:
        """URLs the checks found on both commits (any check, any detail on each side; ``base_ids`` on the base)."""
        then = check_ids if base_ids is None else base_ids
        return int(
            self.reader.execute(
                f"SELECT count(*) FROM (SELECT DISTINCT url FROM set_finding WHERE set_id IN "
                f"({self._sets_of(commit, check_ids)})) n WHERE EXISTS (SELECT 1 FROM set_finding b WHERE "
                f"b.set_id IN ({self._sets_of(base, then)}) AND b.url = n.url)"
            )[0][0]
        )

    def regressed_urls(
        self, commit: int, base: int, prior: int, check_ids: list[str], base_ids: list[str] | None = None
    ) -> int:
        """New URLs (on the commit, on none of the checks on the base) with a finding the prior commit had."""
        then = check_ids if base_ids is None else base_ids
        pairs = [
            (self.set_of(commit, c), self.set_of(prior, c))
            for c in check_ids
            if self.set_of(commit, c) is not None and self.set_of(prior, c) is not None
        ]
        if not pairs:
            return 0
        values = ", ".join(f"({now}, {then})" for now, then in pairs)
        return int(
            self.reader.execute(
                f"WITH pair (now, prior) AS (VALUES {values}) SELECT count(DISTINCT a.url) FROM pair "
                f"JOIN set_finding a ON a.set_id = pair.now WHERE NOT EXISTS (SELECT 1 FROM set_finding b "
                f"WHERE b.set_id IN ({self._sets_of(base, then)}) AND b.url = a.url) AND EXISTS "
                "(SELECT 1 FROM set_finding p WHERE p.set_id = pair.prior AND p.url = a.url AND p.detail = a.detail)"
            )[0][0]
        )

    def rows(
        self, commit: int, base: int | None, check_id: str, state: str, limit: int, offset: int
    ) -> list[tuple[str, str]]:
        """One page of the check's findings in one state, in (url, detail) order, read through the key."""
        if base is None:
            if state != "new":
                return []
            sql, params = _STATE_SQL["all"], [self.set_of(commit, check_id)]
        elif state == "fixed":
            sql, params = _STATE_SQL["new"], [self.set_of(base, check_id), self.set_of(commit, check_id)]
        else:
            sql, params = _STATE_SQL[state], [self.set_of(commit, check_id), self.set_of(base, check_id)]
        return [
            (r[0], r[1])
            for r in self.reader.execute(
                f"{sql} ORDER BY a.url, a.detail LIMIT ? OFFSET ?", [*params, limit, offset]
            )
        ]


_HASHES = "SELECT h FROM set_hash WHERE set_id = ?"


def _count(reader: Any, compound: str, sets: list[int | None]) -> int:
    """Rows of a compound select of sets' finding hashes, merged in key order (no sort, no seeks)."""
    return int(reader.execute(f"SELECT count(*) FROM ({compound})", sets)[0][0])


def finding_hash(finding: Finding) -> int:
    """A finding's 64-bit signed hash within its check (collisions among a million findings: ~1e-7)."""
    digest = hashlib.blake2b(
        f"{finding.url}\0{finding.detail}".encode("utf-8", "surrogatepass"), digest_size=8
    )
    return int.from_bytes(digest.digest(), "big", signed=True)


_SAME = "SELECT 1 FROM set_finding b WHERE b.set_id = ? AND b.url = a.url AND b.detail = a.detail"
_STATE_SQL = {
    "all": "SELECT a.url, a.detail FROM set_finding a WHERE a.set_id = ?",
    "new": f"SELECT a.url, a.detail FROM set_finding a WHERE a.set_id = ? AND NOT EXISTS ({_SAME})",
    "persisting": f"SELECT a.url, a.detail FROM set_finding a WHERE a.set_id = ? AND EXISTS ({_SAME})",
}


# --- writing ------------------------------------------------------------------------------------------------


def _number(conn: sqlite3.Connection, check_id: str) -> int:
    conn.execute("INSERT OR IGNORE INTO finding_name (check_id) VALUES (?)", (check_id,))
    return int(conn.execute("SELECT id FROM finding_name WHERE check_id = ?", (check_id,)).fetchone()[0])


def store(
    conn: sqlite3.Connection, reader: Any, commit: int, results: Iterable[Result], tokens: Tokens
) -> int:
    """Store the checks' findings on the commit, and their counts against its base; how many were stored.

    ``conn`` is the writer's connection (in its transaction), ``reader`` a reader of the writer's working
    directory that ``results`` were made with. Never raises: stored findings only make `issues` faster.
    """
    results = list(results)
    conn.execute("SAVEPOINT findings")
    try:
        stored = _store(conn, reader, commit, results, tokens)
    except Exception:  # noqa: BLE001 - the archive stays right without them; readers compute in memory
        log.warning("findings of commit %s not stored", commit, exc_info=True)
        if (
            not conn.in_transaction
        ):  # SQLite ended the transaction itself (a full disk): the writer's to report
            raise
        conn.execute("ROLLBACK TO findings")
        stored = 0
    conn.execute("RELEASE findings")
    return stored


def _store(conn: sqlite3.Connection, reader: Any, commit: int, results: list[Result], tokens: Tokens) -> int:
    create_tables(conn)
    base = base_of(reader, commit)
    prior = base_of(reader, base) if base is not None else None
    stored = 0
    for check, wanted, found, error in results:
        number = _number(conn, check.id)
        conn.execute("DELETE FROM finding_delta WHERE commit_id = ? AND check_no = ?", (commit, number))
        conn.execute(
            "INSERT OR REPLACE INTO check_result (commit_id, check_no, token, set_id, findings, urls, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (commit, number, wanted, _store_set(conn, found), len(found), len({f.url for f in found}), error),
        )
        stored += 1
    if base is not None:
        _store_deltas(
            conn, reader, commit, base, prior, [(c, w) for c, w, _, e in results if e is None], tokens
        )
    return stored


def _store_set(conn: sqlite3.Connection, found: set[Finding]) -> int:
    """The id of the stored set holding exactly ``found``, stored now unless an equal one already is."""
    pairs = sorted((f.url, f.detail) for f in found)
    digest = hashlib.blake2b(digest_size=16)
    for url, detail in pairs:
        digest.update(f"{url}\0{detail}\0".encode("utf-8", "surrogatepass"))
    key = digest.digest()
    row = conn.execute("SELECT id FROM finding_set WHERE digest = ?", (key,)).fetchone()
    if row is not None:
        return int(row[0])
    set_id = conn.execute("INSERT INTO finding_set (digest) VALUES (?)", (key,)).lastrowid
    assert set_id is not None  # an INSERT always sets it
    conn.executemany(f"INSERT INTO set_finding (set_id, url, detail) VALUES ({set_id}, ?, ?)", pairs)
    conn.executemany(
        f"INSERT OR IGNORE INTO set_hash (set_id, h) VALUES ({set_id}, ?)",
        sorted((finding_hash(Finding(url, detail)),) for url, detail in pairs),
    )
    return int(set_id)


def _store_deltas(
    conn: sqlite3.Connection,
    reader: Any,
    commit: int,
    base: int,
    prior: int | None,
    checks: Iterable[tuple[StoredCheck, str]],
    tokens: Tokens,
) -> None:
    """Counts against the default base, for the checks stored on both sides (read through the writer's view)."""
    mine = Stored(_ConnReader(conn, reader))
    for check, wanted in checks:
        then = mine.valid(base, check.id, tokens.of(check, base))
        if then is None or then[3] is not None:
            continue
        now = mine.checks(commit)[check.id]
        if mine.set_of(commit, check.id) == mine.set_of(base, check.id):
            continue  # the same set: nothing new or fixed, which the reader sees without a row
        if prior is not None and not mine.valid(prior, check.id, tokens.of(check, prior)):
            continue  # regressed needs the commit before the base: left to the reader
        both = mine.persisting(commit, base, check.id)
        regressed = mine.regressed(commit, base, prior, check.id) if prior is not None else 0
        by_url = _url_counts(mine, check, commit, base, prior) if check.defect else (None,) * 4
        conn.execute(
            "INSERT OR REPLACE INTO finding_delta (commit_id, base_id, check_no, tokens, new, fixed, persisting, "
            "regressed, new_urls, fixed_urls, persisting_urls, regressed_urls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                commit,
                base,
                mine.numbers[check.id],
                f"{wanted}\n{then[0]}",
                now[1] - both,
                then[1] - both,
                both,
                regressed,
                *by_url,
            ),
        )


def _url_counts(
    mine: Stored, check: StoredCheck, commit: int, base: int, prior: int | None
) -> tuple[int | None, int | None, int | None, int | None]:
    """new, fixed, persisting and regressed affected URLs of one check (what a merged row counts)."""
    now, then = mine.findings(commit, check.id), mine.findings(base, check.id)
    now_urls, base_urls = {f.url for f in now}, {f.url for f in then}
    new_urls = now_urls - base_urls
    regressed = 0
    if prior is not None:
        back = (now - then) & mine.findings(prior, check.id)
        regressed = len({f.url for f in back} & new_urls)
    return len(new_urls), len(base_urls - now_urls), len(now_urls & base_urls), regressed


class _ConnReader:
    """The writer's connection with the reader methods ``Stored`` uses (it sees what was just written)."""

    def __init__(self, conn: sqlite3.Connection, reader: Any) -> None:
        self._conn, self._reader = conn, reader

    def execute(self, sql: str, params: Any = ()) -> list[Any]:
        return self._conn.execute(sql, params).fetchall()

    def __getattr__(self, name: str) -> Callable[..., Iterator[Any]]:
        return getattr(self._reader, name)  # type: ignore[no-any-return]
