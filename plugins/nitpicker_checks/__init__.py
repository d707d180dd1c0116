"""The built-in crawl checks: prioritised findings from what the crawl stored (links, pages, headers, images)."""

from __future__ import annotations

from typing import Any

from nitpicker_core import hookimpl

from . import links, pages, security

CHECKS = [*links.CHECKS, *pages.CHECKS, *security.CHECKS]


@hookimpl
def register_checks(register: Any) -> None:
    for check in CHECKS:
        register(check)
