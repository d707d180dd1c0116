"""Synthetic pages and file snapshots shared by the archive tests."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from nitpicker_core.archive.hashing import canonical_json
from nitpicker_core.archive.models import PROMOTED
from nitpicker_core.records import Anchor, Image, JsonLd, PageError, ScrapeResult, Tag

_WORDS = [
    f"{a}{b}"
    for a in ("ka", "lo", "mi", "ne", "po", "ru", "si", "ta", "ve", "zo", "qu", "ix")
    for b in ("ban", "cor", "dit", "fel", "gam", "hun", "jor", "kel", "lum", "mar", "nex", "pol")
]


def prose(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def page(i: int, n_pages: int = 200, *, variant: str = "") -> ScrapeResult:
    """Page i of a synthetic site: a few KB of HTML, links to neighbours, an image, JSON-LD, a tag."""
    url = f"https://example.org/p/{i}"
    links = [Anchor(f"https://example.org/p/{(i + k) % n_pages}", f"link {k}") for k in range(1, 6)]
    links.append(Anchor("https://external.example/", "out"))
    body = "".join(f'<p class="c{k}">{prose(i * 100 + k, 60)}{variant}</p>\n' for k in range(10))
    return ScrapeResult(
        url=url,
        status=200,
        status_text="OK",
        content_type="text/html; charset=UTF-8",
        content_length=len(body),
        headers={"server": "test", "content-type": "text/html"},
        metadata={
            "title": f"Page {i}",
            "description": f"About {i}",
            "lang": "en",
            "noindex": False,
            "canonical": url,
            "hreflang": [{"en": url}],
        },
        html=f"<html><head><title>Page {i}</title></head><body>{body}</body></html>",
        anchors=links,
        images=[Image(f"https://example.org/img/{i}.png", alt=f"img {i}", width=100, height=50)],
        resources=["https://example.org/site.css", "https://example.org/app.js"],
        jsonld=[JsonLd('{"@type":"WebPage"}', parsed={"@type": "WebPage"}, types=["WebPage"])],
        tags=[Tag("gtm", "analytics", "GTM-1234")],
        errors=[PageError("mobile", "timeout")] if i % 50 == 0 else [],
    )


def snapshot(*dirs: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 of every file under ``dirs`` (by path), to prove nothing was written."""
    out = {}
    for root in dirs:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.endswith(skip):
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _as_format7(conn: sqlite3.Connection) -> None:
    """Format 7 kept ``--render auto``'s decision in the page's state (html_facts' ``render``), set by the
    first record that stored the state (a later commit's record filled nothing in): format 8 keeps it with
    each commit's row."""
    conn.execute(
        "UPDATE page_state SET html_facts = json_set(coalesce(html_facts, '{}'), '$.render', "
        "json((SELECT cp.render_decision FROM commit_page cp WHERE cp.state_id = page_state.id "
        'ORDER BY cp.commit_id, cp."order" LIMIT 1))) WHERE (SELECT cp.render_decision FROM commit_page cp '
        'WHERE cp.state_id = page_state.id ORDER BY cp.commit_id, cp."order" LIMIT 1) IS NOT NULL'
    )
    conn.execute("ALTER TABLE commit_page DROP COLUMN render_decision")
    conn.execute("UPDATE info SET value = '7' WHERE key = 'format_version'")


def downgrade_to_format7(target: Path) -> None:
    """Rewrite ``target`` in place as format 7 wrote it: each decision in the state its commit stored first."""
    _rewrite(target, _as_format7)


def _as_format5(conn: sqlite3.Connection) -> None:
    """Format 5 and older had no word count, no timing of a crawl's requests and no sitemap alternates."""
    _as_format7(conn)
    conn.execute("DROP TABLE IF EXISTS sitemap_alternate")
    conn.execute("ALTER TABLE page_state DROP COLUMN word_count")
    for name in ("response_ms", "load_ms", "http_version"):
        conn.execute(f"ALTER TABLE commit_page DROP COLUMN {name}")
    conn.execute("UPDATE info SET value = '5' WHERE key = 'format_version'")


def downgrade_to_format5(target: Path) -> None:
    """Rewrite ``target`` in place as format 5 wrote it: no word counts, no request timings."""
    _rewrite(target, _as_format5)


def _as_format4(conn: sqlite3.Connection) -> None:
    """Format 4 and older kept the keys the core writes in page_state.extra (format 5 made them columns)."""
    _as_format5(conn)
    names = ", ".join(name for name, _ in PROMOTED)
    for state_id, extra, *values in conn.execute(f"SELECT id, extra, {names} FROM page_state").fetchall():
        data = json.loads(extra)
        for (name, kind), value in zip(PROMOTED, values, strict=True):
            if value is not None:
                data[name] = bool(value) if kind == "flag" else json.loads(value) if kind == "json" else value
        conn.execute("UPDATE page_state SET extra = ? WHERE id = ?", (canonical_json(data), state_id))
    for name, _ in PROMOTED:
        conn.execute(f"ALTER TABLE page_state DROP COLUMN {name}")
    conn.execute("UPDATE info SET value = '4' WHERE key = 'format_version'")


def downgrade_to_format4(target: Path) -> None:
    """Rewrite ``target`` in place as format 4 wrote it: the core's keys inside page_state.extra."""
    _rewrite(target, _as_format4)


def _as_format2(conn: sqlite3.Connection) -> None:
    """Format 2's referrers: a table of (commit, resource, page) rows written per commit, no resource index."""
    _as_format4(conn)
    rows = conn.execute(
        "SELECT commit_id, resource_url_id, page_url_id FROM commit_resource_referrer"
    ).fetchall()
    conn.execute("DROP VIEW commit_resource_referrer")
    conn.execute("DROP INDEX page_resource_resource_url_id_state_id")
    conn.execute(
        "CREATE TABLE commit_resource_referrer (commit_id INTEGER NOT NULL, resource_url_id INTEGER "
        "NOT NULL, page_url_id INTEGER NOT NULL, PRIMARY KEY (commit_id, resource_url_id, page_url_id), "
        "FOREIGN KEY (commit_id) REFERENCES commits (id) ON DELETE CASCADE) WITHOUT ROWID"
    )
    conn.execute(
        "CREATE INDEX commitresourcereferrer_commit_id_page_url_id "
        "ON commit_resource_referrer (commit_id, page_url_id)"
    )
    conn.executemany("INSERT INTO commit_resource_referrer VALUES (?, ?, ?)", rows)
    conn.execute("ALTER TABLE commit_resource DROP COLUMN referrers")
    for table, columns in (("commit_page", ("first_seen_at", "last_crawled_at")), ("crawl_error", ("at",))):
        _times_as_text(conn, table, columns)
    conn.execute("UPDATE info SET value = '2' WHERE key = 'format_version'")


def _times_as_text(conn: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> None:
    """Format 2 kept crawl times as ISO strings in TEXT columns."""
    ddl = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()[0]
    indexes = [
        r[0]
        for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
            (table,),
        )
    ]
    for column in columns:
        ddl = ddl.replace(f'"{column}" INTEGER', f'"{column}" TEXT')
    conn.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
        (f"old_{table}",),
    ).fetchall():
        conn.execute(f'DROP INDEX "{name}"')
    conn.execute(ddl)
    names = [r[1] for r in conn.execute(f"PRAGMA table_info(old_{table})")]
    values = [
        f"strftime('%Y-%m-%dT%H:%M:%fZ', {n} / 1000.0, 'unixepoch')" if n in columns else f'"{n}"'
        for n in names
    ]
    conn.execute(f"INSERT INTO {table} SELECT {', '.join(values)} FROM old_{table}")
    conn.execute(f"DROP TABLE old_{table}")
    for sql in indexes:
        conn.execute(sql)


def _rewrite(target: Path, change: Callable[[sqlite3.Connection], None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(target) as tar:
            tar.extract("archive.db", tmp, filter="data")
        db = Path(tmp) / "archive.db"
        conn = sqlite3.connect(db)
        with conn:
            change(conn)
        conn.execute("VACUUM")
        conn.close()
        with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as tar:
            tar.add(db, "archive.db")


def downgrade_to_format2(target: Path) -> None:
    """Rewrite ``target`` in place as format 2 wrote it: the referrers a table of their own."""
    _rewrite(target, _as_format2)


def downgrade_to_format1(target: Path) -> None:
    """Rewrite ``target`` in place as format 1 wrote it: no sent HTML, no raw href/position, no headings.

    The result's schema is the one format 1's writer created (checked against it once, by hand, with the
    format-1 code); the data is what a format-1 crawl would have stored for the same pages.
    """

    def as_format1(conn: sqlite3.Connection) -> None:
        _as_format2(conn)
        conn.execute("DROP TABLE heading")
        for table, column in (
            ("page_state", "source_sha256"),
            ("anchor", "raw_href"),
            ("anchor", "line"),
            ("anchor", "col"),
        ):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.execute("UPDATE info SET value = '1' WHERE key = 'format_version'")

    _rewrite(target, as_format1)
