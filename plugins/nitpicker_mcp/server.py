"""The MCP glue: a low-level ``mcp.server.Server`` over stdio serving a ``Toolbox``.

Imported only when `nitpicker mcp` runs: the SDK takes most of a second to import.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from nitpicker_core import __version__

from .tools import Toolbox, error_message, render

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Each tool runs one nitpicker query on a website audit archive. Pass `archive`: the path of a "
    '.nitpicker file or of a live crawl\'s working directory; `commit` (an id or "HEAD", the default) '
    "picks the crawl generation. List results are paginated with `limit` and `offset`. "
    "`list_commits` shows an archive's commits; `list_archives` the archives open in this server."
)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def build_server(toolbox: Toolbox) -> Server[Any]:
    tools = [
        types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
        for spec in toolbox.tools.values()
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    def call(name: str, arguments: dict[str, Any] | None) -> tuple[list[str], dict[str, Any] | None]:
        return render(toolbox.call(name, arguments), toolbox.max_bytes)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            texts, structured = await anyio.to_thread.run_sync(call, params.name, params.arguments)
        except Exception as exc:
            message = error_message(exc)
            log.info("tool %s failed: %s", params.name, message)
            return error_result(message)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=t) for t in texts], structured_content=structured
        )

    return Server(
        "nitpicker",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(toolbox: Toolbox) -> None:
    """Serve over stdin/stdout until the client closes stdin; every archive is closed on the way out."""
    server = build_server(toolbox)

    async def main() -> None:
        # stdio_server claims fd 1 for the protocol first; anything else printed goes to stderr.
        async with stdio_server() as (read_stream, write_stream):
            with contextlib.redirect_stdout(sys.stderr):
                await server.run(read_stream, write_stream, server.create_initialization_options())

    log.info("nitpicker MCP server: %d tools", len(toolbox.tools))
    try:
        anyio.run(main)
    finally:
        toolbox.close()
