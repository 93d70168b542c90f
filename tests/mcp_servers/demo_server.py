"""An MCP server for the tests, written with the `mcp` SDK: stdio by default, or
``demo_server.py http PORT`` for streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: Annotated[int, Field(description="The second number.")] = 2) -> int:
    """Add two numbers."""
    return a + b


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str, unit: Literal["C", "F"] = "C") -> str:
    """The weather forecast for a city."""
    return f"Sunny in {city}, 21 {unit}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=True))
def wipe(path: str) -> str:
    """Delete everything under a path."""
    return f"wiped {path}"


@server.tool()
def note(text: str) -> str:
    """Keep a note (no annotations: an outside tool is not trusted)."""
    return f"noted: {text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def refuse(reason: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"cannot do that: {reason}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=True)
def stats(numbers: list[float]) -> dict[str, float]:
    """Smallest and largest of some numbers."""
    return {"min": min(numbers), "max": max(numbers)}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def slow(seconds: float) -> str:
    """Waits, then answers."""
    await asyncio.sleep(seconds)
    return "finally"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def crash() -> str:
    """The server process dies in the middle of this call."""
    print("demo server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
