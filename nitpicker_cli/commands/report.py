"""`nitpicker report ARCHIVE`: write the report sheets of a commit to Google Sheets, an XLSX file or CSV files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.options import choose_from_menu
from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.errors import UsageError
from nitpicker_core.report import destination_from_flags, run_report, select_sheets
from nitpicker_core.writable import check_directory_destination, check_file_destination


def choose_interactively(names: list[str], descriptions: dict[str, str]) -> list[str]:
    """Ask which sheets to write; an empty answer writes them all."""
    return choose_from_menu([(n, descriptions.get(n, "")) for n in names], "Sheets to write", names, "all")


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("report")
    @click.argument("archive", type=click.Path(path_type=Path))
    @click.option("--sheet", "-S", metavar="URL", help="Write to this Google spreadsheet (one worksheet per sheet).")
    @click.option("--credentials", "-C", metavar="FILE", default="credentials.json", show_default=True,
                  help="Google service account key, authorized-user file or OAuth client (with --sheet).")
    @click.option("--xlsx", metavar="FILE", help="Write one .xlsx workbook.")
    @click.option("--csv", "csv_dir", metavar="DIR", help="Write one CSV file per sheet into DIR.")
    @click.option("--all", "all_", is_flag=True, help="Write every sheet (the default when not on a terminal).")
    @click.option("--only", multiple=True, metavar="NAME",
                  help="Write only this sheet (repeatable; case-insensitive, e.g. --only 'Page List').")
    @click.option("--commit", default=None, help="Commit id to report (default: HEAD).")
    @click.option("--dedupe-resources", is_flag=True,
                  help="Group Resources by canonical URL, status and type, with Count and Query Pattern.")
    @click.option("--limit", "-l", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Rows (or pages) read per query call while streaming (default 2000).")
    def report(archive: Path, sheet: str | None, credentials: str, xlsx: str | None, csv_dir: str | None,
               all_: bool, only: tuple[str, ...], commit: str | None, dedupe_resources: bool,
               limit: int | None) -> None:
        """Write the report sheets of ARCHIVE (Page List, Links, Resources, Images, Violations, …).

        Give exactly one destination: --sheet URL, --xlsx FILE or --csv DIR. On a terminal without
        --all/--only you pick the sheets; otherwise every sheet is written.
        """
        app = get_app()
        app.config()
        name, options = destination_from_flags(sheet, xlsx, csv_dir, credentials,
                                               dedupe_resources=dedupe_resources, batch=limit)
        options.update(silent=app.silent, interactive=sys.stdin.isatty())
        if name == "google-sheets" and not Path(options["credentials"]).is_file():
            raise UsageError(f"credentials file not found: {Path(options['credentials']).name} "
                             "(give --credentials FILE)")
        chosen = select_sheets(app.pm, only)  # unknown names fail before anything is opened
        if xlsx:  # an unwritable destination fails before any sheet is rendered, named as it was given
            check_file_destination(Path(xlsx), xlsx)
        elif csv_dir:
            check_directory_destination(Path(csv_dir), csv_dir)
        names = [s.name for s in chosen] if only else None
        with open_archive(archive) as reader:
            reader.resolve(commit)
            if not only and not all_ and sys.stdin.isatty() and sys.stderr.isatty():
                names = choose_interactively([s.name for s in chosen], {s.name: s.description for s in chosen})
            result = run_report(app.pm, reader, name, options, names, commit)
        emit_json(result)
