"""`nitpicker report ARCHIVE --to NAME`: write the report sheets of a commit to a destination (Sheets, XLSX, CSV, …)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.destinations import TO_HELP, DestinationHelp, destination_options, select_destination
from nitpicker_cli.options import choose_from_menu
from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.errors import UsageError
from nitpicker_core.report import (
    apply_compare,
    check_compare,
    prepare_destination,
    run_report,
    select_sheets,
    with_report_options,
)

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def choose_interactively(names: list[str], descriptions: dict[str, str]) -> list[str]:
    """Ask which sheets to write; an empty answer writes them all."""
    return choose_from_menu([(n, descriptions.get(n, "")) for n in names], "Sheets to write", names, "all")


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("report", cls=DestinationHelp)
    @destination_options(pm, "report")
    @click.argument("archive", type=click.Path(path_type=Path))
    @click.option("--to", "to", metavar="NAME", help=TO_HELP)
    @click.option(
        "--sheet", "-S", metavar="URL", help="Write to this Google spreadsheet (--to google-sheets)."
    )
    @click.option(
        "--credentials",
        "-C",
        metavar="FILE",
        help="Google service account key, authorized-user file or OAuth client, with --sheet "
        "(default: credentials.json).",
    )
    @click.option("--xlsx", metavar="FILE", help="Write one .xlsx workbook (--to xlsx).")
    @click.option("--csv", "csv_dir", metavar="DIR", help="Write one CSV file per sheet into DIR (--to csv).")
    @click.option(
        "--all", "all_", is_flag=True, help="Write every sheet (the default when not on a terminal)."
    )
    @click.option(
        "--only",
        multiple=True,
        metavar="NAME",
        help="Write only this sheet (repeatable; case-insensitive, e.g. --only 'Page List').",
    )
    @click.option("--commit", default=None, help="Commit id to report (default: HEAD).")
    @click.option(
        "--compare",
        metavar="COMMIT",
        default=None,
        help="Commit to compare with, for every destination: new, fixed and regressed findings since it "
        "(default: the previous complete commit; --html-compare/--pdf-compare win).",
    )
    @click.option(
        "--lang",
        metavar="LANG",
        default=None,
        help="Language of the html/pdf report: en or ja (--html-lang/--pdf-lang win; sheets are in English).",
    )
    @click.option(
        "--dedupe-resources",
        is_flag=True,
        help="Group Resources by canonical URL, status and type, with Count and Query Pattern.",
    )
    @click.option(
        "--limit",
        "-l",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Rows (or pages) read per query call while streaming (default 2000).",
    )
    def report(
        archive: Path,
        all_: bool,
        only: tuple[str, ...],
        commit: str | None,
        compare: str | None,
        lang: str | None,
        dedupe_resources: bool,
        limit: int | None,
        **kw: Any,
    ) -> None:
        """Write the report sheets of ARCHIVE (Page List, Links, Resources, Images, Violations, …).

        Give one destination: --to NAME with that destination's options (--to xlsx --xlsx-file
        out.xlsx), or a shorthand: --sheet URL, --xlsx FILE or --csv DIR. On a terminal without
        --all/--only you pick the sheets; otherwise every sheet is written.
        """
        app = get_app()
        app.config()
        chosen_destination = select_destination(kw)
        if chosen_destination is None:
            raise UsageError("give a destination: --to NAME, --sheet URL, --xlsx FILE or --csv DIR")
        name, values, shown = chosen_destination
        # a bad or unwritable destination fails before any sheet is rendered, named as it was given
        values = with_report_options(app.pm, name, values, compare=compare, lang=lang)
        destination, options = prepare_destination(app.pm, name, values, shown=shown)
        apply_compare(options, compare)
        options.update({k: v for k, v in {"dedupe_resources": dedupe_resources, "batch": limit}.items() if v})
        options.update(silent=app.silent, interactive=sys.stdin.isatty())
        chosen = select_sheets(app.pm, only)  # unknown names fail before anything is opened
        names = [s.name for s in chosen] if only else None
        with open_archive(archive) as reader:
            reader.resolve(commit)
            check_compare(reader, options.get("compare"))  # before a sheet is picked or a file written
            # a destination composing its own document (html, pdf) writes no sheet: nothing to pick
            pick = not only and not all_ and not destination.uses_report
            if pick and sys.stdin.isatty() and sys.stderr.isatty():
                names = choose_interactively(
                    [s.name for s in chosen], {s.name: s.description for s in chosen}
                )
            result = run_report(app.pm, reader, name, options, names, commit)
        emit_json(result)
