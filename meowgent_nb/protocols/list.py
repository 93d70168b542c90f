"""The ``list`` protocol: the model answers in text, or with a JSON list of calls.

The call turn is one list, ``[{"name": "get_weather", "arguments": {"city": "Paris"}}, ...]``
(Hammer's and xLAM's format), so a small model that would stop after one ``<tool_call>`` block
writes every call a request needs; any other answer is text. The rules and the compact XML
tools block go in the system prompt; `ToolCallParser` reads the answer with the offered names.
The request's `call_format` is the list's schema (`list_schema`): a backend that can (the
embedded `LlamaCppModel`) constrains a list the model opens to offered names and their
arguments and leaves text free; others send nothing extra. Results come back in call order, as
the ``xml`` protocol sends them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..tools.core import Tool, ToolCall, ToolResult
from ..tools.render import render_tools_xml
from .base import RequestParts, assistant_message
from .parsing import ToolCallParser
from .prompt import system_prompt
from .xml import XmlProtocol, call_schema

__all__ = ["LIST_MAX_CALLS", "LIST_TOOL_RULES", "ListProtocol", "list_schema"]

LIST_MAX_CALLS = 8
"""Calls in one constrained list: room for a request's parts, not for a loop."""

# Qwen2.5's tool section (as `prompt.TOOL_RULES`), with the call turn as Hammer's list.
LIST_TOOL_RULES = """\
# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags. A parameter without a \
type is a string; a parameter without a default is required, unless its type allows null:
{tools}

To call functions, answer with only a JSON list of all the calls the query needs, and nothing else:
[{"name": <function-name>, "arguments": <args-json-object>}, {"name": <function-name>, "arguments": <args-json-object>}]
If no function fits the query, or a required argument is missing, answer in plain text instead. The results of your calls come back in <tool_response> blocks: then answer the user in plain text."""


class ListProtocol:
    """Tools described in the system prompt; the model answers in text or with a list of calls."""

    name = "list"

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        return system_prompt(tools, system, rules=LIST_TOOL_RULES, render=render_tools_xml)

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        if not offered or last:
            return RequestParts()
        return RequestParts(call_format=list_schema(offered))

    def parser(self, offered: Sequence[Tool]) -> ToolCallParser:
        return ToolCallParser(offered=[tool.name for tool in offered])

    def result_messages(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return _XML.result_messages(results)

    def assistant_message(
        self, raw: str, text: str, thinking: str, calls: Sequence[ToolCall], cut_off_by: str | None
    ) -> dict[str, Any]:
        return assistant_message(raw, thinking, cut_off_by)  # the list as the model wrote it

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_XML = XmlProtocol()  # the results go back as the xml protocol sends them: one mechanism


def list_schema(tools: Iterable[Tool]) -> dict[str, Any]:
    """The JSON schema of a call turn: a list of 1 to `LIST_MAX_CALLS` calls to offered tools.

    Each element is one of `xml.call_schema`'s shapes (``name`` fixed to a tool's name,
    ``arguments`` to its parameters' schema).
    """
    return {"type": "array", "items": call_schema(tools), "minItems": 1, "maxItems": LIST_MAX_CALLS}
