"""A low-level MCP server for the tests: odd listings and protocol errors (stdio).

- ``lookup/by-id`` has a name with a '/', which is not a tool name here (it becomes
  ``odd_lookup_by-id``).
- ``matrix`` declares an input schema that is not valid JSON Schema (it is skipped, with the reason).
- ``guarded`` answers every call with a JSON-RPC error (``MCPError`` in the SDK 2.x).
- ``census`` answers with structured content only; ``chart`` with text, an image and a link.
- ``whoami`` gives the server's process id (so a test can kill it while it is idle).
- ``log`` publishes a pydantic model's schema, as mcp-server-git does (``GitLog.model_json_schema()``):
  titles everywhere, ``$defs`` for the nested model and the enum.
"""

from __future__ import annotations

import os
from enum import Enum

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field


class Author(BaseModel):
    name: str
    email: str | None = None


class Order(str, Enum):
    newest = "newest"
    oldest = "oldest"


class GitLog(BaseModel):
    repo_path: str
    max_count: int = 10
    order: Order = Order.newest
    author: Author | None = Field(None, description="Only commits by this author.")


TOOLS = [
    types.Tool(
        name="lookup/by-id",
        description="Look a record up by its id.",
        input_schema={
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 1}},
            "required": ["id"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="matrix",
        description="Its schema is not valid JSON Schema.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": "one"}}},
    ),
    types.Tool(name="guarded", description="Refuses every caller.", input_schema={"type": "object"}),
    types.Tool(name="census", description="Counts people.", input_schema={"type": "object"}),
    types.Tool(name="chart", description="Draws a chart.", input_schema={"type": "object"}),
    types.Tool(name="whoami", description="The server's process id.", input_schema={"type": "object"}),
    types.Tool(name="log", description="Shows the commit logs.", input_schema=GitLog.model_json_schema()),
]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params) -> types.CallToolResult:
    if params.name == "guarded":
        raise MCPError(code=types.INVALID_PARAMS, message="the caller is not on the guest list")
    if params.name == "whoami":
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(os.getpid()))])
    if params.name == "log":
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(params.arguments))])
    if params.name == "census":
        return types.CallToolResult(
            content=[], structured_content={"people": 3, "names": ["Ada", "Bo", "Cy"]}
        )
    if params.name == "chart":
        image = types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
        link = types.ResourceLink(type="resource_link", name="data", uri="file:///tmp/chart.csv")
        return types.CallToolResult(content=[types.TextContent(type="text", text="A chart:"), image, link])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"record {params.arguments['id']}")]
    )


server = Server("odd", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
