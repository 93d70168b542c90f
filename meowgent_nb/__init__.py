"""meowgent_nb: tool-using agents on local models, in Jupyter notebooks.

Mark plain Python functions with `@tool`; the model sees them as compact XML (`render_tools_xml`),
asks for them with ``<tool_call>`` blocks, and an `Agent` validates each call, asks for approval
where a tool needs it, runs the calls in parallel with time limits and feeds the results back.
Importing this package only defines names: no client, no network, no configuration is read.

Here are the names a notebook uses. The rest have public modules of their own: `meowgent_nb.events`
(what a run yields), `meowgent_nb.models` (every backend), `meowgent_nb.mcp` (MCP servers' tools,
and the notebook's served), `meowgent_nb.testing` (helpers for pytest).
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .agent.approvals import Approved, AutoApprove, Denied, DenyAll
from .agent.loop import Agent, AgentResult
from .errors import MeowgentError, SettingsError, ToolArgumentsError, ToolDefinitionError
from .evals.evaluation import EvalCase, EvalReport, evaluate
from .models import ModelError
from .models.scripted import FunctionModel, ScriptedModel
from .tools.context import ToolContext
from .tools.core import Tool, ToolCall, ToolResult, tool
from .tools.render import render_tools_xml, tools_json_schema
from .tools.toolbox import Toolbox


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext meowgent_nb``: register the magics and the ``%%agent`` input transformer."""
    from .notebook.magics.extension import load

    load(ipython)
    from .tools.context import set_default_backend

    set_default_backend(_agent_context)  # a tool's ToolContext shows in its call's card, asks in the cell


def _agent_context(tool: str) -> Any:
    from .mcp.client.agent_context import agent_context  # only once a tool that takes a context runs

    return agent_context(tool)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext meowgent_nb``: remove exactly what `load_ipython_extension` added."""
    from .notebook.magics.extension import unload

    unload(ipython)
    from .tools.context import set_default_backend

    set_default_backend(None)


__all__ = [  # noqa: RUF022 - grouped by comment, sorted within each group
    # Tools: mark a function, and what the model reads of it
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "Toolbox",
    "render_tools_xml",
    "tool",
    "tools_json_schema",
    # The agent and the decisions on its calls
    "Agent",
    "AgentResult",
    "Approved",
    "AutoApprove",
    "Denied",
    "DenyAll",
    # Offline models (every backend, and the interface, are in meowgent_nb.models)
    "FunctionModel",
    "ScriptedModel",
    # Evals of tool descriptions
    "EvalCase",
    "EvalReport",
    "evaluate",
    # Errors
    "MeowgentError",
    "ModelError",
    "SettingsError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    # The IPython extension (%load_ext meowgent_nb), and the version
    "__version__",
    "load_ipython_extension",
    "unload_ipython_extension",
]

# Names this package exported before it had public submodules, and where they live now. They
# still import from here, with a DeprecationWarning, until the next release.
_MOVED = {
    **dict.fromkeys(
        [
            "AgentEvent",
            "ApprovalEvent",
            "ApprovalRequested",
            "FinalAnswer",
            "ModelStatus",
            "PartialCall",
            "RunStart",
            "TextDelta",
            "ThinkingDelta",
            "ToolCallEvent",
            "ToolResultEvent",
            "ToolRunning",
            "TurnEnd",
        ],
        "meowgent_nb.events",
    ),
    **dict.fromkeys(
        ["Model", "ModelChunk", "ModelRequest", "OllamaModel", "OpenAIModel", "Usage"], "meowgent_nb.models"
    ),
    **dict.fromkeys(
        [
            "McpServerError",
            "McpToolError",
            "McpToolbox",
            "OAuth",
            "ToolServer",
            "load_mcp_config",
            "prompt",
            "resource",
        ],
        "meowgent_nb.mcp",
    ),
    **dict.fromkeys(["ApprovalRequest", "Approver"], "meowgent_nb.agent.approvals"),
    **dict.fromkeys(["Rule", "RuleError", "Rules"], "meowgent_nb.agent.rules"),
    "RepeatedFailure": "meowgent_nb.agent.result",
    "RunInterrupted": "meowgent_nb.errors",
    "ToolContextError": "meowgent_nb.tools.context",
    "aevaluate": "meowgent_nb.evals",
    **dict.fromkeys(["RecordingModel", "ReplayModel"], "meowgent_nb.recording"),
    **dict.fromkeys(["MalformedCall", "ToolCallParser", "parse_tool_calls"], "meowgent_nb.protocols.parsing"),
    **dict.fromkeys(["parse_tools_xml", "render_tools_text"], "meowgent_nb.tools.render"),
}


def __getattr__(name: str) -> Any:
    place = _MOVED.get(name)
    if place is None:
        raise AttributeError(f"module 'meowgent_nb' has no attribute {name!r}")
    import warnings
    from importlib import import_module

    warnings.warn(
        f"meowgent_nb.{name} has moved: import it from {place} (`from {place} import {name}`);"
        " the old name goes in the next release.",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(import_module(place), name)
