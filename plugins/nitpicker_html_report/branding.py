"""An agency's branding on the report: title, logo (embedded as a data URI), accent colour, footer line."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from nitpicker_core import UsageError

MAX_LOGO = 2 * 1024 * 1024  # bytes
ACCENT = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
# what the file starts with → its media type (an SVG is text: its root element is looked for)
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(head: bytes) -> str | None:
    """The media type of an image file from its first bytes, or None when it is no image we embed."""
    for signature, kind in SIGNATURES:
        if head.startswith(signature):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<svg", b"<?xml")) and b"<svg" in text:
        return "image/svg+xml"
    return None


def check_branding(options: dict[str, Any]) -> None:
    """Refuse, in one line and before any work, a logo that is missing, no image or over 2 MB, or an accent
    colour that is not ``#rgb``/``#rrggbb``."""
    logo = options.get("logo")
    if logo:
        path = Path(str(logo))
        shown = path.name if path.is_absolute() else str(logo)
        if not path.is_file():
            raise UsageError(f"logo file not found: {shown}")
        size = path.stat().st_size
        if size > MAX_LOGO:
            raise UsageError(f"logo {shown} is {size / 1024 / 1024:.1f} MB: the limit is 2 MB")
        with path.open("rb") as handle:
            head = handle.read(1024)
        if image_type(head) is None:
            raise UsageError(f"logo {shown} is not a PNG, JPEG, GIF, WebP or SVG image")
    accent = options.get("accent")
    if accent and not ACCENT.fullmatch(str(accent)):
        raise UsageError(f"accent colour {accent!r} is not #rgb or #rrggbb (e.g. #1f4e79)")


def logo_uri(path: str) -> str:
    """The logo as a ``data:`` URI, so the report stays one file."""
    data = Path(path).read_bytes()
    kind = image_type(data[:1024]) or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
