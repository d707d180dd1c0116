"""Per-row crawl times: milliseconds since the epoch in the archive (format 3), ISO 8601 strings to readers.

Every commit has a row per page (``commit_page``) and per crawl error, written again by an unchanged
re-crawl, so their times are integers: 6 bytes where the ISO string took 24. Readers get the same strings
as before (``2026-12-02T04:55:00.123Z``); format 1 and 2 archives stored the strings themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

_ISO = "strftime('%Y-%m-%dT%H:%M:%fZ', {column} / 1000.0, 'unixepoch')"
FIRST_INTEGER_FORMAT = 3


def to_ms(iso: str | None = None) -> int:
    """Milliseconds since the epoch of an ISO 8601 time (a naive one is UTC), now when None."""
    moment = datetime.now(UTC) if iso is None else datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def iso_sql(archive: Any, column: str) -> str:
    """SQL reading ``column`` (a crawl time of commit_page or crawl_error) as an ISO string, any format."""
    if getattr(archive, "format_version", FIRST_INTEGER_FORMAT) >= FIRST_INTEGER_FORMAT:
        return _ISO.format(column=column)
    return column


def ms_from_iso_sql(column: str) -> str:
    """SQL turning a stored ISO string into milliseconds (upgrading format 2)."""
    return f"CAST(ROUND((julianday({column}) - 2440587.5) * 86400000.0) AS INTEGER)"
