"""The scripted run of `loop_overhead.py`, and the same run through peer agent frameworks.

The run has two model turns. Turn 1 streams N-1 text chunks, then a call of the ``noop`` tool
(which returns "ok" at once); turn 2 streams N text chunks: the answer. Each framework gets the
chunks in its own model interface, built before the clock starts, and runs in-process, offline.

- pydantic-ai (``pip install pydantic-ai-slim``): `pydantic_ai.models.function.FunctionModel`
  with a ``stream_function`` that yields the str chunks and, for the call, one ``DeltaToolCalls``;
  the tool is registered with ``@agent.tool_plain``; the run is ``agent.run(...)`` with an
  ``event_stream_handler`` that reads every event (without one, ``run`` does not stream).
- smolagents (``pip install smolagents``): a `smolagents.models.Model` subclass whose
  ``generate_stream`` yields ``ChatMessageStreamDelta`` objects, run by a ``ToolCallingAgent``
  with ``stream_outputs=True`` and logging off. Its answer must be a ``final_answer`` tool call,
  so its turn 2 is N-1 text chunks and that call. Its loop is O(N^2) in the chunks (see `Peer.limit`).

Each peer is imported only when it is measured. `find_peers` lists them all, installed or not.
"""

from __future__ import annotations

import importlib.util
import io
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any, ClassVar

__all__ = ["PROMPT", "TEXT", "Peer", "Sample", "Sampler", "ToolClock", "find_peers"]

PROMPT = "go"
TEXT = "tok "
"""Every text chunk."""


@dataclass(frozen=True)
class Sample:
    """One measured run, in seconds; all of it in one process, one after another."""

    script: float
    """Iterating the bare chunk source (a plain generator over the prepared chunks), both turns."""
    model: float
    """Iterating the framework's model interface alone for both turns: the "model time"."""
    agent: float
    """The agent's whole run."""
    tool: float
    """The tool's time as the framework reports it; the body's time where it reports none."""
    tool_body: float
    """The tool's time as its body measures it, the same way in every framework."""

    @property
    def overhead(self) -> float:
        """The framework's time beyond the model and the tool (as reported)."""
        return self.agent - self.model - self.tool

    def beyond(self, floor: float) -> float:
        """The framework's time beyond ``floor`` (a model time) and the tool body's time."""
        return self.agent - floor - self.tool_body


Sampler = Callable[[], Awaitable[Sample]]
"""Measures one run; made for one N by a setup function, called once per repeat."""


@dataclass(frozen=True)
class Peer:
    """A framework to compare with, and how to measure it."""

    name: str
    install: str
    """The pip command that installs it."""
    module: str
    distributions: tuple[str, ...]
    setup: Callable[[int], Sampler]
    """Prepares the chunks, model and agent for N (imports the framework), returns the sampler."""
    limit: int | None = None
    """The largest N measured; past it the run would take too long."""
    limit_reason: str = ""

    @property
    def version(self) -> str | None:
        """The installed version, or None when the framework is not installed."""
        if importlib.util.find_spec(self.module) is None:
            return None
        for distribution in self.distributions:
            try:
                return version(distribution)
            except PackageNotFoundError:
                continue
        return "?"


def find_peers() -> list[Peer]:
    """Every peer, installed or not."""
    return [
        Peer(
            "pydantic-ai",
            "pip install pydantic-ai-slim",
            "pydantic_ai",
            ("pydantic-ai-slim", "pydantic-ai"),
            _pydantic_ai_setup,
        ),
        Peer(
            "smolagents",
            "pip install smolagents",
            "smolagents",
            ("smolagents",),
            _smolagents_setup,
            limit=1_000,
            limit_reason="re-joins all deltas so far and re-parses them as Markdown on every chunk: O(N^2)",
        ),
    ]


# --- shared helpers --------------------------------------------------------------------------------


class ToolClock:
    """The tool's own time, measured inside its body (for frameworks that do not report it)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def noop(self) -> str:
        started = time.perf_counter()
        result = "ok"
        self.seconds += time.perf_counter() - started
        return result


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


async def _drain_async(stream: AsyncIterator[Any]) -> None:
    async for _ in stream:
        pass


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"the scripted run did not go as planned: {what}")


# --- pydantic-ai ------------------------------------------------------------------------------------


def _pydantic_ai_setup(n: int) -> Sampler:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    call = {0: DeltaToolCall(name="noop", json_args="{}", tool_call_id="call_1")}
    turns: tuple[list[Any], list[Any]] = ([TEXT] * (n - 1) + [call], [TEXT] * n)

    async def stream_function(messages: list[Any], info: Any) -> AsyncIterator[Any]:
        # Turn 1 is asked with the prompt alone; turn 2 also sees the answer and the tool's result.
        for item in turns[len(messages) > 1]:
            yield item

    model = FunctionModel(stream_function=stream_function)
    agent = Agent(model)
    clock = ToolClock()

    @agent.tool_plain
    def noop() -> str:
        """Return "ok" at once."""
        return clock.noop()

    prompt = ModelRequest(parts=[UserPromptPart(PROMPT)])
    histories = ([prompt], [prompt, ModelResponse(parts=[TextPart("")]), prompt])

    async def read_events(ctx: Any, events: AsyncIterator[Any]) -> None:
        await _drain_async(events)

    async def sample() -> Sample:
        started = time.perf_counter()
        for history in histories:
            await _drain_async(stream_function(history, None))
        script = time.perf_counter() - started

        started = time.perf_counter()
        for history in histories:
            async with model.request_stream(history, None, ModelRequestParameters()) as response:
                await _drain_async(response)
        model_seconds = time.perf_counter() - started

        clock.seconds = 0.0
        started = time.perf_counter()
        result = await agent.run(PROMPT, event_stream_handler=read_events)
        agent_seconds = time.perf_counter() - started
        _check(result.output == TEXT * n and len(result.all_messages()) == 4, "pydantic-ai's answer")
        return Sample(script, model_seconds, agent_seconds, clock.seconds, clock.seconds)

    return sample


# --- smolagents -------------------------------------------------------------------------------------


def _smolagents_setup(n: int) -> Sampler:
    from rich.console import Console
    from smolagents import Tool, ToolCallingAgent
    from smolagents.models import (
        ChatMessage,
        ChatMessageStreamDelta,
        ChatMessageToolCallFunction,
        ChatMessageToolCallStreamDelta,
        MessageRole,
        Model,
    )
    from smolagents.monitoring import AgentLogger, LogLevel

    def call(name: str, arguments: str, call_id: str) -> ChatMessageStreamDelta:
        function = ChatMessageToolCallFunction(name=name, arguments=arguments)
        delta = ChatMessageToolCallStreamDelta(index=0, id=call_id, type="function", function=function)
        return ChatMessageStreamDelta(tool_calls=[delta])

    text = ChatMessageStreamDelta(content=TEXT)
    turns = (
        [text] * (n - 1) + [call("noop", "{}", "call_1")],
        [text] * (n - 1) + [call("final_answer", '{"answer": "done"}', "call_2")],
    )

    class ScriptedStream(Model):
        """Streams the scripted turns; turn 2 once a tool's response is in the messages."""

        def generate_stream(self, messages: list[Any], **kwargs: Any) -> Iterator[ChatMessageStreamDelta]:
            second = any(m.role == MessageRole.TOOL_RESPONSE for m in messages)
            yield from turns[second]

        def generate(self, messages: list[Any], **kwargs: Any) -> ChatMessage:
            raise NotImplementedError("this benchmark only streams")

    clock = ToolClock()

    class Noop(Tool):
        name = "noop"
        description = 'Return "ok" at once.'
        inputs: ClassVar[dict[str, Any]] = {}
        output_type = "string"

        def forward(self) -> str:
            return clock.noop()

    model = ScriptedStream(model_id="scripted")
    # Logging off; the live display that streaming always opens draws into a string, not a terminal.
    logger = AgentLogger(level=LogLevel.OFF, console=Console(file=io.StringIO()))
    agent = ToolCallingAgent(tools=[Noop()], model=model, stream_outputs=True, logger=logger, max_steps=4)
    histories = (
        [ChatMessage(role=MessageRole.USER, content=PROMPT)],
        [ChatMessage(role=MessageRole.TOOL_RESPONSE, content="ok")],
    )

    async def sample() -> Sample:
        started = time.perf_counter()
        for history in histories:
            for _ in model.generate_stream(history):
                pass
        model_seconds = time.perf_counter() - started

        clock.seconds = 0.0
        logger.console.file = io.StringIO()
        started = time.perf_counter()
        output = agent.run(PROMPT)
        agent_seconds = time.perf_counter() - started
        _check(output == "done" and len(agent.memory.steps) == 3, "smolagents' answer")
        # Its model interface is the bare generator itself: script time and model time are one.
        return Sample(model_seconds, model_seconds, agent_seconds, clock.seconds, clock.seconds)

    return sample
