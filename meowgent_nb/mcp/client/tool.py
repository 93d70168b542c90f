"""`McpTool`: a `Tool` an MCP server offers, with what MCP adds to a tool.

Light on purpose: the notebook tells a server's tools from its own with ``isinstance`` before any
MCP client is loaded. `_server_tool.mcp_tool` makes one from a server's listing.
"""

from __future__ import annotations

from typing import Any

from ...tools.core import Tool

__all__ = ["McpTool"]


class McpTool(Tool):
    """A `Tool` of an `McpToolbox`: a server's tool (calls go to the server), or the box's
    ``read_resource`` tool (``remote_name`` None). Made by the box, never by hand."""

    remote_name: str | None = None
    """The server's name of the tool, which calls use; None for a box's resource reader."""
    title: str | None = None
    """The server's title for people (the tool's, else its annotations'), or None."""
    output_schema: dict[str, Any] | None = None
    """The schema of the values its calls return (see `value_schema`); None: the text."""
    runs_as_task: bool = False
    """Whether calls run as MCP tasks (the server lists ``execution.taskSupport: "required"``)."""
    idempotent: bool = False
    """Whether the server marks it ``idempotentHint`` (a call that broke off is tried once more)."""
    value_codec: Any = None
    """How a cassette writes and reads its values (`MCP_VALUES`), or None for plain text."""
