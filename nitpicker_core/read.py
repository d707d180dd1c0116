"""The archive's read model for plugins: page fields by name and typed rows, never the archive's tables.

``from nitpicker_core import read`` then ``read.page_rows(reader, commit, ("url", "status", "error_kind"))``.
"""

from __future__ import annotations

from nitpicker_core.archive.report_rows import (
    NOTE_ITEMS,
    analysis_columns,
    report_link_texts,
    report_pages,
    report_referrers,
    report_resource_referrers,
    report_resources,
)
from nitpicker_core.archive.report_rows import SCOPES as REPORT_SCOPES
from nitpicker_core.archive.rows import (
    CORE_EXTRA_FIELDS,
    PAGE_FIELDS,
    AnalyzerSettingsRow,
    JsonLdRow,
    LinkRow,
    PageErrorRow,
    PageResourceRow,
    analyzer_settings,
    field_sql,
    jsonld_rows,
    links_to,
    page_error_rows,
    page_resource_rows,
    page_rows,
    stream,
)

__all__ = [
    "CORE_EXTRA_FIELDS",
    "PAGE_FIELDS",
    "AnalyzerSettingsRow",
    "JsonLdRow",
    "LinkRow",
    "PageErrorRow",
    "PageResourceRow",
    "analyzer_settings",
    "field_sql",
    "jsonld_rows",
    "links_to",
    "page_error_rows",
    "page_resource_rows",
    "page_rows",
    "stream",
    "NOTE_ITEMS",
    "REPORT_SCOPES",
    "analysis_columns",
    "report_link_texts",
    "report_pages",
    "report_referrers",
    "report_resource_referrers",
    "report_resources",
]
