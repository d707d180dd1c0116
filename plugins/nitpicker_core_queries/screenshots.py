"""Screenshot queries: what a page state's screenshot is (for `page-detail`) and an image by its hash."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_SHA256 = re.compile(r"[0-9a-f]{64}")
_INFO = "SELECT sha256, media_type, width, height, size FROM screenshot_blob WHERE sha256 = ?"


def _has_screenshots(archive: ArchiveReader) -> bool:
    # archives written before screenshots existed have no such table (readers never migrate)
    return bool(
        archive.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'page_screenshot'")
    )


def page_screenshot(archive: ArchiveReader, state_id: int) -> dict[str, Any] | None:
    """The screenshot of a page state: ``sha256``, ``media_type``, ``width``, ``height``, ``size`` (bytes) and
    the same for its ``thumbnail``; None when the crawl took none (no ``--screenshots``, or it failed)."""
    if not _has_screenshots(archive):
        return None
    rows = archive.execute("SELECT sha256, thumb_sha256 FROM page_screenshot WHERE state_id = ?", [state_id])
    if not rows:
        return None
    full, thumb = (archive.execute(_INFO, [sha]) for sha in (rows[0]["sha256"], rows[0]["thumb_sha256"]))
    if not full or not thumb:
        return None
    return {**dict(full[0]), "thumbnail": dict(thumb[0])}


def _screenshot(archive: ArchiveReader, commit: int, sha256: str) -> dict[str, Any]:
    if not _SHA256.fullmatch(sha256):
        raise UsageError("parameter 'sha256': expected 64 lower-case hex digits (a hash `page-detail` names)")
    rows = (
        archive.execute(_INFO.replace("size FROM", "size, data FROM"), [sha256])
        if _has_screenshots(archive)
        else []
    )
    if not rows:
        raise UsageError(f"no screenshot {sha256} in {archive.name}")
    row = dict(rows[0])
    return {**row, "data": base64.b64encode(row["data"]).decode("ascii")}


QUERIES = [
    Query(
        "screenshot",
        "One screenshot or thumbnail (taken by `crawl --screenshots`) by the `sha256` that "
        "`page-detail`'s `screenshot` names: `media_type`, `width`, `height`, `size` and the image as "
        "base64 `data`.",
        _screenshot,
        {"sha256": {"type": "string", "description": "the image's content hash (64 hex digits)"}},
        required=("sha256",),
        order=14,
    ),
]
