"""Content hashes of logical rows: canonical JSON of what a row says, never of ids or timestamps."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# What json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str) builds on every
# call, built once: the same encoder (and text), without a new one for each of the many small values of a page
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal content always gives equal text."""
    return _CANONICAL.encode(value)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(payload: dict[str, Any]) -> str:
    """The state hash of a page or resource payload (URL strings inside, never row ids)."""
    return sha256_text(canonical_json(payload))


def to_json(value: Any) -> str:
    """JSON for storage columns; canonical too, so stored text is stable across runs."""
    return canonical_json(value)
