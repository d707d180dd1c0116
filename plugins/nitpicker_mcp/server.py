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
            # abandoned when the server stops (its input closed): the call's statement is interrupted
            texts, structured = await anyio.to_thread.run_sync(
                call, params.name, params.arguments, abandon_on_cancel=True
            )
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


async def _until_input_closes(
    server: Server[Any], toolbox: Toolbox, read_stream: Any, write_stream: Any
) -> None:
    """``server.run`` until the client closes the server's input, then at once: the SDK's own loop waits for
    the calls still running, and a call that never ends (a query over an endless recursive view) kept the
    server alive after its client had gone. Those calls' statements are interrupted and their tasks
    cancelled."""
    send, receive = anyio.create_memory_object_stream[Any](0)
    async with anyio.create_task_group() as group:

        async def forward() -> None:
            async with send:
                async for message in read_stream:
                    await send.send(message)
            log.info("input closed: stopping")
            toolbox.interrupt()  # what still runs is for nobody
            group.cancel_scope.cancel()

        group.start_soon(forward)
        await server.run(receive, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()


def serve(toolbox: Toolbox) -> None:
    """Serve over stdin/stdout until the client closes stdin; every archive is closed on the way out."""
    server = build_server(toolbox)

    async def main() -> None:
        # stdio_server claims fd 1 for the protocol first; anything else printed goes to stderr.
        async with stdio_server() as (read_stream, write_stream):
            with contextlib.redirect_stdout(sys.stderr):
                await _until_input_closes(server, toolbox, read_stream, write_stream)

    log.info("nitpicker MCP server: %d tools", len(toolbox.tools))
    try:
        anyio.run(main)
    finally:
        toolbox.close()
