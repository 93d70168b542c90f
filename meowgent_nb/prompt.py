"""The system prompt: the rules of tool calling and the tools block; byte-stable across turns.

A model server keeps the prompt prefix it has already read in its cache; the system prompt is the
same bytes on every turn of a conversation as long as the tools do not change, so the cache stays
valid. What changes per turn (the last-turn notice, tool results) goes in later messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from .render import render_tools_xml
from .tools import Tool, ToolResult

__all__ = ["DEFAULT_SYSTEM", "JSON_TOOL_RULES", "LAST_TURN_NOTICE", "TOOL_RULES", "system_prompt", "tool_responses"]

DEFAULT_SYSTEM = "You are a helpful assistant."

TOOL_RULES = """\
You can call the tools described in the <tools> block below. A parameter without a type is a \
string; a parameter without a default is required, unless its type allows null.
To call a tool, write one block per call, with the arguments as a JSON object:
<tool_call>
{"name": "tool_name", "arguments": {"argument": "value"}}
</tool_call>
You may call several tools at once. Their results come back in <tool_response> blocks. When you \
have what you need, or when no tool is needed, answer the user directly without a tool call."""

JSON_TOOL_RULES = """\
You can call the tools described in the <tools> block below. A parameter without a type is a \
string; a parameter without a default is required, unless its type allows null.
Always answer with one JSON object and nothing else. To call a tool, write:
{"tool": "tool_name", "arguments": {"argument": "value"}}
Call one tool at a time. Its result comes back in a <tool_response> block. When you have what you \
need, or when no tool is needed, give your answer to the user as:
{"answer": "your answer"}"""

LAST_TURN_NOTICE = (
    "You have reached the limit of tool calls for this request. Answer now with what you have,"
    " without calling any tool."
)

REQUIRED_NOTICE = "You must call one of the tools to answer this request. Call a tool now."


def system_prompt(
    tools: Sequence[Tool], system: str | None = None, *, describe_tools: bool = True, rules: str = TOOL_RULES
) -> str:
    """The system message: ``system`` (or a default), then the tool rules and tools, if any.

    Args:
        tools: The tools offered to the model.
        system: The person's own instructions; `DEFAULT_SYSTEM` when None.
        describe_tools: Whether the tools go into the prompt (the ``xml`` protocol); False when
            they are passed to the backend natively.
        rules: How to call the tools: `TOOL_RULES` (``xml``) or `JSON_TOOL_RULES` (``json``).
    """
    text = DEFAULT_SYSTEM if system is None else system
    if tools and describe_tools:
        text = f"{text}\n\n{rules}\n\n{render_tools_xml(tools)}"
    return text


def tool_responses(results: Sequence[ToolResult]) -> str:
    """The results of one turn's calls, in call order, as the model reads them (``xml``)."""
    return "\n".join(
        f'<tool_response name="{result.call.name}">\n{result.output}\n</tool_response>' for result in results
    )
