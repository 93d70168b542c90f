"""The model protocol every backend implements, and the values that cross it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from .._deltas import TextDelta, ThinkingDelta
from ..errors import MeowgentError
from ..tools.core import Tool, ToolCall

__all__ = [
    "CallParser",
    "CassetteError",
    "Model",
    "ModelChunk",
    "ModelError",
    "ModelRequest",
    "RetryCause",
    "StreamCut",
    "ToolSupport",
    "ToolsRefused",
    "Usage",
    "describe_model",
]


_T = TypeVar("_T")

RetryKind = Literal["cut", "refused", "busy", "unavailable"]
"""Why a request failed in a way asking again may mend: the server cut its answer (``cut``), the
connection was refused or reset before any answer (``refused``), the server said it is busy (HTTP
429, ``busy``) or not ready (HTTP 502, 503, 504, a server restarting: ``unavailable``)."""


@dataclass(frozen=True)
class RetryCause:
    """Why the same request, asked again, may be answered: nothing of the failed answer can have
    been used, and the server may serve it once another request is done or it is up again.

    A backend sets it on the `ModelError` it raises (``error.retry``); the agent then asks again
    (see `Agent`'s ``retry_attempts``). Other failures (a refused key, an unknown model, a bad
    option, a value the API does not allow) have none and are never asked again.
    """

    kind: RetryKind
    words: str
    """What happened, for the line a person reads: "the server cut the answer (another request
    took its turn)"."""
    retry_after: float | None = None
    """Seconds the server asked to be given (its ``Retry-After``), or None."""
    draw: float | None = None
    """A number from 0 to 1 that set the jitter of the wait after this failure, when it must be
    the same again (a cassette records it); None: the agent draws one."""
    replayed: bool = False
    """The failure is a recording played back: the agent shows the wait and does not wait."""


class ModelError(MeowgentError):
    """A model backend failed; the message says how to fix it (start the server, pull the model).

    Args:
        message: What failed and how to fix it.
        retry: Why asking the same request again may help (`RetryCause`), or None: it would not.
    """

    def __init__(self, *args: Any, retry: RetryCause | None = None):
        super().__init__(*args)
        self.retry = retry
        """Why asking the same request again may help, or None: it would not."""


class StreamCut(ModelError):
    """The server ended an answer's stream before the answer was complete: events had arrived,
    then the stream ended (or the connection closed) with no event carrying a ``finish_reason``.

    llama-cpp-python's server does this by default (``interrupt_requests``) to the answer it is
    streaming when another request arrives; its ``retry`` says so unless the conversation was
    near the model's context window (then None). An eval running cases at once reruns such cases
    one at a time (`evals.evaluation.aevaluate`).
    """


class CassetteError(ModelError):
    """A cassette is missing, unreadable, or has no recording of a request."""


@dataclass(frozen=True)
class Usage:
    """Token counts and durations of one model request, where the backend reports them."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_seconds: float | None = None
    load_seconds: float | None = None
    prompt_seconds: float | None = None
    """Time spent reading the prompt."""
    completion_seconds: float | None = None
    """Time spent generating the answer."""
    waited_seconds: float | None = None
    """Time from sending the request to a server until its first token that was not the model's
    work: its queue, another request's turn. None where the backend does not know it (the
    embedded model has no queue) or it was under half a second."""

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed, when both the count and the duration are known."""
        if self.completion_tokens is None or not self.completion_seconds:
            return None
        return self.completion_tokens / self.completion_seconds

    def __add__(self, other: Usage) -> Usage:
        def plus(a: Any, b: Any) -> Any:
            return b if a is None else a if b is None else a + b

        return Usage(
            plus(self.prompt_tokens, other.prompt_tokens),
            plus(self.completion_tokens, other.completion_tokens),
            plus(self.total_seconds, other.total_seconds),
            plus(self.load_seconds, other.load_seconds),
            plus(self.prompt_seconds, other.prompt_seconds),
            plus(self.completion_seconds, other.completion_seconds),
            plus(self.waited_seconds, other.waited_seconds),
        )


WAIT_NOTICE = 1.0
"""Seconds without an answer after which a server backend says it is waiting for the server."""
WAITING = "waiting for the server"
"""The status (`ModelChunk.status`) a server backend streams while its request waits."""
WAIT_COUNTED = 0.5
"""Seconds of waiting under which a backend reports no `Usage.waited_seconds` (no queue to speak of)."""


@dataclass(frozen=True)
class Arrived(Generic[_T]):
    """What `awaiting` awaited, once it came."""

    value: _T


async def awaiting(
    awaitable: Awaitable[_T], *, after: float = WAIT_NOTICE
) -> AsyncIterator[ModelChunk | Arrived[_T]]:
    """Await ``awaitable``; if it takes longer than ``after`` seconds, first yield the status chunk
    `WAITING`, then `Arrived` with its value (what it raises propagates; closing cancels it).

    A server backend awaits its request and the first piece of its answer with it, so a person
    hears that the wait is the server's.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=after)
        if not done:
            yield ModelChunk(status=WAITING)
        yield Arrived(await task)
    finally:
        task.cancel()  # nothing, once it is done


def waited(seconds: float) -> float | None:
    """``seconds`` of waiting as `Usage.waited_seconds` reports it: to a tenth, None under `WAIT_COUNTED`."""
    return round(seconds, 1) if seconds >= WAIT_COUNTED else None


class CallParser(Protocol):
    """Reads the calls in a model's streamed text (`ModelRequest.call_parser` makes one).

    `feed` each piece of text, then `close` once; both return what the text has become so far:
    `TextDelta`, `ThinkingDelta` and `ToolCall` values, in order.
    """

    def feed(self, text: str) -> Sequence[TextDelta | ThinkingDelta | ToolCall]: ...

    def close(self, finish_reason: str | None = None) -> Sequence[TextDelta | ThinkingDelta | ToolCall]: ...


@dataclass(frozen=True)
class ModelRequest:
    """Everything a model is sent for one turn."""

    messages: Sequence[Mapping[str, Any]]
    """Ollama-style chat messages: ``{"role", "content"}``, plus ``thinking``, ``tool_calls``
    (assistant) or ``tool_name`` (tool) where they apply. The first is the system prompt."""
    tools: Sequence[Tool] = ()
    """Tools passed natively (``tools=``); empty for the ``xml`` protocol, whose tools are in the
    system prompt."""
    offered: Sequence[Tool] = ()
    """The tools the model may call this turn, whatever the protocol (what offline models that
    compute answers, like `FunctionModel`, look at); backends send only ``tools``."""
    think: bool | None = None
    """Ask a thinking model to think (True), not to (False), or leave it to the model (None)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Backend options that change the output (``temperature``, ``num_ctx``, ``seed``...)."""
    format: Mapping[str, Any] | None = None
    """A JSON schema the whole answer must follow (the ``json`` protocol), or None for free text."""
    call_format: Mapping[str, Any] | None = None
    """The JSON schema of a tool call (``xml`` and ``native``; see `protocols.xml.call_schema`):
    a backend that can constrains a call's arguments once the model has named an offered tool.
    An array schema is a whole list of calls (the ``list`` protocol, `protocols.list.list_schema`):
    a backend that can constrains a list the model opens with ``[``, and leaves text free.
    Backends that cannot constrain part of an answer (Ollama) ignore it; the agent validates
    every call anyway."""
    call_tag: str | None = None
    """With `call_format`: the tag that opens a call in the text (``<tool_call>``). A call's JSON
    begins after it, or at the start of the answer (models that drop the tag write bare calls)."""
    call_grounding: bool = False
    """With a list `call_format` (the ``decide`` protocol): a second look at the calls a backend
    that can (`LlamaCppModel`) has the model write. A list none of whose calls has an argument value
    found in the person's messages (`tools.grounding.any_grounded`) is taken back before it is shown,
    and the model answers in text instead. Backends that cannot ignore it."""
    call_parser: Callable[[], CallParser] | None = None
    """With native ``tools``: makes the reader of the calls a model writes as text, for a backend
    that gets text from its model and must return the calls as `ModelChunk.tool_calls`
    (`LlamaCppModel`). Set by the protocol that builds the request; backends whose server parses
    the calls (Ollama) ignore it."""


@dataclass(frozen=True)
class ModelChunk:
    """One streamed piece of a model's answer."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls the backend parsed itself (``native`` protocol)."""
    done: bool = False
    """True on the last chunk of a request."""
    usage: Usage | None = None
    """On the last chunk, where the backend reports it."""
    finish_reason: str | None = None
    """On the last chunk, why it stopped: "stop", "length" (token limit), the backend's word, or None."""
    status: str | None = None
    """What the backend is doing before its answer begins ("loading the model (first time, ~491
    MB)"), for the person waiting; not part of the answer, never recorded. None: no news."""


@runtime_checkable
class Model(Protocol):
    """A chat model that streams. ``name`` is what the person sees in listings and errors.

    A model may also have a ``description``: which model and backend answer, in a few words
    ("qwen2.5:0.5b via Ollama at http://127.0.0.1:11434"), shown at the top of a transcript.
    It is optional (`describe_model` falls back to ``name``), so it is not part of the protocol.
    Nor is ``count_tokens(text) -> int``, the tokens a text takes in the model's prompt: where a
    model has it (`LlamaCppModel`), an eval counts the tools block with it instead of estimating.
    Nor is ``accepts_images`` (a bool, or a coroutine function answering one): whether the images
    in tool results are put on the messages for it (`agent._images`; `OllamaModel` and
    `OpenAIModel` ask their server).
    Nor is ``max_concurrency``, how many requests it answers at once (1: `LlamaCppModel`,
    `ScriptedModel`), which caps an eval's ``concurrency``.
    Nor is ``tool_support()``, a coroutine answering a `ToolSupport`: the protocol the agent uses
    when none is chosen (`OllamaModel` asks its server, `OpenAIModel` says ``native`` until its
    server refuses tools; others get ``xml``).
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request``; the last chunk has ``done=True``.

        Raises:
            ModelError: The backend failed; the message says how to fix it.
        """
        ...


class ToolsRefused(ModelError):
    """The server refuses tools sent natively (``tools=``): the ``native`` protocol cannot be used.

    An agent that follows the model (``protocol="auto"``) asks the same turn again with ``xml``.
    """

    def __init__(self, message: str, words: str):
        super().__init__(message)
        self.words = words
        """What the server said, for the cell's model line."""


@dataclass(frozen=True)
class ToolSupport:
    """What a model's template says about tool calls: the protocol it gets when none is chosen, and why.

    A backend answers it from its server (`OllamaModel.tool_support`: Ollama's ``/api/show``
    capabilities); a cassette records it, so a replay asks no server.
    """

    protocol: str
    """``"native"``, ``"xml"`` or, for the embedded models, ``"decide"`` (`protocols.registry.PROTOCOLS`)."""
    why: str
    """The reason in a few words, for the cell's model line: "the model's template has tools"."""
    thinking_first: bool = False
    """The template opens a think block before the answer (Qwen3's thinking models pre-fill
    ``<think>``): a text protocol's parser reads the answer as thinking up to ``</think>``."""

    def __str__(self) -> str:
        return f"{self.protocol} tool calls ({self.why})"


def describe_model(model: Any) -> str:
    """Which model and backend answer, for a person: ``model.description``, else its ``name``.

    Args:
        model: Any `Model`; the ``description`` of the package's own models names the backend
            ("Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp)").
    """
    description = getattr(model, "description", None)
    if isinstance(description, str) and description.strip():
        return description.strip()
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else type(model).__name__
