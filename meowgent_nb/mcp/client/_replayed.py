"""A recorded `McpToolbox`'s tools made from a cassette's listing (`replayed_tools`).

A cassette can raise a tool's approval or shorten its time limit, never lower them: it is a file
anyone can edit, and a hand-edited ``"approval": false`` must not let a destructive tool run
unasked. A call with no recording starts the live server; if the live listing says the tool
needs approval the recording did not, that call raises `ApprovalMissing` for the agent to ask.
"""

from __future__ import annotations

from typing import Any

from ...agent.running_call import RUNNING_CALL
from ...errors import ApprovalMissing
from ...tools.core import Tool
from ..content._recorded_values import MCP_VALUES
from ._server_resources import READ_TOOL
from ._session import McpServerError
from .tool import McpTool

__all__ = ["replayed_tools", "tighter"]


def replayed_tools(box: Any, listing: Any) -> dict[str, Tool]:
    """The tools of ``box`` (an `McpToolbox` made with ``record=True``) that ``listing`` (a
    cassette's `ListingEntry`) describes, by name; a call without a recording runs live."""
    from ...recording.tool_tape import listed_tool

    overrides, timeout = box._options[0], box._options[3]
    made: dict[str, Tool] = {}
    for fields in listing.listing:
        remote = fields.remote_name or fields.name
        said = next((overrides[k] for k in (remote, fields.name) if k in overrides), None)
        if fields.remote_name is None and said is None:  # the box's read_resource tool
            said = overrides.get(READ_TOOL)
        tool = listed_tool(fields, _live_handler(box, remote, fields.name, made), McpTool)
        tool.remote_name, tool.title, tool.output_schema = (
            fields.remote_name,
            fields.title,
            fields.output_schema,
        )
        tool.approval = bool(fields.approval) or said is True
        tool.timeout = tighter(timeout, fields.timeout)
        tool.value_codec = MCP_VALUES
        made[tool.name] = tool
    return made


def tighter(given: float | None, recorded: float | None) -> float | None:
    """The time limit a recorded tool keeps: the person's, shortened (never lengthened) by the
    recording's; None (the agent's default) when the person gave none."""
    if given is None:
        return None
    return given if recorded is None else min(given, recorded)


def _live_handler(box: Any, remote: str, local: str, made: dict[str, Tool]) -> Any:
    def handler(**arguments: Any) -> Any:
        # Only a call the cassette has no recording of gets here (mode auto): it needs the server.
        if not box._connection.alive:
            box._start()
        live = {_remote(t): t for t in box._tools.values()}
        for tool in made.values():  # the live listing's approval holds from now on
            twin = live.get(_remote(tool))
            if twin is not None and twin.approval:
                tool.approval = True
        own = live.get(remote)
        if own is None:
            raise McpServerError(f"The MCP server {box.name!r} no longer offers the tool {remote!r}.")
        running = RUNNING_CALL.get()  # None: called from the person's own code, not by a model
        if own.approval and running is not None and not running.approved:
            raise ApprovalMissing(
                f"the cassette {box.tape_path or ''} says {local!r} needs no approval, but the live server"
                f" {box.name!r} says it does, and this call has no recording, so it was not run without a"
                " person's approval. Record the listing again (mode record) to correct the cassette."
            )
        return own.function(**arguments)

    return handler


def _remote(tool: Tool) -> str:
    """The server's name of a tool; a box's ``read_resource`` tool (no server name) by its own."""
    return (tool.remote_name if isinstance(tool, McpTool) else None) or tool.name
