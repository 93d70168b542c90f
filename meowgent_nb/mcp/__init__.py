"""MCP: servers' tools as notebook tools, and the notebook's tools served.

- `client`: `McpToolbox`, one server's tools, resources and prompts, and what it asks during a call.
- `server`: `ToolServer`, the notebook's tools served (what ``%tools serve`` runs).
- `content`: MCP content blocks read as notebook values, and served values written as them.
- `config`: Claude Desktop / Cursor / VS Code configuration files read into server entries.
- `load`: `load_mcp_config`, a toolbox for every server of such a file.
- `_thread`: the background event loop both ends run on.

The client and the server never import each other. Names load lazily, so importing this package
does not import the ``mcp`` SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client.tool import McpTool
    from .client.toolbox import McpServerError, McpToolbox, McpToolError, OAuth
    from .load import load_mcp_config
    from .server.published import ResourceContent, prompt, resource
    from .server.serve import ToolServer

__all__ = [  # noqa: RUF022 - grouped by comment, sorted within each group
    # A server's tools in the notebook
    "McpServerError",
    "McpTool",
    "McpToolError",
    "McpToolbox",
    "OAuth",
    "load_mcp_config",
    # The notebook's tools served (what ``%tools serve`` runs)
    "ResourceContent",
    "ToolServer",
    "prompt",
    "resource",
]

# Where each name lives: importing this package loads none of them (nor the SDK) until one is named.
_HOMES = {
    "McpServerError": ".client.toolbox",
    "McpTool": ".client.tool",
    "McpToolError": ".client.toolbox",
    "McpToolbox": ".client.toolbox",
    "OAuth": ".client.toolbox",
    "load_mcp_config": ".load",
    "ResourceContent": ".server.published",
    "ToolServer": ".server.serve",
    "prompt": ".server.published",
    "resource": ".server.published",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
