"""A low-level MCP server for the tests whose tools declare task support (MCP 2025-11-25, stdio).

- ``render`` needs task mode (``execution.taskSupport: "required"``): a client that cannot run
  tasks cannot call it.
- ``resize`` may run as a task (``"optional"``) and also answers a plain call.
- ``crop`` says tasks are ``"forbidden"``; ``rotate`` says nothing (the same).

Tasks exist only in the 2025-11-25 protocol (2026-07-28 moved them to an extension, and the SDK
leaves ``execution`` out there), so this server speaks 2025-11-25 like the servers that publish
tasks: it serves only the ``initialize`` handshake (`serve_loop`), so the client's
``server/discover`` probe fails and the client falls back to the handshake.
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

_ANGLE = {"type": "object", "properties": {"degrees": {"type": "integer"}}, "required": ["degrees"]}


def _tool(name: str, description: str, support: str | None) -> types.Tool:
    execution = None if support is None else types.ToolExecution(task_support=support)
    return types.Tool(name=name, description=description, input_schema=_ANGLE, execution=execution)


TOOLS = [
    _tool("render", "Render a long video (only as a task).", "required"),
    _tool("resize", "Resize an image.", "optional"),
    _tool("crop", "Crop an image.", "forbidden"),
    _tool("rotate", "Rotate an image.", None),
]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params) -> types.CallToolResult:
    text = f"{params.name} by {params.arguments['degrees']}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("tasks", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        options = server.create_initialization_options()
        await serve_loop(server, read_stream, write_stream, lifespan_state={}, init_options=options)


if __name__ == "__main__":
    anyio.run(main)
