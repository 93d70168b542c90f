"""``%tools mcp refresh NAME|--all`` and ``%tools mcp reconnect NAME``: list MCP servers' tools again.

A server that says its tools changed is refreshed before its tools are next used; this is the
same by hand, for a server that does not say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ...mcp.client.toolbox import McpServerError, McpToolbox
from .mcp_resource_magics import connected_boxes

if TYPE_CHECKING:
    from ..magics.session import NotebookSession

__all__ = ["reconnect_listing", "refresh_listing"]


def refresh_listing(session: NotebookSession, name: str) -> str:
    """What changed in the tools of the server ``name`` (or of every one, ``--all``), a line each.

    With ``--all``, the other servers' lines are printed before a failure is raised.

    Raises:
        UsageError: No server has that name (the message names those there are), it is stopped,
            or its refresh failed (the server went away, or did not list its tools in time).
    """
    boxes = _boxes(session)
    if name != "--all":
        return _one(boxes, name)
    if not boxes:
        raise UsageError(
            "%tools mcp refresh --all: no MCP server is added; add one with %tools mcp add NAME -- COMMAND ARGS..."
        )
    lines, failed = [], []
    for box in boxes.values():
        if not box.connected:
            lines.append(
                f"The MCP server {box.name!r} is stopped (%tools mcp reconnect {box.name} starts it again)."
            )
            continue
        try:
            lines.append(str(box.refresh()))
        except McpServerError as error:
            failed.append(f"{box.name}: {error}")
    if failed:
        if lines:
            print("\n".join(lines))
        raise UsageError("%tools mcp refresh --all: " + "\n".join(failed))
    return "\n".join(lines)


def _one(boxes: dict[str, McpToolbox], name: str) -> str:
    if name not in boxes:
        known = ", ".join(boxes)
        raise UsageError(
            f"%tools mcp refresh: no MCP server named {name!r}; "
            + (f"the servers are: {known}." if known else "none is added.")
        )
    box = boxes[name]
    if not box.connected:
        raise UsageError(
            f"%tools mcp refresh {name}: the MCP server {name!r} is stopped;"
            f" %tools mcp reconnect {name} starts it again."
        )
    try:
        return str(box.refresh())
    except McpServerError as error:
        raise UsageError(f"%tools mcp refresh {name}: {error}") from None


def _boxes(session: NotebookSession) -> dict[str, McpToolbox]:
    """The session's servers by name: added with ``%tools mcp add`` (maybe stopped), then the
    connected ones made in the notebook (an added one wins a shared name)."""
    added = dict(session.mcp_servers)
    return added | {box.name: box for box in connected_boxes(session) if box.name not in added}


def reconnect_listing(session: NotebookSession, name: str) -> str:
    """``%tools mcp reconnect NAME``: a new session with the server, and what changed in its tools.

    Raises:
        UsageError: No server has that name, or it could not be reached again (the error says why).
    """
    boxes = session.mcp_servers
    if name not in boxes:
        known = ", ".join(boxes)
        raise UsageError(
            f"%tools mcp reconnect: no MCP server named {name!r}; "
            + (f"the servers are: {known}." if known else "none is added.")
        )
    try:
        changes = boxes[name].reconnect()
    except McpServerError as error:
        raise UsageError(f"%tools mcp reconnect {name}: {error}") from None
    return f"Reconnected to the MCP server {name!r}. {changes}"
