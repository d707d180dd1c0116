"""The built-in report sheets (the Cover, Issues, Issue URLs … the Appendix) and the queries they stream from."""

from __future__ import annotations

from nitpicker_core import Query, Register, Sheet, hookimpl

from . import cover, issue_urls, issues, pages, queries, relations, resources

SHEETS = (
    *cover.SHEETS,
    *issues.SHEETS,
    *issue_urls.SHEETS,
    *pages.SHEETS,
    *relations.SHEETS,
    *resources.SHEETS,
)


@hookimpl
def register_sheets(register: Register[Sheet]) -> None:
    for sheet in SHEETS:
        register(sheet)


@hookimpl
def register_queries(register: Register[Query]) -> None:
    for query in queries.QUERIES:
        register(query)
