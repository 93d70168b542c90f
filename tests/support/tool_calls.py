"""A tool call as a scripted model writes it, and as the parser gives it back."""

from __future__ import annotations

from typing import Any

from meowgent_nb import ToolCall
from meowgent_nb.testing import tool_call


def call(name: str, /, *, newlines: bool = False, **arguments: Any) -> str:
    """A call in the ``xml`` protocol, for a scripted model's answer: `meowgent_nb.testing.tool_call`.

    Args:
        name: The tool's name.
        newlines: The JSON on a line of its own between the tags, as Qwen models write it.
        **arguments: The call's arguments.

    Returns:
        ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.
    """
    text = tool_call(name, **arguments)
    if not newlines:
        return text
    body = text.removeprefix("<tool_call>").removesuffix("</tool_call>")
    return f"<tool_call>\n{body}\n</tool_call>"


def parsed_call(name: str, /, **arguments: Any) -> ToolCall:
    """The `ToolCall` the parser makes of a call to ``name`` with these arguments."""
    return ToolCall(name=name, arguments=arguments)
