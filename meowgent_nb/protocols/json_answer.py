"""The ``json`` tool protocol: the whole answer is one JSON object that a schema allows.

Each turn the model writes either a call or its final answer, nothing else::

    {"tool": "add", "arguments": {"a": 1, "b": 2}}
    {"answer": "3"}

`answer_schema` builds the JSON schema of those shapes from the offered tools; the backend
constrains generation to it (Ollama's ``format=``, a llama.cpp grammar for `LlamaCppModel`), so a
small model cannot write a call that does not parse, name a tool that does not exist, or leave out
a required argument. One call per turn: a second call is the next turn's answer.

`read_answer` reads the finished text. An answer the schema forbids can only come from a backend
that ignored it (a `ScriptedModel`, an old server); it becomes a `MalformedCall`, which the agent
answers with a ``parse_error`` result, as for the ``xml`` protocol.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._deltas import TextDelta
from ..tools.core import Tool, ToolCall
from ._call_json import cut_off
from .parsing import MalformedCall

__all__ = ["JsonAnswerParser", "answer_schema", "read_answer"]

ANSWER_SHAPE: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
"""The final answer's shape: ``{"answer": "..."}``."""

_SHAPES = '{"tool": NAME, "arguments": {...}} or {"answer": "..."}'


def answer_schema(tools: Iterable[Tool]) -> dict[str, Any]:
    """The JSON schema a ``json``-protocol answer must follow: a call of one tool, or the answer.

    Args:
        tools: The tools the model may call this turn; none leaves only the answer shape.

    Returns:
        ``{"anyOf": [one call shape per tool, in order, ..., the answer shape]}``. A call shape
        fixes ``tool`` to the tool's name and ``arguments`` to its parameters' schema.
    """
    calls = [
        {
            "type": "object",
            "properties": {"tool": {"const": tool.name}, "arguments": tool.parameters},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    return {"anyOf": [*calls, ANSWER_SHAPE]}


def read_answer(text: str) -> ToolCall | str | MalformedCall:
    """One finished ``json``-protocol answer: a call, the final answer's text, or what was wrong.

    Args:
        text: Everything the model wrote this turn.

    Returns:
        A `ToolCall` for ``{"tool": ..., "arguments": {...}}``, the string of
        ``{"answer": "..."}``, else a `MalformedCall` saying which shape was expected.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return MalformedCall(text, f"the answer is not JSON ({error.msg}); write {_SHAPES}.")
    if isinstance(value, dict) and set(value) == {"answer"} and isinstance(value["answer"], str):
        return value["answer"]
    if (
        isinstance(value, dict)
        and set(value) == {"tool", "arguments"}
        and isinstance(value["tool"], str)
        and isinstance(value["arguments"], dict)
    ):
        return ToolCall(value["tool"], value["arguments"])
    return MalformedCall(text, f"the answer has neither shape; write {_SHAPES}.")


class JsonAnswerParser:
    """Holds a streamed ``json``-protocol answer and reads it at the end (the agent's parser).

    Nothing is shown while the JSON streams in; `close` returns the answer as one `TextDelta`,
    or the call.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []

    def feed(self, chunk: str) -> list[Any]:
        """Keep ``chunk``; nothing can be shown before the whole object is read."""
        self._parts.append(chunk)
        return []

    def close(self, finish_reason: str | None = None) -> list[TextDelta | ToolCall | MalformedCall]:
        """The answer's events, and a fresh start for the next answer.

        Args:
            finish_reason: Why the model stopped; after ``"length"`` (the token limit) an answer
                that is not complete JSON is a cut-off call, never repaired.
        """
        text, self._parts = "".join(self._parts), []
        answer = read_answer(text)
        if finish_reason == "length" and isinstance(answer, MalformedCall):
            return [cut_off(text, token_limit=True)]
        if isinstance(answer, str):
            return [TextDelta(answer)] if answer else []
        return [answer]
