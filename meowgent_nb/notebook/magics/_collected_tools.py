"""The tools a notebook offers: its ``@tool`` functions, then its toolboxes' tools, one per name,
then (when turned on) the notebook tools (`workspace.notebook_tools`).

An MCP server's tool named like a different tool is a `UsageError`, not a silent choice: otherwise
``%tools mcp list`` could describe a tool the model never gets. So is a notebook tool named like
one of the others: neither may silently replace the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from IPython.core.error import UsageError

from ...mcp.client.tool import McpTool
from ...tools.core import Tool
from ...tools.toolbox import Toolbox

__all__ = ["collected_tools", "with_notebook_tools"]


def collected_tools(namespace: Iterable[Any], boxes: Iterable[Toolbox], what: str = "%tools") -> list[Tool]:
    """Every `Tool` in ``namespace`` (the notebook's values), then those of ``boxes`` and of the
    toolboxes in ``namespace``, the first of each name.

    Raises:
        UsageError: A server's tool shares its name with a different tool (see the module).
    """
    values = list(namespace)
    everything: list[tuple[Tool, Toolbox | None]] = [(v, None) for v in values if isinstance(v, Tool)]
    for box in [*boxes, *(v for v in values if isinstance(v, Toolbox))]:
        everything += [(t, box) for t in box]
    seen: dict[str, tuple[Tool, Toolbox | None]] = {}
    for tool, box in everything:
        first = seen.setdefault(tool.name, (tool, box))
        if first[0] is not tool and (_served(tool) or _served(first[0])):
            raise UsageError(_clash(what, first, (tool, box)))
    return [tool for tool, _ in seen.values()]


def _served(tool: Tool) -> bool:
    return isinstance(tool, McpTool)


def _clash(what: str, first: tuple[Tool, Toolbox | None], second: tuple[Tool, Toolbox | None]) -> str:
    owners = [_owner(*first), _owner(*second)]
    servers = [box.name for tool, box in (first, second) if box is not None and _served(tool)]
    fix = (
        f"Add the server with a prefix (%tools mcp remove {servers[-1]}, then %tools mcp add {servers[-1]}"
        ' --prefix P ..., or McpToolbox(..., prefix="p_"))'
    )
    if any(box is None for _, box in (first, second)):
        fix += ', or rename the notebook tool (@tool(name="..."))'
    return (
        f"{what}: {owners[0]} and {owners[1]} have the same name, {first[0].name!r}; the model could be"
        f" offered only one of them, and which one would not be the one listed. {fix}."
    )


def _owner(tool: Tool, box: Toolbox | None) -> str:
    if box is None:
        return "the notebook tool"
    if _served(tool):
        return f"the tool of the MCP server {box.name!r}"
    return f"the tool of the toolbox {box.name!r}"


def with_notebook_tools(tools: list[Tool], namespace: Mapping[str, Any], what: str = "%tools") -> list[Tool]:
    """``tools``, then the notebook tools over ``namespace`` (`workspace.notebook_tools`).

    Raises:
        UsageError: One of ``tools`` has the name of a notebook tool.
    """
    from ..workspace import notebook_tools

    theirs = notebook_tools(namespace)
    mine = {tool.name for tool in tools}
    same = [tool.name for tool in theirs if tool.name in mine]
    if same:
        names = ", ".join(repr(name) for name in same)
        raise UsageError(
            f"{what}: the notebook tools include {names}, and so do the tools you offer; the model could be"
            ' offered only one of each name. Rename yours (@tool(name="..."), or an MCP server\'s with'
            " --prefix), or leave out the notebook tools (no --notebook; %tools remove notebook)."
        )
    return [*tools, *theirs]
