"""The built-in queries; each module of this package lists its own in ``QUERIES``."""

from __future__ import annotations

from nitpicker_core import Query, Register, hookimpl

from . import (
    analysis,
    analyzer_errors,
    archive_info,
    changes,
    crawlers,
    findings,
    headings,
    history,
    issues,
    links,
    lookup,
    pages,
    resources,
    screenshots,
    sitemaps,
    tags,
)

MODULES = (
    archive_info,
    history,
    issues,
    pages,
    links,
    resources,
    findings,
    analyzer_errors,
    tags,
    headings,
    analysis,
    lookup,
    screenshots,
    changes,
    sitemaps,
    crawlers,
)


@hookimpl
def register_queries(register: Register[Query]) -> None:
    for module in MODULES:
        for query in module.QUERIES:
            register(query)
