"""The interface every tool protocol implements, and the values it hands the agent.

A protocol is how tools reach a model and how calls and results come back. The agent holds one
protocol object and asks it, each turn, for the system rules, its part of the model request, the
parser of the answer, the assistant message to record and the messages that carry results back;
it never asks which protocol it holds. Protocols do not import `models` (they are siblings): the
agent turns `RequestParts` into a `ModelRequest`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..tools.core import Tool, ToolCall, ToolResult
from .parsing import ParsedEvent

__all__ = ["AnswerParser", "RequestParts", "ToolProtocol", "assistant_message"]


class AnswerParser(Protocol):
    """Reads one streamed answer: `feed` each chunk of text, then `close` once at the end."""

    def feed(self, chunk: str) -> Sequence[ParsedEvent]:
        """The events ``chunk`` completes."""
        ...

    def close(self, finish_reason: str | None = None) -> Sequence[ParsedEvent]:
        """The events left at the end of the answer; ``finish_reason`` is the backend's."""
        ...


@dataclass(frozen=True)
class RequestParts:
    """A protocol's part of one turn's `ModelRequest` (the agent adds messages, offered, think).

    The fields mean what the `ModelRequest` fields of the same names mean.
    """

    tools: Sequence[Tool] = ()
    format: Mapping[str, Any] | None = None
    call_format: Mapping[str, Any] | None = None
    call_tag: str | None = None
    call_grounding: bool = False
    call_parser: Callable[[], Any] | None = None


@runtime_checkable
class ToolProtocol(Protocol):
    """How tools reach a model and calls and results come back (``xml``, ``native``, ``json``)."""

    name: str
    """The name `Agent(protocol=...)` takes, as listed in `protocols.registry.PROTOCOLS`."""

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        """The system message: ``system`` (or the default) and, where the protocol puts them
        there, the rules of calling and the ``tools`` block."""
        ...

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        """This turn's part of the request; ``last``: the turn limit is reached, answer now."""
        ...

    def parser(self, offered: Sequence[Tool]) -> AnswerParser | None:
        """A fresh parser of this turn's answer text, or None: the text is the answer as it is."""
        ...

    def result_messages(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        """The messages that carry one turn's results back, in call order."""
        ...

    def assistant_message(
        self, raw: str, text: str, thinking: str, calls: Sequence[ToolCall], cut_off_by: str | None
    ) -> dict[str, Any]:
        """The assistant message recorded for a turn.

        Args:
            raw: All the text the model wrote.
            text: The visible text the parser let through (all of ``raw`` without a parser).
            thinking: The model's reasoning, "" when there was none.
            calls: The calls read from the answer (those that could be read).
            cut_off_by: Why the turn ended early ("interrupted", an exception's name), or None.
        """
        ...


def assistant_message(
    content: str, thinking: str, cut_off_by: str | None, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The assistant message every protocol records, with a note when the answer was cut off."""
    if cut_off_by is not None:
        content += f"\n[this answer was cut off: {cut_off_by}]"
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return message
