"""Deterministic offline models: `ScriptedModel` replays answers, `FunctionModel` computes them.

Both stream in chunks like a real model and record every request they receive (``.requests``),
so tests and teaching notebooks can show exactly what a model was sent.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from ..tools.core import Tool
from .base import ModelChunk, ModelError, ModelRequest, Usage

__all__ = ["FunctionModel", "ScriptedModel", "Turn"]

Turn = str | ModelChunk | Sequence[str | ModelChunk]
"""One answer: a string (streamed in word-sized chunks), or the exact chunks to stream. Unless its
chunks end with one that is ``done``, a last chunk follows with ``finish_reason="stop"``."""

_WORDISH = re.compile(r"\s*\S+|\s+$")


def _chunks(turn: Turn) -> list[ModelChunk]:
    """The chunks of one answer; a plain string is split like a tokenizer would (word pieces)."""
    if isinstance(turn, ModelChunk):
        return [turn]
    if isinstance(turn, str):
        return [ModelChunk(text=piece) for piece in _WORDISH.findall(turn)] or [ModelChunk()]
    chunks = []
    for part in turn:
        if isinstance(part, ModelChunk):
            chunks.append(part)
        elif isinstance(part, str):
            chunks.append(ModelChunk(text=part))
        else:
            raise TypeError(
                f"a scripted answer's chunks must be str or ModelChunk, got {type(part).__name__}"
            )
    return chunks


async def _stream(chunks: list[ModelChunk], delay: float = 0.0) -> AsyncIterator[ModelChunk]:
    for chunk in chunks:
        if delay:
            await asyncio.sleep(delay)
        if chunk.done:  # the answer's own last chunk, its finish_reason as written
            yield chunk
            return
        yield chunk
    yield ModelChunk(done=True, usage=Usage(completion_tokens=len(chunks)), finish_reason="stop")


class ScriptedModel:
    """Replays canned answers, one per model turn, in order.

    A tool call and the answer after its result are two turns::

        model = ScriptedModel([
            '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
            "2 + 3 = 5.",
        ])

    Each answer ends as a model's does, with a ``done`` chunk saying ``finish_reason="stop"``. To
    end one otherwise, give its chunks and end them with your own ``done`` chunk, which is
    streamed as it is: an answer cut by the token limit is::

        ['<tool_call>{"name": "add", "argu', ModelChunk(done=True, finish_reason="length")]

    Args:
        turns: One answer per turn: a string, or a list of chunks (strings or `ModelChunk`).
        name: What the model is called in listings.
        delay: Seconds to wait before each chunk, to show (or stop) a slow model at work.
    """

    max_concurrency = 1
    """Answers go to requests in the order they come: an eval asks one case at a time."""

    def __init__(self, turns: Iterable[Turn] = (), name: str = "scripted", *, delay: float = 0.0):
        self.name = name
        self.delay = delay
        self._turns: list[Turn] = list(turns)
        self._next = 0
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    def enqueue(self, *turns: Turn) -> None:
        """Add answers for later turns."""
        self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        """How many answers are left."""
        return len(self._turns) - self._next

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        if self._next >= len(self._turns):
            raise ModelError(
                f"ScriptedModel {self.name!r} has no answer left: it had {len(self._turns)} and was"
                f" asked for answer {self._next + 1}. Give one answer per model turn (a tool call"
                " and the answer after its result are two turns), or add more with .enqueue(...)."
            )
        turn = self._turns[self._next]
        self._next += 1
        return _stream(_chunks(turn), self.delay)

    @property
    def description(self) -> str:
        """``"ScriptedModel"``, or ``"NAME (ScriptedModel)"`` when it was given a name."""
        return _described(self.name, "scripted", "ScriptedModel")

    def __repr__(self) -> str:
        return f"ScriptedModel({self.name!r}, remaining={self.remaining})"


class FunctionModel:
    """Computes each answer from what the model is sent.

    Args:
        function: Called as ``function(messages, tools)`` with the request's messages and the tools
            offered this turn (`ModelRequest.offered`); returns an answer like a `ScriptedModel`
            turn (a string, or chunks; ending them with a ``done`` chunk sets its
            ``finish_reason``, else it is ``"stop"``). May be ``async def``.
        name: What the model is called in listings.
    """

    def __init__(self, function: Callable[[list[dict[str, Any]], list[Tool]], Any], name: str = "function"):
        self.function = function
        self.name = name
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        answer = self.function([dict(m) for m in request.messages], list(request.offered))
        if inspect.isawaitable(answer):
            answer = await answer
        async for chunk in _stream(_chunks(answer)):
            yield chunk

    @property
    def description(self) -> str:
        """``"FunctionModel"``, or ``"NAME (FunctionModel)"`` when it was given a name."""
        return _described(self.name, "function", "FunctionModel")

    def __repr__(self) -> str:
        return f"FunctionModel({self.name!r})"


def _described(name: str, default: str, kind: str) -> str:
    return kind if name == default else f"{name} ({kind})"
