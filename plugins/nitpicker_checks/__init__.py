"""The built-in crawl checks: prioritised findings from what the crawl stored (links, pages, headers, images)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nitpicker_core import Check, Register, RegisterSetting, hookimpl, load_translations

from . import (
    canonicals,
    directives,
    duplicates,
    hreflang,
    javascript,
    links,
    pages,
    pagination,
    security,
    settings,
    sitemaps,
    where,
)

# check id -> {language: {title, description, fix}}, from messages/<lang>.json
TRANSLATIONS = load_translations(Path(__file__).with_name("messages"))
CHECKS = [
    replace(check, i18n=TRANSLATIONS.get(check.id, {}), element=where.LOCATORS.get(check.id))
    for check in (
        *links.CHECKS,
        *directives.CHECKS,
        *pages.CHECKS,
        *canonicals.CHECKS,
        *security.CHECKS,
        *sitemaps.CHECKS,
        *hreflang.CHECKS,
        *pagination.CHECKS,
        *duplicates.CHECKS,
        *javascript.CHECKS,
    )
]


@hookimpl
def register_checks(register: Register[Check]) -> None:
    for check in CHECKS:
        register(check)


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    settings.register(register)
    duplicates.register_settings(register)
    javascript.register_settings(register)
