"""Shared pieces of the built-in queries: paging and sorting parameters (the paging itself is the read model's)."""

from __future__ import annotations

from typing import Any

from nitpicker_core import read

PAGING: dict[str, dict[str, Any]] = {
    "limit": {
        "type": "integer",
        "default": 100,
        "minimum": 1,
        "maximum": 10000,
        "description": "rows per page",
    },
    "offset": {"type": "integer", "default": 0, "minimum": 0, "description": "rows to skip"},
}


def sorting(columns: dict[str, str], default: str) -> dict[str, dict[str, Any]]:
    """``sort`` (one of ``columns``' keys) and ``order`` parameters for a list query."""
    return {
        "sort": {
            "type": "string",
            "enum": sorted(columns),
            "default": default,
            "description": "column to sort by",
        },
        "order": {
            "type": "string",
            "enum": ["asc", "desc"],
            "default": "asc",
            "description": "sort direction",
        },
    }


order_by = read.order_by
page_of = read.page_of
paged = read.paged


external_flag = read.external_flag
status_class_sql = read.status_class_sql

STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx", "failed")


def status_class_param(failed: str) -> dict[str, dict[str, Any]]:
    """The ``status_class`` parameter; ``failed`` says what the class ``failed`` means for the query's rows."""
    return {
        "status_class": {
            "type": "string",
            "enum": list(STATUS_CLASSES),
            "description": f"a class of status codes (4xx: 400 to 499), or failed ({failed})",
        }
    }
