"""An MCP server whose tools fail the first time they are called, written with the `mcp` SDK.

Each tool's first call (in the folder given as the first argument, across restarts) takes the
server down or hangs, and its later calls answer; the folder also counts the server's starts.

- ``lookup(key)`` (``idempotentHint``): the first call ends the process mid-call.
- ``append(text)`` (not idempotent): the same.
- ``stuck(key)`` (``idempotentHint``): the first call never answers.
- ``starts()``: how many times the server has been started.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

FOLDER = Path(sys.argv[1])
STARTS = FOLDER / "starts"
STARTS.write_text(str(int(STARTS.read_text()) + 1 if STARTS.exists() else 1))
server = MCPServer("flaky")
SAFE = ToolAnnotations(read_only_hint=True, idempotent_hint=True)


def _first(name: str) -> bool:
    marker = FOLDER / name
    if marker.exists():
        return False
    marker.write_text("called")
    return True


@server.tool(annotations=SAFE)
def lookup(key: str) -> str:
    """Look a key up (the first call takes the server down)."""
    if _first("lookup"):
        os._exit(3)
    return f"value of {key}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=False))
def append(text: str) -> str:
    """Append a line (the first call takes the server down)."""
    if _first("append"):
        os._exit(3)
    return f"appended {text}"


@server.tool(annotations=SAFE)
async def stuck(key: str) -> str:
    """Look a key up (the first call never answers)."""
    if _first("stuck"):
        await asyncio.sleep(3600)
    return f"unstuck {key}"


@server.tool(annotations=SAFE)
def starts() -> int:
    """How many times this server has been started."""
    return int(STARTS.read_text())


if __name__ == "__main__":
    server.run()
