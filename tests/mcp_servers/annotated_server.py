"""An MCP server for the tests whose tools carry titles and hints, written with the `mcp` SDK.

It also says what it was started with, without saying any value: whether an environment
variable is set and how long it is, its working directory, and (over HTTP) whether a header
came and how long it is. Stdio by default; ``annotated_server.py http PORT`` for streamable HTTP
on 127.0.0.1.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("annotated")


@server.tool(title="Search the web", annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def search(query: str) -> str:
    """Search the web (read-only, but it reaches outside)."""
    return f"results for {query}"


@server.tool(
    annotations=ToolAnnotations(title="Read a local note", read_only_hint=True, open_world_hint=False)
)
def read_note(name: str) -> str:
    """Read a note (read-only, closed world; its title is in the annotations)."""
    return f"note {name}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def env_var(name: str) -> str:
    """Whether an environment variable is set in the server, and its length (never its value)."""
    value = os.environ.get(name)
    return "unset" if value is None else f"set, {len(value)} characters"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def header(name: str, ctx: Context) -> str:
    """Whether the HTTP request carried a header, and its length (never its value)."""
    value = (ctx.headers or {}).get(name.lower())
    return "absent" if value is None else f"present, {len(value)} characters"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
