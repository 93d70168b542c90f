"""``%load_ext meowgent_nb`` and ``%unload_ext``: the session, the magic families, the transformer.

`load` makes the shell's `NotebookSession` (``shell.meowgent``), registers one `Magics` class
per family (`FAMILIES`) and the input transformer that turns a ``%%agent`` cell into an
``await``; `unload` closes what the session opened and undoes exactly that.
"""

from __future__ import annotations

from typing import Any, cast

from ..mcp.mcp_magics import McpMagics, ServeMagics, close_mcp
from .agent_magics import AgentMagics, rewrite_agent_cell
from .session import NotebookSession, NotebookSettings
from .tools_magics import ToolsMagics

__all__ = ["FAMILIES", "load", "unload"]

FAMILIES = (AgentMagics, ToolsMagics, McpMagics, ServeMagics)
"""The magic families: ``%%agent``/``%agent``, ``%tools``, ``%tools mcp``, ``%tools serve``."""


def load(shell: Any) -> None:
    """Make the shell's session and register the families and the ``%%agent`` transformer.

    Loading twice is harmless: the second time does nothing.
    """
    if "AgentMagics" in shell.magics_manager.registry:
        return
    settings = AgentMagics(shell=shell, parent=shell)  # its traits are the settings (%config AgentMagics...)
    # Pyright matches a protocol's attributes to traitlets' descriptors, not to what they return.
    shell.meowgent = NotebookSession(shell=shell, settings=cast(NotebookSettings, settings))
    mcp, serve = McpMagics(shell=shell), ServeMagics(shell=shell)
    for magics in (settings, ToolsMagics(shell, mcp=mcp, serve=serve), mcp, serve):
        shell.register_magics(magics)
    shell.input_transformer_manager.cleanup_transforms.append(rewrite_agent_cell)


def unload(shell: Any) -> None:
    """Close the session's MCP servers and served server, and undo exactly what `load` did."""
    session = getattr(shell, "meowgent", None)
    if isinstance(session, NotebookSession):
        if session.mcp_servers or session.served is not None:
            close_mcp(session)
        del shell.meowgent
    registry = shell.magics_manager.registry
    for family in FAMILIES:
        magics = registry.pop(family.__name__, None)
        if magics is None:
            continue
        for kind, names in magics.magics.items():
            for name in names:
                shell.magics_manager.magics[kind].pop(name, None)
    transforms = shell.input_transformer_manager.cleanup_transforms
    while rewrite_agent_cell in transforms:
        transforms.remove(rewrite_agent_cell)
