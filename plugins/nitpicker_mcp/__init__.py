"""`nitpicker mcp`: an MCP server over stdio with one tool per registered query.

Tools are built from the query registry at startup, so a query a plugin registers becomes a tool with no
other change. The protocol owns stdout; logs go to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from nitpicker_core import hookimpl, query_registry

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def _finite(param: click.Parameter, value: float) -> float:
    """NaN passes every comparison of ``FloatRange``: refused here."""
    if value != value:
        raise click.BadParameter(f"{str(value)!r} is not a finite number.", param=param)
    return value


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("mcp")
    @click.option(
        "--max-result-bytes",
        type=click.IntRange(min=4096),
        default=1_000_000,
        show_default=True,
        help="Most bytes of JSON one tool call returns; bigger results are cut and say so.",
    )
    @click.option(
        "--wait",
        "wait",
        type=click.FloatRange(min=0, max=3600),
        callback=lambda _ctx, param, value: _finite(param, value),
        default=60.0,
        show_default=True,
        metavar="SECONDS",
        help="How long a call waits for an archive another call is opening or "
        "querying; then it answers an error (calls on other archives never wait).",
    )
    @click.pass_context
    def mcp(ctx: click.Context, max_result_bytes: int, wait: float) -> None:
        """Serve every query as an MCP tool over stdio, for MCP clients (AI assistants, IDEs).

        Register `nitpicker mcp` as a stdio server in the client. Each tool takes `archive` (the path of a
        .nitpicker file or a live working directory) and optionally `commit`, plus the query's parameters.
        """
        from .archives import ArchiveManager
        from .server import serve
        from .tools import Toolbox

        app = ctx.find_root().obj
        if callable(getattr(app, "config", None)):
            app.config()  # loads the config file and lets plugins configure (or decline) themselves
        serve(Toolbox(query_registry(pm), ArchiveManager(wait=wait), max_bytes=max_result_bytes))
