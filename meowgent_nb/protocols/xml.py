"""The ``xml`` protocol: tools in the system prompt, calls in ``<tool_call>`` tags; any model reads it
(``auto`` gives it to a model whose template has no tools, and to the embedded models).

The model reads the rules (`prompt.TOOL_RULES`) and the compact XML tools block, writes each call
as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in its answer, and `ToolCallParser`
reads the calls out of the streamed text. Results come back as one user message of
``<tool_response>`` blocks, followed by `prompt.RESULTS_NOTICE`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..tools.calls import ToolResultsMessage
from ..tools.core import Tool, ToolCall, ToolResult
from ..tools.render import render_tools_xml
from .base import RequestParts, assistant_message
from .parsing import CALL_OPEN, ToolCallParser
from .prompt import RESULTS_NOTICE, TOOL_RULES, system_prompt, tool_responses

__all__ = ["XmlProtocol", "call_schema"]


class XmlProtocol:
    """Tools described in the system prompt; calls written as ``<tool_call>`` blocks."""

    name = "xml"

    def __init__(self, *, thinking_first: bool = False) -> None:
        self.thinking_first = thinking_first
        """The model's template opens a think block: the answer is thinking up to ``</think>``."""

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        return system_prompt(tools, system, rules=TOOL_RULES, render=self.tools_block)

    def tools_block(self, tools: Sequence[Tool]) -> str:
        """The tools as the system prompt shows them: `render_tools_xml`'s compact XML."""
        return render_tools_xml(tools)

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        return call_request(offered, last)

    def parser(self, offered: Sequence[Tool]) -> ToolCallParser:
        # A display fills in a call's card as it is written; the offered names let a call inside
        # prose be read (only to these tools).
        return ToolCallParser(
            partial_calls=True, offered=[tool.name for tool in offered], thinking_first=self.thinking_first
        )

    def result_messages(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        content = tool_responses(results, RESULTS_NOTICE)
        return [ToolResultsMessage({"role": "user", "content": content})]

    def assistant_message(
        self, raw: str, text: str, thinking: str, calls: Sequence[ToolCall], cut_off_by: str | None
    ) -> dict[str, Any]:
        # The text as the model wrote it, calls included: the next turn's prompt then tokenizes
        # to what the model produced, so a backend's prefix cache covers it.
        return assistant_message(raw, thinking, cut_off_by)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({'thinking_first=True' if self.thinking_first else ''})"


def call_request(offered: Sequence[Tool], last: bool, **parts: Any) -> RequestParts:
    """The request of a protocol whose calls are ``<tool_call>`` blocks (``xml``, ``native``):
    the call schema, so a backend that can constrains the arguments; none on the last turn."""
    if not offered or last:
        return RequestParts()
    return RequestParts(call_format=call_schema(offered), call_tag=CALL_OPEN, **parts)


def call_schema(tools: Iterable[Tool]) -> dict[str, Any]:
    """The JSON schema of one ``<tool_call>`` body: ``{"name": ..., "arguments": {...}}``.

    The ``xml`` and ``native`` protocols send it as `ModelRequest.call_format`. A backend that
    can (`LlamaCppModel`) lets the model write freely and, once it has written
    ``{"name": "<an offered tool>", "arguments":``, constrains the arguments to that tool's
    schema. Whether to call, and which tool, stays the model's choice: a made-up tool name is
    left as written, so the agent answers it with an ``unknown_tool`` error instead of running
    some other tool.

    Args:
        tools: The tools the model may call this turn (at least one).

    Returns:
        ``{"anyOf": [one shape per tool, in order]}``; a shape fixes ``name`` to the tool's name
        and ``arguments`` to its parameters' schema.
    """
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, "arguments": tool.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for tool in tools
        ]
    }
