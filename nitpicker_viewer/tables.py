"""Paged, sortable, filterable tables over one registered query; page, size, sort and filters live in the URL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import abort, request, url_for

from nitpicker_viewer.app import PAGE_SIZES, query
from nitpicker_viewer.export import FORMATS, Shape, export_response

DEFAULT_PAGE_SIZE = 50
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx", "failed")


@dataclass(frozen=True)
class Col:
    """One column: ``key`` in the query's rows, ``label`` a message key, ``sort`` the query's sort name."""

    key: str
    label: str
    sort: str | None = None
    kind: str = "text"  # text | page (link to the page view) | resource | num | bool | list | status


@dataclass(frozen=True)
class Filter:
    """One filter field of a table's form; its value goes to the query as parameter ``param``."""

    name: str
    label: str
    kind: str = "text"  # text | number | select | check | status (a code or a class: 4xx, failed)
    options: Sequence[tuple[str, str]] = ()  # (value, message key or text) for selects; "" means any
    param: str | None = None

    def value(self) -> str:
        return request.args.get(self.name, "")

    def choices(self) -> Sequence[tuple[str, str]]:
        """The options, plus the URL's value when the data no longer offers it (a shared link stays shown)."""
        value = self.value()
        if value and value not in {option for option, _ in self.options}:
            return (*self.options, (value, value))
        return self.options

    def params(self) -> dict[str, str]:
        """What this filter's value asks of the query (a status filter's class goes to ``status_class``)."""
        value = self.value()
        if value == "":
            return {}
        if self.kind == "check":
            return {self.param or self.name: "true"}
        if self.kind == "status":
            if value.lower() in STATUS_CLASSES:
                return {"status_class": value.lower()}
            if not (value.isascii() and value.isdigit()):
                abort(
                    400,
                    f"parameter {self.name!r} must be a status code or one of {', '.join(STATUS_CLASSES)}",
                )
        return {self.param or self.name: value}


def status_filter(codes: Sequence[Any] = (), name: str = "status") -> Filter:
    """A status picker: any, the classes (2xx … 5xx, failed), then each code the data has."""
    options = (
        ("", "any"),
        *((c, "status_class." + c) for c in STATUS_CLASSES),
        *((str(c), str(c)) for c in codes),
    )
    return Filter(name, "col.status", "status", options)


@dataclass
class Table:
    id: str
    caption: str
    columns: Sequence[Col]
    rows: list[dict[str, Any]]
    total: int
    page: int
    page_size: int
    sort: str | None
    order: str
    filters: Sequence[Filter] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    @property
    def first_row(self) -> int:
        return 0 if not self.rows else (self.page - 1) * self.page_size + 1

    @property
    def last_row(self) -> int:
        return (self.page - 1) * self.page_size + len(self.rows)

    def url(self, **changes: Any) -> str:
        """This view's URL with ``changes`` applied to the current query string (None removes a key)."""
        args: dict[str, Any] = request.args.to_dict(flat=False)  # repeated keys (analyzer columns) stay
        for key, value in changes.items():
            if value is None:
                args.pop(key, None)
            else:
                args[key] = str(value)
        return url_for(request.endpoint or "", **(request.view_args or {}), **args)

    def export_url(self, fmt: str) -> str:
        """This view's whole filtered result as ``fmt`` (csv or json)."""
        return self.url(export=fmt, page=None, pageSize=None)

    def page_url(self, page: int) -> str:
        return self.url(page=page if page > 1 else None)

    def sort_url(self, col: Col) -> str:
        order = "desc" if self.sort == col.sort and self.order == "asc" else "asc"
        return self.url(sort=col.sort, order=order, page=None)

    def aria_sort(self, col: Col) -> str | None:
        if col.sort is None or col.sort != self.sort:
            return None
        return "ascending" if self.order == "asc" else "descending"


def _int_arg(name: str, default: int, lowest: int, highest: int) -> int:
    try:
        value = int(request.args.get(name, default))
    except ValueError:
        return default
    return min(max(value, lowest), highest)


def paged_table(
    table_id: str,
    caption: str,
    name: str,
    columns: Sequence[Col],
    *,
    filters: Sequence[Filter] = (),
    params: Mapping[str, Any] | None = None,
    sortable: bool = True,
    default_sort: str | None = None,
    shape: Shape | None = None,
) -> Table:
    """Run query ``name`` for the page the URL asks for and wrap the rows for the ``table`` macro.

    ``shape`` completes a list of the query's rows for the view (and for its export). With ``?export=csv``
    or ``json`` the whole filtered result is streamed instead: the caller's view returns it as it is.
    """
    page = _int_arg("page", 1, 1, 10**9)
    size = _int_arg("pageSize", DEFAULT_PAGE_SIZE, 1, max(PAGE_SIZES))
    sorts = {col.sort for col in columns if col.sort}
    sort = request.args.get("sort") if request.args.get("sort") in sorts else default_sort
    order = "desc" if request.args.get("order") == "desc" else "asc"
    given: dict[str, Any] = dict(params or {})
    for flt in filters:
        given.update(flt.params())
    if sortable and sort:
        given.update(sort=sort, order=order)
    fmt = request.args.get("export")
    if fmt:
        if fmt not in FORMATS:
            abort(400, f"parameter 'export' must be one of {', '.join(FORMATS)}")
        abort(export_response(fmt, table_id, name, columns, given, shape))
    data = query(name, limit=size, offset=(page - 1) * size, **given)
    rows = shape(data["items"]) if shape else data["items"]
    return Table(
        table_id,
        caption,
        columns,
        rows,
        data["total"],
        page,
        size,
        sort if sortable else None,
        order,
        filters,
        extra=data,
    )
