"""`nitpicker query ARCHIVE NAME [--param value …]`: run one registered query and print JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.errors import UsageError
from nitpicker_core.query import describe, query_registry, run_query

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def parse_params(args: list[str]) -> dict[str, str]:
    """``--max-depth 3 --flag=x`` → ``{"max_depth": "3", "flag": "x"}``; a bare ``--name`` means true."""
    params: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or arg == "--":
            raise UsageError(f"unexpected argument {arg!r}; parameters are given as --name value")
        name, eq, value = arg[2:].partition("=")
        if not eq:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                value = args[i + 1]
                i += 1
            else:
                value = "true"
        params[name.replace("-", "_")] = value
        i += 1
    return params


class QueryCommand(click.Command):
    """`query --help` ends with the registered queries, read only when the help is shown."""

    pm: NitpickerPluginManager | None = None  # set when the command is registered

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        assert self.pm is not None  # register_commands set it
        rows = [(q.name, (q.description or "").strip().split("\n")[0]) for q in query_registry(self.pm)]
        with formatter.section("Queries (parameters: `nitpicker query --list`)"):
            formatter.write_dl(rows)


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command(
        "query", cls=QueryCommand, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
    )
    @click.argument("archive", required=False, type=click.Path(path_type=str))
    @click.argument("name", required=False)
    @click.option("--list", "list_", is_flag=True, help="List every query with its parameter schema.")
    @click.option("--commit", default=None, help="Commit id to read (default: HEAD).")
    @click.option("--pretty", is_flag=True, help="Indent the JSON.")
    @click.pass_context
    def query(
        ctx: click.Context,
        archive: str | None,
        name: str | None,
        list_: bool,
        commit: str | None,
        pretty: bool,
    ) -> None:
        """Run the query NAME on ARCHIVE (a .nitpicker file or a live working directory) and print JSON.

        Query parameters follow the name as --param value; `--list` shows every query and its parameters.
        """
        app = get_app()
        app.config()
        registry = query_registry(app.pm)
        if list_:
            emit_json(describe(registry), pretty)
            return
        if not archive or not name:
            raise click.UsageError("give an ARCHIVE and a query NAME, or --list")
        given = parse_params(list(ctx.args))
        with open_archive(archive) as reader:
            emit_json(run_query(registry, reader, name.replace("_", "-"), given, commit), pretty)

    assert isinstance(query, QueryCommand)
    query.pm = pm
