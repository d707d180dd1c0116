"""The built-in crawl checks: prioritised findings from what the crawl stored (links, pages, headers, images)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from nitpicker_core import hookimpl, load_translations

from . import links, pages, security

# each check's title, description and fix in other languages, from messages/<lang>.json
_I18N = load_translations(Path(__file__).parent / "messages")
CHECKS = [replace(c, i18n=_I18N.get(c.id, c.i18n)) for c in (*links.CHECKS, *pages.CHECKS, *security.CHECKS)]


@hookimpl
def register_checks(register: Any) -> None:
    for check in CHECKS:
        register(check)
