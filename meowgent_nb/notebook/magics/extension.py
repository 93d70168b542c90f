"""``%load_ext meowgent_nb`` and ``%unload_ext``: the session, the magic families, the transformer.

`load` makes the shell's `NotebookSession` (``shell.meowgent``), registers the ``%%agent`` and
``%tools`` families and the input transformer that turns a ``%%agent`` cell into an ``await``
(``%tools`` registers the ``mcp`` and ``serve`` families when first used: `ToolsMagics.family`);
`unload` closes what the session opened and undoes exactly that. Loading reads the site's policy
files (`meowgent_nb.policy`): one that cannot be used stops the load, saying why. When
``MEOWGENT_TRACE_FILE`` names a file, the session's runs write their spans there (`trace_magic`).
"""

from __future__ import annotations

import os
from typing import Any, cast

from ...agent.tracing import TRACE_FILE_ENV
from .agent_magics import AgentMagics, rewrite_agent_cell
from .session import NotebookSession, NotebookSettings
from .tools_magics import ToolsMagics

__all__ = ["FAMILIES", "load", "unload"]

FAMILIES = ("AgentMagics", "ToolsMagics", "McpMagics", "ServeMagics")
"""The magic families' classes: ``%%agent``/``%agent``, ``%tools``, ``%tools mcp``, ``%tools serve``."""


def load(shell: Any) -> None:
    """Make the shell's session and register the families and the ``%%agent`` transformer.

    Loading twice is harmless: the second time does nothing.

    Raises:
        PolicyError: A site policy file cannot be used (nothing is registered).
    """
    if "AgentMagics" in shell.magics_manager.registry:
        return
    from ...policy import reload_policy

    reload_policy()  # read afresh: a person who fixed a broken policy file loads the extension again
    settings = AgentMagics(shell=shell, parent=shell)  # its traits are the settings (%config AgentMagics...)
    # Pyright matches a protocol's attributes to traitlets' descriptors, not to what they return.
    shell.meowgent = NotebookSession(shell=shell, settings=cast(NotebookSettings, settings))
    shell.register_magics(settings)
    shell.register_magics(ToolsMagics(shell=shell))
    shell.input_transformer_manager.cleanup_transforms.append(rewrite_agent_cell)
    trace_file = os.environ.get(TRACE_FILE_ENV, "").strip()
    if trace_file:
        from .trace_magic import trace_to_file

        trace_to_file(shell.meowgent, trace_file)


def unload(shell: Any) -> None:
    """Close the session's MCP servers and served server, and undo exactly what `load` did."""
    session = getattr(shell, "meowgent", None)
    if isinstance(session, NotebookSession):
        if session.mcp_servers or session.served is not None:
            from ..mcp.mcp_magics import close_mcp  # only when MCP was used: it imports the MCP client

            close_mcp(session)
        del shell.meowgent
    registry = shell.magics_manager.registry
    for name in FAMILIES:
        magics = registry.pop(name, None)
        if magics is None:
            continue
        for kind, names in magics.magics.items():
            for name in names:
                shell.magics_manager.magics[kind].pop(name, None)
    transforms = shell.input_transformer_manager.cleanup_transforms
    while rewrite_agent_cell in transforms:
        transforms.remove(rewrite_agent_cell)
