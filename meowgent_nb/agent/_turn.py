"""One model turn: the request the loop sends, and the answer read from the model's stream.

`turn_request` builds what one turn asks of the model from the protocol's parts. `read_turn`
streams the model through the protocol's parser and yields the agent's events, keeping what the
turn produced in a `TurnAnswer` (also when interrupted, so the history stays whole).
`offered_name` maps a tool name as the model wrote it to the one offered tool it unambiguously
means (case and ``._-/`` separators folded, over `name_index`); otherwise it stays as written, so
a made-up tool never turns into a real one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..models.base import Model, ModelRequest, Usage
from ..protocols.base import AnswerParser, ToolProtocol
from ..protocols.parsing import MalformedCall, PartialCall
from ..protocols.prompt import LAST_TURN_NOTICE
from ..tools.core import Tool, ToolCall
from .events import AgentEvent, ModelStatus, TextDelta, ThinkingDelta, ToolCallEvent

__all__ = ["TurnAnswer", "name_index", "offered_name", "read_turn", "turn_request"]


@dataclass
class TurnAnswer:
    """What one model turn produced so far (kept also when the turn is interrupted)."""

    raw: list[str] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[tuple[ToolCall, MalformedCall | None]] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    """Why the model stopped, as the backend said on the last chunk ("length": the token limit)."""
    cut_off_by: str | None = None
    """Why the turn ended early: "interrupted", or the name of the exception."""
    names: dict[str, str | None] = field(default_factory=dict)
    """The offered tools' names by folded form (`offered_name` maps a written name onto them)."""

    @property
    def text(self) -> str:
        return "".join(self.text_parts).strip()

    def clear(self) -> None:
        """Forget what was produced (a failed attempt, asked again); the offered names stay."""
        self.raw, self.text_parts, self.thinking, self.calls = [], [], [], []
        self.usage = self.finish_reason = self.cut_off_by = None

    def message(self, protocol: ToolProtocol) -> dict[str, Any]:
        """The assistant message ``protocol`` records for this turn."""
        calls = [call for call, malformed in self.calls if malformed is None]
        return protocol.assistant_message(
            "".join(self.raw), "".join(self.text_parts), "".join(self.thinking), calls, self.cut_off_by
        )


def turn_request(
    protocol: ToolProtocol, messages: Sequence[Mapping[str, Any]], offered: list[Tool], last: bool, think: Any
) -> ModelRequest:
    """The request of one turn: ``messages`` (system first) and the protocol's parts for ``offered``.

    On the ``last`` turn the model is told so and offered no tool to call."""
    if last:
        messages = [*messages, {"role": "user", "content": LAST_TURN_NOTICE}]
    parts = protocol.request(offered, last)
    return ModelRequest(
        messages=messages,
        tools=parts.tools,
        offered=() if last else offered,
        think=think,
        format=parts.format,
        call_format=parts.call_format,
        call_tag=parts.call_tag,
        call_grounding=parts.call_grounding,
        call_parser=parts.call_parser,
    )


async def read_turn(
    model: Model,
    request: ModelRequest,
    parser: AnswerParser | None,
    answer: TurnAnswer,
    turn: int,
    next_id: Callable[[], str],
) -> AsyncIterator[AgentEvent]:
    """Stream ``model``'s answer to ``request`` into ``answer``, yielding the events as they come.

    A call gets the id the backend gave it, else ``next_id()``."""
    stream = model.stream(request)
    # Close the model's stream (and its connection) at once when the turn stops early.
    closing = cast("AsyncGenerator[Any, None]", stream)  # where it has aclose, as checked
    async with contextlib.aclosing(closing) if hasattr(stream, "aclose") else contextlib.nullcontext():
        async for chunk in stream:
            if chunk.status is not None:
                yield ModelStatus(chunk.status)
            if chunk.thinking:
                answer.thinking.append(chunk.thinking)
                yield ThinkingDelta(chunk.thinking)
            if chunk.text:
                answer.raw.append(chunk.text)
                for event in parser.feed(chunk.text) if parser else [TextDelta(chunk.text)]:
                    for out in _parsed(event, answer, turn, next_id):
                        yield out
            for call in chunk.tool_calls:
                for out in _parsed(call, answer, turn, next_id):
                    yield out
            if chunk.done:
                answer.usage, answer.finish_reason = chunk.usage, chunk.finish_reason
    for event in parser.close(answer.finish_reason) if parser else []:
        for out in _parsed(event, answer, turn, next_id):
            yield out


def _parsed(event: Any, answer: TurnAnswer, turn: int, next_id: Callable[[], str]) -> list[AgentEvent]:
    if isinstance(event, TextDelta):
        answer.text_parts.append(event.text)
        return [event]
    if isinstance(event, ThinkingDelta):
        answer.thinking.append(event.text)
        return [event]
    if isinstance(event, PartialCall):  # shown while it is written; only a complete call runs
        return [event]
    call_id = next_id()
    if isinstance(event, MalformedCall):
        call = ToolCall("(unreadable)", {}, id=call_id)
        answer.calls.append((call, event))
        return [ToolCallEvent(call, turn)]
    call = ToolCall(offered_name(event.name, answer.names), dict(event.arguments), id=event.id or call_id)
    answer.calls.append((call, None))
    return [ToolCallEvent(call, turn)]


_SEPARATORS = re.compile(r"[._\-/\s]+")


def _folded(name: str) -> str:
    return _SEPARATORS.sub("_", name.strip()).lower()


def name_index(names: Iterable[str]) -> dict[str, str | None]:
    """Offered names by their folded form; None for a form more than one name has."""
    index: dict[str, str | None] = {}
    for name in names:
        folded = _folded(name)
        index[folded] = None if folded in index and index[folded] != name else name
    return index


def offered_name(written: str, index: Mapping[str, str | None]) -> str:
    """The offered name ``written`` means, or ``written`` itself if it is offered or ambiguous or
    matches none."""
    if written in index.values():
        return written
    return index.get(_folded(written)) or written
