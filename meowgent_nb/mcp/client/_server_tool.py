"""An `McpTool` from one entry of an MCP server's tool listing (`mcp_tool`), and approval defaults
(`needs_approval`)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

from ...errors import ToolDefinitionError
from ...tools.examples import split_examples
from ..content._results import result_value, value_schema, wraps_result
from ._session import _field
from .tool import McpTool

__all__ = ["BAD_NAME_CHARS", "mcp_tool", "needs_approval"]

BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_TITLE_LIMIT = 100  # characters of a server's title kept (it is outside text, shown on one line)
_NEEDS_TASKS = "it runs only as an MCP task, and no session was given that can run one"


def needs_approval(annotations: Any) -> bool:
    """Whether a tool with these MCP annotations (the SDK's object or a wire dict) asks first:
    ``destructiveHint`` or ``openWorldHint`` true asks, else ``readOnlyHint`` true runs, else asks."""
    if _field(annotations, "destructive_hint", "destructiveHint") is True:
        return True
    if _field(annotations, "open_world_hint", "openWorldHint") is True:
        return True
    return _field(annotations, "read_only_hint", "readOnlyHint") is not True


def mcp_tool(
    spec: Any,
    call: Callable[[str, dict[str, Any]], str],
    *,
    prefix: str = "",
    approval: bool | None = None,
    timeout: float | None = None,
    server: str | None = None,
    task_problem: str | None = _NEEDS_TASKS,
) -> McpTool:
    """An `McpTool` from one entry of an MCP server's tool listing; characters a tool name may
    not have become ``_`` (``remote_name`` keeps the server's).

    Args:
        spec: The listed tool: the SDK's ``Tool``, or a dict / object in the wire's spelling.
        call: Called with the server's tool name and the validated arguments; returns the text
            or the server's ``CallToolResult``.
        prefix: Put before the tool's name (e.g. ``"github_"``).
        approval: Whether calls ask first; None: from the annotations (`needs_approval`).
        timeout: Seconds a call may take, or None for the agent's default.
        server: The server's name, for the warning about examples left out.
        task_problem: Why a task-only tool cannot run on this session, or None when it can.

    Raises:
        ToolDefinitionError: The schema is not valid JSON Schema, the name cannot be made a tool
            name, or the tool runs only as a task and ``task_problem`` says why it cannot.
    """
    remote = _field(spec, "name", "name")
    as_task = _field(_field(spec, "execution", "execution"), "task_support", "taskSupport") == "required"
    if as_task and task_problem is not None:
        raise ToolDefinitionError(f"the MCP tool {remote!r}", [task_problem])
    schema = _field(spec, "input_schema", "inputSchema") or {"type": "object"}
    title = _title(spec)
    description = _field(spec, "description", "description") or title or ""
    name = BAD_NAME_CHARS.sub("_", prefix + remote)[:64]
    if approval is None:
        approval = needs_approval(_field(spec, "annotations", "annotations"))

    listed_schema = _field(spec, "output_schema", "outputSchema")
    wrapped, output_schema = wraps_result(listed_schema), value_schema(listed_schema)

    def handler(**arguments: Any) -> Any:
        answer = call(remote, arguments)
        return answer if isinstance(answer, str) else result_value(answer, wrapped)

    schema, examples = split_examples(schema)  # a bad example should not cost the tool itself
    made = McpTool.from_schema(name, description, schema, handler, approval=approval, timeout=timeout)
    made.remote_name = remote
    made.title = title
    made.output_schema = output_schema
    made.runs_as_task = as_task
    made.idempotent = (
        _field(_field(spec, "annotations", "annotations"), "idempotent_hint", "idempotentHint") is True
    )
    if examples is not None:
        left_out = made._adopt_examples(examples)
        if left_out:
            _warn_examples(server, remote, len(made.examples), left_out)
    return made


def _title(spec: Any) -> str | None:
    """The server's title for a tool, on one line and bounded; None when it has none."""
    title = _field(spec, "title", "title") or _field(
        _field(spec, "annotations", "annotations"), "title", "title"
    )
    if not isinstance(title, str) or not title.strip():
        return None
    title = " ".join(title.split())
    return title if len(title) <= _TITLE_LIMIT else title[: _TITLE_LIMIT - 3] + "..."


_SHOWN_PROBLEMS = 3


def _warn_examples(server: str | None, remote: str, kept: int, problems: list[str]) -> None:
    """Say which of a server tool's examples are left out, in one bounded line."""
    source = f"the MCP server {server!r}" if server else "an MCP server"
    shown = "".join(f"\n- {problem[:200]}" for problem in problems[:_SHOWN_PROBLEMS])
    if len(problems) > _SHOWN_PROBLEMS:
        shown += f"\n- and {len(problems) - _SHOWN_PROBLEMS} more"
    offered = f"with the {kept} that fit" if kept else "without examples"
    warnings.warn(
        f"Examples of the tool {remote[:64]!r} from {source} are left out (it is offered {offered}):{shown}",
        stacklevel=3,
    )
