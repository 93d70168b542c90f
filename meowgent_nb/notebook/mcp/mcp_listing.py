"""``%tools mcp list``: the added MCP servers, each with its tools and whether each asks first."""

from __future__ import annotations

import os
import re
from typing import Any

from ..._visible import visible
from ...mcp.client.toolbox import McpTool, McpToolbox
from ...tools.output import counted

__all__ = ["server_listing"]

_INSTRUCTIONS_SHOWN = 300


def server_listing(servers: dict[str, McpToolbox]) -> str:
    """The servers, a block each (what ``%tools mcp list`` and ``add`` print)."""
    if not servers:
        return (
            "No MCP servers. Add one with %tools mcp add NAME -- COMMAND ARGS..."
            " or %tools mcp add NAME --url URL."
        )
    blocks = []
    for name, box in servers.items():
        target = box.target
        if box.transport == "stdio":  # the program's name only ("python"): paths differ between machines
            program, _, rest = target.partition(" ")
            program = re.sub(r"^python[\d.]*$", "python", os.path.basename(program))
            target = " ".join(filter(None, [program, rest]))
        if box.record and box.tape_path is None and not box.connected:
            # Its tools are not known until a cassette replays them or the server starts.
            blocks.append(
                f"{name} ({box.transport}: {target}): recorded, not started; the first %%agent cell replays"
                " its tools from the cassette, or starts it"
            )
            continue
        if box.tape_path is not None:  # the same words whether it was recorded now or is replayed
            state = f"recorded in {os.path.basename(box.tape_path)}"
        else:
            state = (
                "connected"
                if box.connected and box.ping()
                else f"stopped (%tools mcp reconnect {name} starts it again)"
            )
        lines = [f"{name} ({box.transport}: {target}): {state}, {counted(len(box), 'tool')}"]
        lines += [
            f"  {label}: {', '.join(f'{n}=***' for n in names)}" for label, names in _given(box) if names
        ]
        width = max((len(t.name) for t in box), default=0)
        lines += [
            f"  {t.name:<{width}}  {_asks(t):<19}  {' '.join(filter(None, (_visible_title(t), _as_task(t))))}".rstrip()
            for t in box
        ]
        lines += [f"  not offered: {remote} ({why})" for remote, why in box.skipped.items()]
        if box.left_out:
            lines.append(f"  left out (include/exclude): {', '.join(box.left_out)}")
        if box.instructions:
            use = "in the system prompt" if box.use_instructions else "not used; --instructions adds them"
            text = re.sub(r"\s+", " ", box.instructions).strip()
            if len(text) > _INSTRUCTIONS_SHOWN:
                text = text[: _INSTRUCTIONS_SHOWN - 1] + "…"
            lines.append(f"  instructions ({use}): {text}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _given(box: McpToolbox) -> list[tuple[str, tuple[str, ...]]]:
    return [("env", box.env_names), ("headers", box.header_names)]


def _asks(tool: Any) -> str:
    return "asks first" if tool.approval else "runs without asking"


def _as_task(tool: Any) -> str:
    return "(runs as an MCP task: Stop cancels it)" if isinstance(tool, McpTool) and tool.runs_as_task else ""


def _visible_title(tool: Any) -> str:
    title = tool.title if isinstance(tool, McpTool) else None
    return visible(title) if title else ""
