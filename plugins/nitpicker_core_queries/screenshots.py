"""Screenshot queries: what a page state's screenshot is (for `page-detail`) and an image by its hash."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError, read

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

_SHA256 = re.compile(r"[0-9a-f]{64}")


def page_screenshot(archive: ArchiveReader, state_id: int) -> dict[str, Any] | None:
    """The screenshot of a page state: ``sha256``, ``media_type``, ``width``, ``height``, ``size`` (bytes) and
    the same for its ``thumbnail``; None when the crawl took none (no ``--screenshots``, or it failed)."""
    found = read.page_screenshot(archive, state_id)
    if found is None:
        return None
    full, thumb = (shot._asdict() for shot in found)
    for shot in (full, thumb):
        del shot["data"]
    return {**full, "thumbnail": thumb}


def _screenshot(archive: ArchiveReader, commit: int, sha256: str) -> dict[str, Any]:
    if not _SHA256.fullmatch(sha256):
        raise UsageError("parameter 'sha256': expected 64 lower-case hex digits (a hash `page-detail` names)")
    found = read.screenshot(archive, sha256)
    if found is None:
        raise UsageError(f"no screenshot {sha256} in {archive.name}")
    return {**found._asdict(), "data": base64.b64encode(found.data or b"").decode("ascii")}


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
