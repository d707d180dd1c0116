"""Page screenshots in the archive: images stored once by content hash, one row per page state naming them."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable

from nitpicker_core.records import Screenshot

TABLES = ("screenshot_blob", "page_screenshot")


def store(conn: sqlite3.Connection, shots: Iterable[tuple[int, Screenshot]]) -> int:
    """Link each page state to its screenshot, storing images not stored yet; returns the states linked.

    A state that has a screenshot keeps it: the same page state is the same page, and the first picture
    of it is the one every commit holding that state shows (``crawl --update`` takes states over as they are).
    """
    blobs: dict[str, tuple[str, int, int, bytes]] = {}
    links = []
    for state_id, shot in shots:
        full = hashlib.sha256(shot.image).hexdigest()
        thumb = hashlib.sha256(shot.thumbnail).hexdigest()
        blobs[full] = (shot.media_type, shot.width, shot.height, shot.image)
        blobs[thumb] = (shot.media_type, shot.thumb_width, shot.thumb_height, shot.thumbnail)
        links.append((state_id, full, thumb))
    if not links:
        return 0
    conn.executemany(
        "INSERT OR IGNORE INTO screenshot_blob (sha256, media_type, width, height, size, data) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(sha, kind, w, h, len(data), data) for sha, (kind, w, h, data) in blobs.items()],
    )
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO page_screenshot (state_id, sha256, thumb_sha256) VALUES (?, ?, ?)", links
    )
    return conn.total_changes - before


def gc(conn: sqlite3.Connection) -> int:
    """Delete the images no page state names any more (their states' rows went with the states)."""
    return conn.execute(
        "DELETE FROM screenshot_blob WHERE sha256 NOT IN "
        "(SELECT sha256 FROM page_screenshot UNION SELECT thumb_sha256 FROM page_screenshot)"
    ).rowcount
