"""The ``json`` protocol: each answer is one JSON object, a call or the answer (see `json_answer`).

The rules (`prompt.JSON_TOOL_RULES`) and the XML tools block go in the system prompt; the backend
constrains the answer to `json_answer.answer_schema` of the offered tools (on the last turn, the
answer shape alone). Results come back as ``<tool_response>`` blocks without the plain-text notice,
which would contradict the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tools.calls import ToolResultsMessage
from ..tools.core import Tool, ToolCall, ToolResult
from .base import RequestParts, assistant_message
from .json_answer import JsonAnswerParser, answer_schema
from .prompt import JSON_TOOL_RULES, system_prompt, tool_responses

__all__ = ["JsonProtocol"]


class JsonProtocol:
    """One JSON object per answer, constrained by the backend to a schema of the offered tools."""

    name = "json"

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        return system_prompt(tools, system, rules=JSON_TOOL_RULES)

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        # A call of an offered tool or the answer; on the last turn only the answer. Without
        # tools there is no JSON in the prompt, so the answer is free text.
        return RequestParts(format=answer_schema(() if last else offered)) if offered else RequestParts()

    def parser(self, offered: Sequence[Tool]) -> JsonAnswerParser | None:
        # Shown once read, as the answer or a call; free text (no tools) streams as it is.
        return JsonAnswerParser() if offered else None

    def result_messages(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        # json answers are JSON objects: the notice's "in plain text" would contradict the rules.
        return [ToolResultsMessage({"role": "user", "content": tool_responses(results, None)})]

    def assistant_message(
        self, raw: str, text: str, thinking: str, calls: Sequence[ToolCall], cut_off_by: str | None
    ) -> dict[str, Any]:
        return assistant_message(raw, thinking, cut_off_by)  # the JSON the model wrote

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
