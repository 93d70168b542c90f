"""meowgent_nb: tool-using agents on local models, in Jupyter notebooks.

Mark plain Python functions with `@tool`; the model sees them as compact XML (`render_tools_xml`),
asks for them with ``<tool_call>`` blocks, and an `Agent` validates each call, asks for approval
where a tool needs it, runs the calls in parallel with time limits and feeds the results back.
Importing this package only defines names: no client, no network, no configuration is read.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from .agent.approvals import ApprovalRequest, Approved, Approver, AutoApprove, Denied, DenyAll
from .agent.events import (
    AgentEvent,
    ApprovalEvent,
    ApprovalRequested,
    FinalAnswer,
    ModelStatus,
    PartialCall,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)
from .agent.loop import Agent, AgentResult
from .agent.result import RepeatedFailure
from .agent.rules import Rule, RuleError, Rules
from .errors import MeowgentError, RunInterrupted, ToolArgumentsError, ToolDefinitionError
from .evals.evaluation import EvalCase, EvalReport, aevaluate, evaluate
from .models import Model, ModelChunk, ModelError, ModelRequest, Usage
from .models.scripted import FunctionModel, ScriptedModel
from .protocols.parsing import MalformedCall, ToolCallParser, parse_tool_calls
from .recording.cassette import RecordingModel, ReplayModel
from .tools.context import ToolContext, ToolContextError
from .tools.core import Tool, ToolCall, ToolResult, tool
from .tools.render import parse_tools_xml, render_tools_text, render_tools_xml, tools_json_schema
from .tools.toolbox import Toolbox

if TYPE_CHECKING:  # imported on first use by __getattr__ below; named here for type checkers
    from .mcp.client.toolbox import McpServerError, McpToolbox, McpToolError, OAuth
    from .mcp.load import load_mcp_config
    from .mcp.server.published import prompt, resource
    from .mcp.server.serve import ToolServer
    from .models.ollama import OllamaModel
    from .models.openai import OpenAIModel

try:
    __version__ = version("meowgent-nb")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext meowgent_nb``: register the magics and the ``%%agent`` input transformer."""
    from .notebook.magics.agent_magics import AgentMagics, rewrite_agent_cell

    if "AgentMagics" in ipython.magics_manager.registry:
        return  # loading twice is harmless
    ipython.register_magics(AgentMagics(shell=ipython, parent=ipython))
    ipython.input_transformer_manager.cleanup_transforms.append(rewrite_agent_cell)
    from .tools.context import set_default_backend

    set_default_backend(_agent_context)  # a tool's ToolContext shows in its call's card, asks in the cell


def _agent_context(tool: str) -> Any:
    from .mcp.client.agent_context import agent_context  # only once a tool that takes a context runs

    return agent_context(tool)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext meowgent_nb``: remove exactly what `load_ipython_extension` added."""
    from .notebook.magics.agent_magics import rewrite_agent_cell

    magics = ipython.magics_manager.registry.pop("AgentMagics", None)
    if magics is not None:
        if getattr(magics, "_mcp_servers", None) or getattr(magics, "_mcp_serving", None):
            from .notebook.mcp.mcp_magics import (
                close_mcp,
            )  # only when MCP was used: it imports IPython's argparse

            close_mcp(magics)
        for kind, names in magics.magics.items():
            for name in names:
                ipython.magics_manager.magics[kind].pop(name, None)
    transforms = ipython.input_transformer_manager.cleanup_transforms
    while rewrite_agent_cell in transforms:
        transforms.remove(rewrite_agent_cell)
    from .tools.context import set_default_backend

    set_default_backend(None)


def __getattr__(name: str) -> Any:
    # OllamaModel imports the ollama client (and httpx), the MCP names the mcp SDK when used; only
    # pay for that when they are used.
    if name == "OllamaModel":
        from .models.ollama import OllamaModel

        return OllamaModel
    if name == "OpenAIModel":  # the openai client itself is imported by its first request
        from .models.openai import OpenAIModel

        return OpenAIModel
    if name in ("McpToolbox", "McpServerError", "McpToolError", "OAuth"):  # MCP is opt-in: load it on use
        from .mcp.client import toolbox as mcp_client

        return getattr(mcp_client, name)
    if name == "load_mcp_config":
        from .mcp.load import load_mcp_config

        return load_mcp_config
    if name == "ToolServer":
        from .mcp.server.serve import ToolServer

        return ToolServer
    if name in ("resource", "prompt"):  # published by %tools serve; light, but MCP's concern
        from .mcp.server import published

        return getattr(published, name)
    raise AttributeError(f"module 'meowgent_nb' has no attribute {name!r}")


__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "ApprovalEvent",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approved",
    "Approver",
    "AutoApprove",
    "Denied",
    "DenyAll",
    "EvalCase",
    "EvalReport",
    "FinalAnswer",
    "FunctionModel",
    "MalformedCall",
    "McpServerError",
    "McpToolError",
    "McpToolbox",
    "MeowgentError",
    "Model",
    "ModelChunk",
    "ModelError",
    "ModelRequest",
    "ModelStatus",
    "OAuth",
    "OllamaModel",
    "OpenAIModel",
    "PartialCall",
    "RecordingModel",
    "RepeatedFailure",
    "ReplayModel",
    "Rule",
    "RuleError",
    "Rules",
    "RunInterrupted",
    "RunStart",
    "ScriptedModel",
    "TextDelta",
    "ThinkingDelta",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallParser",
    "ToolContext",
    "ToolContextError",
    "ToolDefinitionError",
    "ToolResult",
    "ToolResultEvent",
    "ToolRunning",
    "ToolServer",
    "Toolbox",
    "TurnEnd",
    "Usage",
    "__version__",
    "aevaluate",
    "evaluate",
    "load_ipython_extension",
    "load_mcp_config",
    "parse_tool_calls",
    "parse_tools_xml",
    "prompt",
    "render_tools_text",
    "render_tools_xml",
    "resource",
    "tool",
    "tools_json_schema",
    "unload_ipython_extension",
]
