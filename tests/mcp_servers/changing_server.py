"""An MCP server for the tests whose tools change their own tool list, written with the `mcp` SDK.

``add_tool(name)`` adds a tool ``name`` (it echoes its text, prefixed with its name),
``remove_tool(name)`` removes one, ``reword(name)`` changes a tool's description and
``reshape(name)`` its input schema (a ``count`` integer joins ``text``). ``add_broken(name)``
lists a tool whose input schema is not valid JSON Schema, ``add_many(count)`` adds that many
tools ``many_0``, ``many_1``, ... (a huge listing). ``slow_listing(seconds)`` makes the next
tool listing take that long (the whole server waits). After each change the server says so:

- ``changing_server.py``: the 2026-07-28 protocol, on the ``subscriptions/listen`` stream
  (its capabilities say ``tools.listChanged``);
- ``changing_server.py legacy``: the 2025 handshake only (the 2026 probe is refused, as an older
  server does), with a ``notifications/tools/list_changed`` notification and the capability;
- ``changing_server.py legacy quiet``: the 2025 handshake, no capability, no notification: a
  client learns of the change only by listing again;
- ``changing_server.py http PORT``: the 2026 protocol over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

LEGACY = "legacy" in sys.argv[1:]
QUIET = "quiet" in sys.argv[1:]
READ_ONLY = ToolAnnotations(read_only_hint=True)

server = MCPServer("changing")
_SLOW = {"seconds": 0.0}
_list_tools = server._tool_manager.list_tools


def _listing():
    seconds, _SLOW["seconds"] = _SLOW["seconds"], 0.0
    time.sleep(seconds)  # blocks the server's loop: nothing else is answered meanwhile
    return _list_tools()


server._tool_manager.list_tools = _listing


def _echo(name: str):
    def echo(text: str) -> str:
        return f"{name}: {text}"

    return echo


async def _changed(ctx: Context) -> None:
    if QUIET:
        return
    if LEGACY:
        await ctx.session.send_tool_list_changed()
    else:
        await ctx.notify_tools_changed()


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool called `name` that echoes its text."""
    server.add_tool(_echo(name), name=name, description=f"Echo, as {name}.", annotations=READ_ONLY)
    await _changed(ctx)
    return f"added {name}"


@server.tool()
async def remove_tool(name: str, ctx: Context) -> str:
    """Remove the tool called `name`."""
    server.remove_tool(name)
    await _changed(ctx)
    return f"removed {name}"


@server.tool()
async def reword(name: str, ctx: Context) -> str:
    """Change the description of the tool called `name`."""
    server._tool_manager._tools[name].description = f"{name}, reworded."
    await _changed(ctx)
    return f"reworded {name}"


@server.tool()
async def reshape(name: str, ctx: Context) -> str:
    """Give the tool called `name` a second argument, `count` (an integer of at least 1)."""
    tool = server._tool_manager._tools[name]

    def counted(text: str, count: Annotated[int, Field(ge=1)] = 1) -> str:
        return f"{name}: {text * count}"

    server.remove_tool(name)
    server.add_tool(counted, name=name, description=tool.description, annotations=tool.annotations)
    await _changed(ctx)
    return f"reshaped {name}"


@server.tool()
async def add_broken(name: str, ctx: Context) -> str:
    """Add a tool called `name` whose input schema is not valid JSON Schema."""
    server.add_tool(_echo(name), name=name, description="A tool with a broken schema.")
    server._tool_manager._tools[name].parameters = {
        "type": "object",
        "properties": {"text": {"type": "text"}},  # "text" is not a JSON Schema type
    }
    await _changed(ctx)
    return f"added {name}, broken"


@server.tool()
async def add_many(count: int, ctx: Context) -> str:
    """Add `count` tools called many_0, many_1, ..."""
    for number in range(count):
        server.add_tool(_echo(f"many_{number}"), name=f"many_{number}", description="One of many.")
    await _changed(ctx)
    return f"added {count}"


@server.tool(annotations=READ_ONLY)
def slow_listing(seconds: float) -> str:
    """Make the next tool listing take `seconds`."""
    _SLOW["seconds"] = seconds
    return f"the next listing takes {seconds:g} s"


async def _serve_legacy() -> None:
    """The 2025 handshake only: the 2026 probe is refused, as an older server would (see legacy.py)."""
    from legacy import serve_legacy  # beside this file, on the path of a script run as one
    from mcp.server.lowlevel.server import NotificationOptions

    low = server._lowlevel_server
    await serve_legacy(low, low.create_initialization_options(NotificationOptions(tools_changed=not QUIET)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif LEGACY:
        import anyio

        anyio.run(_serve_legacy)
    else:
        server.run()
