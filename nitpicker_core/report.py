"""Reports: collect the registered sheets, render their rows from one commit, hand them to a destination."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import ArchiveError, UsageError
from nitpicker_core.query import query_registry, run_query
from nitpicker_core.registries import (
    analyzer_registry,
    destination_registry,
    section_registry,
    sheet_registry,
)
from nitpicker_core.registry import Registry
from nitpicker_core.types import OUTPUT_TYPES, Destination, DestinationOption, ReportSection, Sheet
from nitpicker_core.writable import check_directory_destination, check_file_destination

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader
    from nitpicker_core.plugins import NitpickerPluginManager

#: the languages of ``nitpicker report --lang`` (the html/pdf reports' labels; the sheets are in English)
REPORT_LANGUAGES = ("en", "ja")
DEFAULT_BATCH = 2000  # rows (or outer entities) read per query call while a sheet streams
KEPT_ANSWERS = 8  # answers of ReportContext.query kept for the run (small ones: sheets stream large ones)


class ReportContext:
    """What a sheet with ``uses_report`` receives: registered queries over the report's commit, and options."""

    def __init__(
        self,
        pm: NitpickerPluginManager,
        reader: ArchiveReader,
        commit: int,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.reader = reader
        self.commit = commit
        self.options = dict(options or {})
        self.batch = int(self.options.get("batch") or DEFAULT_BATCH)
        self._pm = pm
        self._queries = query_registry(pm)
        self._answers: OrderedDict[str, Any] = OrderedDict()

    def _analyzers(self) -> list[Any]:
        try:
            return list(analyzer_registry(self._pm))
        except UsageError:
            return []

    def sections(self) -> list[ReportSection]:
        """The registered HTML/PDF report sections, in order (a plugin registering a bad one is left out)."""
        return list(section_registry(self._pm))

    def column_labels(self) -> dict[tuple[str, str], str]:
        """(analyzer, column key) → the column's label, for the analyzers installed now."""
        return {(a.name, c.key): c.label for a in self._analyzers() for c in a.columns}

    def analyzer_labels(self) -> dict[str, str]:
        """Analyzer name → its short label for column headers: the label up to its first ``:``.

        ``"axe: accessibility (axe-core in Chromium)"`` → ``"Axe"``; one without a label by its name. Only
        the analyzers installed now are known.
        """
        return {a.name: short_label(a.label or a.name) for a in self._analyzers()}

    def query(self, name: str, **params: Any) -> Any:
        """Run one registered query (parameters validated by its schema) on the report's commit.

        The last few answers are kept for the run: the Cover and the Issues sheet both read ``issues``,
        which can cost seconds on a large commit. ``run`` and ``stream`` never keep an answer.
        """
        key = json.dumps([name, params], sort_keys=True, default=str)
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        answer = self.run(name, **params)
        self._answers[key] = answer
        if len(self._answers) > KEPT_ANSWERS:
            self._answers.popitem(last=False)
        return answer

    def run(self, name: str, **params: Any) -> Any:
        """One call of a registered query on the report's commit, its answer not kept."""
        return run_query(self._queries, self.reader, name, params, self.commit)

    def run_at(self, commit: int, name: str, **params: Any) -> Any:
        """One call of a registered query on another commit of the archive (a trend across commits)."""
        return run_query(self._queries, self.reader, name, params, commit)

    def stream(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated query, one call per batch, so memory holds one batch at a time.

        Keyset queries answer ``next_after`` (passed back as ``after``); the others ``next_offset``.
        """
        schema = self._queries[name].params
        limit = min(self.batch, int(schema.get("limit", {}).get("maximum", self.batch)))
        params = {**params, "limit": limit}
        while True:
            page = self.run(name, **params)
            yield from page["items"]
            if page.get("next_after") is not None:
                params["after"] = page["next_after"]
            elif page.get("next_offset") is not None:
                params["offset"] = page["next_offset"]
            else:
                return


def short_label(label: str) -> str:
    """A header-sized name: the text before the first ``:``, its first letter upper-case."""
    head = label.split(":", 1)[0].strip() or label.strip()
    return head[:1].upper() + head[1:]


def render_sheets(
    sheets: Iterable[Sheet], reader: ArchiveReader, commit: int, report: ReportContext | None = None
) -> Iterable[tuple[Sheet, Iterable[list[Any]]]]:
    """Each sheet (with its final columns) and a lazy iterator of its rows, so large sheets stream."""
    for sheet in sheets:
        if sheet.extra_columns is not None:
            sheet = dataclasses.replace(
                sheet, columns=(*sheet.columns, *sheet.extra_columns(reader, commit, report))
            )
        source = sheet.rows(reader, commit, report) if sheet.uses_report else sheet.rows(reader, commit)
        yield sheet, (list(row) for row in source)


def select_sheets(pm: NitpickerPluginManager, names: Iterable[str] | None) -> list[Sheet]:
    """The sheets to render: the named ones (case-insensitive) in registry order, or all of them."""
    registry = sheet_registry(pm)
    if not len(registry):
        raise UsageError("no report sheet is registered (see `nitpicker plugins`)")
    wanted = list(names or [])
    if not wanted:
        return list(registry)
    by_key = {s.name.casefold(): s for s in registry}
    unknown = [n for n in wanted if n.casefold() not in by_key]
    if unknown:
        raise UsageError(f"unknown sheet {unknown[0]!r} (sheets: {', '.join(s.name for s in registry)})")
    keys = {n.casefold() for n in wanted}
    return [s for s in registry if s.name.casefold() in keys]


def unknown_destination(pm: NitpickerPluginManager, targets: Registry[Destination], name: str) -> UsageError:
    """The one-line error for ``--to NAME`` that names no registered destination: the closest names first."""
    info = getattr(pm, "infos", {}).get(name)
    if info is not None and info.status != "enabled":  # its plugin is off: say so rather than guess
        return UsageError(f"report destination {name!r} is not available: plugin {name} is {info.status}")
    known = targets.names()
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return UsageError(
        f"unknown report destination {name!r} ({hint}destinations: {', '.join(known) or 'none'})"
    )


def check_destination_paths(
    destination: Destination, options: Mapping[str, Any], shown: Mapping[str, str] | None = None
) -> None:
    """Every path option is usable before any work: a ``file`` exists, an output's directory takes files.

    ``shown`` maps an option key to the flag the user typed (a shorthand such as ``--credentials``).
    """
    for option in destination.options:
        value = options.get(option.key)
        if value is None or option.type not in ("file", *OUTPUT_TYPES):
            continue
        path = Path(value)
        named = path.name if path.is_absolute() else str(value)  # as the user gave it, never an absolute path
        if option.type == "file" and not path.is_file():
            flag = (shown or {}).get(option.key) or destination.flag(option.key)
            raise UsageError(f"{option.key} file not found: {named} (give {flag} FILE)")
        if option.type == "output-file":
            check_file_destination(path, named)
        elif option.type == "output-dir":
            check_directory_destination(path, named or str(value))


def prepare_destination(
    pm: NitpickerPluginManager,
    name: str,
    given: Mapping[str, Any],
    *,
    check_paths: bool = True,
    shown: Mapping[str, str] | None = None,
) -> tuple[Destination, dict[str, Any]]:
    """Destination ``name`` and its options from ``given`` (option key → value; None means not given).

    Defaults fill what was not given; a missing required option, an unknown key, a bad path (unless
    ``check_paths`` is False) or a value the destination's own ``check`` refuses is one ``UsageError``,
    raised before anything is opened or rendered.
    """
    targets = destination_registry(pm)
    if name not in targets:
        raise unknown_destination(pm, targets, name)
    destination = targets[name]
    declared = {o.key: o for o in destination.options}
    options = {key: value for key, value in given.items() if value is not None}
    for option in destination.options:
        if options.get(option.key) is None and option.default is not None:
            options[option.key] = option.default
    missing = [o for o in destination.options if o.required and options.get(o.key) in (None, "")]
    if missing:
        flags = " and ".join(f"{destination.flag(o.key)} {_metavar(o)}" for o in missing)
        raise UsageError(f"destination {name} needs {flags}")
    unknown = sorted(set(given) - set(declared))
    if unknown and destination.options:  # a destination declaring nothing takes free-form options
        raise UsageError(f"destination {name} has no option {unknown[0]!r} (options: {', '.join(declared)})")
    if destination.check is not None:
        destination.check(options)
    if check_paths:
        check_destination_paths(destination, options, shown)
    return destination, options


def with_report_options(
    pm: NitpickerPluginManager,
    name: str,
    given: Mapping[str, Any],
    *,
    compare: str | None = None,
    lang: str | None = None,
) -> dict[str, Any]:
    """``given`` (a destination's option values) plus the run's ``--compare`` and ``--lang``.

    A destination declaring ``compare`` or ``lang`` (html, pdf) takes them as its own options unless its own
    flag (``--html-lang``) was given: that one wins. ``compare`` also reaches the sheets through the report's
    options (see ``apply_compare``). An unknown language is one ``UsageError``.
    """
    if lang is not None and lang not in REPORT_LANGUAGES:
        raise UsageError(f"unknown report language {lang!r} (languages: {', '.join(REPORT_LANGUAGES)})")
    values = dict(given)
    targets = destination_registry(pm)
    declared = {o.key for o in targets[name].options} if name in targets else set()
    for key, value in (("compare", compare), ("lang", lang)):
        if value is not None and key in declared and values.get(key) is None:
            values[key] = value
    return values


def apply_compare(options: dict[str, Any], compare: str | None) -> dict[str, Any]:
    """``options`` with the run's ``compare`` commit for the sheets, unless the destination's own is set."""
    if compare is not None and options.get("compare") in (None, ""):
        options["compare"] = compare
    return options


def check_compare(reader: ArchiveReader, compare: Any) -> None:
    """A ``compare`` commit the archive does not hold is one ``UsageError``, before anything is written."""
    if compare in (None, ""):
        return
    try:
        reader.resolve(str(compare))
    except ArchiveError as exc:
        raise UsageError(f"cannot compare with commit {compare}: {exc}") from None


def _metavar(option: DestinationOption) -> str:
    return {"file": "FILE", "output-file": "FILE", "output-dir": "DIR"}.get(option.type, option.type.upper())


def local_target(destination: Destination, options: Mapping[str, Any]) -> str | None:
    """The file or directory the destination writes (its first output option's value), if it writes one."""
    for option in destination.options:
        if option.type in OUTPUT_TYPES and options.get(option.key):
            return str(options[option.key])
    return None


def describe_target(destination: Destination, options: Mapping[str, Any]) -> str:
    """Where the report goes, for a run summary: the destination's ``target``, the output's name, or its name."""
    if destination.target is not None:
        return str(destination.target(options))
    local = local_target(destination, options)
    return Path(local).name if local else destination.name


def run_report(
    pm: NitpickerPluginManager,
    reader: ArchiveReader,
    destination: str,
    options: dict[str, Any],
    sheets: list[str] | None = None,
    commit: Any = None,
) -> Any:
    """Render the selected sheets (default: all) of ``commit`` and write them to ``destination``.

    ``options`` goes to the destination and to the sheets (``dedupe_resources``, ``batch``, ``compare``).
    A ``compare`` commit the archive does not hold fails here, before the destination writes anything.
    """
    chosen = select_sheets(pm, sheets)
    targets = destination_registry(pm)
    if destination not in targets:
        raise unknown_destination(pm, targets, destination)
    target = targets[destination]
    resolved = reader.resolve(commit)
    check_compare(reader, options.get("compare"))
    report = ReportContext(pm, reader, resolved, options)
    if target.uses_report:
        return target.write(render_sheets(chosen, reader, resolved, report), options, report)
    return target.write(render_sheets(chosen, reader, resolved, report), options)


#: The shorthand flags: each selects a destination and sets one of its options (``--xlsx F`` is
#: ``--to xlsx --xlsx-file F``); ``--credentials`` goes with ``--sheet``.
SHORTHANDS: dict[str, tuple[str, str]] = {
    "--sheet": ("google-sheets", "url"),
    "--xlsx": ("xlsx", "file"),
    "--csv": ("csv", "dir"),
}


def destination_from_flags(
    sheet: str | None = None,
    xlsx: str | None = None,
    csv: str | None = None,
    credentials: str | None = None,
    **extra: Any,
) -> tuple[str, dict[str, Any]]:
    """``--sheet URL`` / ``--xlsx FILE`` / ``--csv DIR`` (exactly one) → (destination name, options).

    ``extra`` (``dedupe_resources``, ``batch``) is copied into the options; ``None`` values are dropped.
    """
    given = [(flag, value) for flag, value in zip(SHORTHANDS, (sheet, xlsx, csv), strict=True) if value]
    if not given:
        raise UsageError("give a destination: --to NAME, --sheet URL, --xlsx FILE or --csv DIR")
    if len(given) > 1:
        raise UsageError(f"give one destination, not {' and '.join(flag for flag, _ in given)}")
    options = {k: v for k, v in extra.items() if v is not None}
    flag, value = given[0]
    name, key = SHORTHANDS[flag]
    options[key] = value
    if name == "google-sheets" and credentials:
        options["credentials"] = credentials
    return name, options
