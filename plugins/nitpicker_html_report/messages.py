"""The report's own labels in English and Japanese (messages/*.json); check texts come translated from `issues`."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "ja")
_DIR = Path(__file__).parent / "messages"


@functools.cache
def _load(lang: str) -> dict[str, str]:
    return dict(json.loads((_DIR / f"{lang}.json").read_text(encoding="utf-8")))


def text(lang: str, key: str, **values: Any) -> str:
    """Label ``key`` in ``lang`` (English where missing), ``{name}`` fields filled from ``values``."""
    found = _load(lang).get(key) or _load("en").get(key) or key
    return found.format(**values) if values else found
