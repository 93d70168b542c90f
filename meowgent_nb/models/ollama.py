"""`OllamaModel`: a model served by Ollama, streamed through the official ``ollama`` client.

Every way talking to the server can fail is translated here, once, into a `ModelError` whose
message says how to fix it (start the server, pull the model, allow a longer timeout). The
original exception stays attached as ``__cause__``. A line the client cannot read, and counts,
durations, names or arguments out of range, are a `ModelError` naming the field and the value.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from types import MappingProxyType
from typing import Any, cast

import httpx
import ollama
import pydantic

from .._redact import shown_address
from ..tools.core import ToolCall
from . import check_model_requests_allowed
from .base import (
    Arrived,
    ModelChunk,
    ModelError,
    ModelRequest,
    RetryCause,
    ToolSupport,
    Usage,
    awaiting,
    waited,
)
from .wire_values import (
    BUSY,
    MAX_DEPTH,
    WireError,
    busy_cause,
    count,
    cut,
    finish_reason,
    name,
    nests_deeper,
    shown,
    template_opens_thinking,
    text,
    unicode,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_OPTIONS", "OllamaModel"]

DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where the ``ollama`` client connects when neither ``host`` nor ``OLLAMA_HOST`` is set."""

DEFAULT_OPTIONS: Mapping[str, Any] = MappingProxyType({"num_ctx": 16384, "temperature": 0.1})
"""Options sent unless overridden. Ollama's own context default (a few thousand tokens) silently
cuts the start of a long prompt, which is where the system prompt and its tools are; a low
temperature keeps tool calls well-formed."""

_TIMEOUT_KINDS = {
    httpx.ConnectTimeout: "connecting took longer than {t:g} s",
    httpx.ReadTimeout: "no data arrived for {t:g} s while waiting for the answer",
    httpx.WriteTimeout: "sending the request took longer than {t:g} s",
    httpx.PoolTimeout: "no free connection within {t:g} s",
}


class OllamaModel:
    """A chat model served by Ollama.

    Nothing is contacted until the first request. Options are merged in three layers, later ones
    winning: `DEFAULT_OPTIONS`, this model's ``options``, each request's ``options``; a value of None
    removes the option, so the server's default applies.

    Args:
        name: The Ollama model name, e.g. ``"qwen2.5:0.5b"``.
        host: The server's address. Defaults to ``OLLAMA_HOST`` (read now), then `DEFAULT_HOST`.
        options: Ollama options for every request (``num_ctx``, ``temperature``, ``seed``...).
        think: Ask a thinking model to think (True) or not (False); None leaves it to the model.
            A request's own ``think``, when not None, wins.
        timeout: Seconds each step of a request may take (connecting, sending, each next piece of
            the answer), not the whole answer.
        images: Whether the model is given the images in tool results (a vision model). None: ask
            the server once, the first time a result has one (`accepts_images`).
        shown: The server's ``/api/show`` answer for the model, where it was already asked
            (`resolve_model` asks it for a name): `accepts_images` and `tool_support` read it
            instead of asking again. None: they ask, once.

    The arguments are kept as attributes of the same names, ``host`` as resolved.
    """

    provider = "ollama"
    """``gen_ai.provider.name`` in its spans (see `agent.tracing`)."""

    def __init__(
        self,
        name: str,
        host: str | None = None,
        options: Mapping[str, Any] | None = None,
        think: bool | None = None,
        timeout: float = 300.0,
        images: bool | None = None,
        shown: Mapping[str, Any] | None = None,
    ):
        self.name = name
        self.images = images
        # An empty OLLAMA_HOST means unset, as it does for the ollama client.
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.options = dict(options or {})
        self.think = think
        self.timeout = timeout
        self._client: ollama.AsyncClient | None = None
        self._shown: ollama.ShowResponse | None = None  # /api/show, asked once
        if shown is not None:
            try:
                self._shown = ollama.ShowResponse.model_validate(dict(shown))
            except pydantic.ValidationError:  # not an answer the client reads: asked again
                pass

    def __repr__(self) -> str:
        return f"OllamaModel({self.name!r}, host={shown_address(self.host)!r})"

    @property
    def n_ctx(self) -> int | None:
        """The context window requests get: this model's ``num_ctx``, else the one sent by default."""
        size = {**DEFAULT_OPTIONS, **self.options}.get("num_ctx")
        return size if isinstance(size, int) and not isinstance(size, bool) else None

    @property
    def description(self) -> str:
        """``"qwen2.5:0.5b via Ollama at http://127.0.0.1:11434"``; a password in the host is left out."""
        return f"{self.name} via Ollama at {shown_address(self.host)}"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request``, one chunk per part the server sends.

        A caller that stops before the last chunk should close the stream (``async with
        contextlib.aclosing(model.stream(request))``), so the HTTP response closes at once.

        Args:
            request: The messages, tools (passed natively), ``think``, options and ``format`` (a
                JSON schema the server constrains the answer to) of this turn.

        Yields:
            A `ModelChunk` per streamed part; the last has ``done=True``, the `Usage` and the
            server's ``done_reason`` as ``finish_reason``.

        Raises:
            ModelError: Requests are not allowed (`ALLOW_MODEL_REQUESTS`), or talking to the
                server failed; the message says how to fix it.
        """
        check_model_requests_allowed(f"the Ollama server at {self.host}")
        options = {**DEFAULT_OPTIONS, **self.options, **request.options}
        think = self.think if request.think is None else request.think
        sent = time.monotonic()
        try:
            parts = await self._get_client().chat(
                model=self.name,
                messages=list(request.messages),
                tools=[tool.to_json_schema() for tool in request.tools] or None,
                stream=True,
                think=think,
                format=dict(request.format) if request.format is not None else None,
                options={key: value for key, value in options.items() if value is not None},
            )
            # The client's stream is an async generator; its annotation says only AsyncIterator.
            parts = cast("AsyncGenerator[ollama.ChatResponse, None]", parts)
            # aclosing: when the caller stops early, the HTTP response is closed now, not at
            # garbage collection (possibly after its event loop is gone).
            async with aclosing(parts) as parts:
                read = _read(parts).__aiter__()
                part: Any = None
                async for got in awaiting(anext(read, None)):  # a queued request waits here
                    if isinstance(got, Arrived):
                        part = got.value
                    else:
                        yield got
                first = time.monotonic()
                while part is not None:
                    yield _waited(_chunk(part), first - sent)
                    if part.done:
                        return
                    part = await anext(read, None)
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError, json.JSONDecodeError) as exc:
            raise self._error(exc) from exc
        except WireError as exc:
            raise ModelError(self._wire_error(exc)) from None
        raise self._cut_off("the stream ended without its final `done` message")

    async def accepts_images(self) -> bool:
        """Whether the model reads images: ``images`` when given, else the server's word, asked once.

        A server that cannot be asked (not running, requests not allowed) means no: the model
        still reads each image's placeholder in the text.
        """
        if self.images is None:
            shown = await self._show()
            if shown is None:
                return False  # asked again next time: the server may be up by then
            self.images = "vision" in (shown.capabilities or [])
        return self.images

    async def tool_support(self) -> ToolSupport:
        """The protocol the model gets when none is chosen, from ``/api/show`` (asked once, as for images).

        ``native`` when its capabilities hold ``tools`` (its template writes and reads tool
        calls), else ``xml``; ``thinking_first`` when it has ``thinking`` and its template opens
        the think block itself (`wire_values.template_opens_thinking`). A server that cannot be
        asked means ``xml``, which works with any model (asked again next time).
        """
        shown = await self._show()
        if shown is None:
            return ToolSupport("xml", "Ollama did not say what the model's template has")
        capabilities = shown.capabilities or []
        thinking_first = "thinking" in capabilities and template_opens_thinking(shown.template or "")
        if "tools" in capabilities:
            return ToolSupport("native", "the model's template has tools", thinking_first)
        return ToolSupport("xml", "the model's template has no tools", thinking_first)

    async def _show(self) -> ollama.ShowResponse | None:
        """The server's ``/api/show`` of the model, asked once; None when it cannot be asked."""
        if self._shown is None:
            try:
                check_model_requests_allowed(f"the Ollama server at {self.host}")
                self._shown = await self._get_client().show(self.name)
            except Exception:  # noqa: BLE001 - not knowing is answered by each caller
                return None
        return self._shown

    async def list_models(self) -> list[str]:
        """The names of the models the server has, e.g. ``["qwen2.5:0.5b"]``.

        Raises:
            ModelError: Requests are not allowed, or the server cannot be reached.
        """
        check_model_requests_allowed(f"the Ollama server at {self.host}")
        try:
            response = await self._get_client().list()
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError, json.JSONDecodeError) as exc:
            raise self._error(exc) from exc
        except (pydantic.ValidationError, TypeError, ValueError, RecursionError) as exc:
            raise ModelError(self._wire_error(_unread(exc), listing=True)) from None
        return [model.model for model in response.models if model.model]

    def _get_client(self) -> ollama.AsyncClient:
        if self._client is None:
            # No kept-alive connections: a pooled socket belongs to the event loop that opened
            # it, and scripts and tests run each request under a fresh asyncio.run(). A new
            # local connection per answer costs far less than the answer itself.
            self._client = ollama.AsyncClient(
                host=self.host,
                timeout=self.timeout,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return self._client

    def _error(self, exc: Exception) -> ModelError:
        """Translate what the client or the transport raised into an error that says what to do."""
        where = f"the Ollama server at {self.host}"
        if isinstance(exc, ollama.ResponseError):
            busy = exc.status_code in BUSY
            return ModelError(
                self._response_error(exc), retry=busy_cause(exc.status_code, None) if busy else None
            )
        # ollama raises a builtin ConnectionError (with its own text) for plain requests, while a
        # streamed request lets httpx.ConnectError through.
        if isinstance(exc, (httpx.ConnectError, ConnectionError)):
            return ModelError(
                f"Cannot reach {where}: is it running? Start it with `ollama serve`"
                " (or set OLLAMA_HOST to where it runs).",
                retry=RetryCause("refused", "the server could not be reached (it may be restarting)"),
            )
        if isinstance(exc, httpx.TimeoutException):
            what = next(
                (text for kind, text in _TIMEOUT_KINDS.items() if isinstance(exc, kind)),
                "the request took longer than {t:g} s",
            ).format(t=self.timeout)
            return ModelError(
                f"Timed out talking to {where}: {what}. The model may still be loading, or the"
                f" machine is slow: allow longer with OllamaModel({self.name!r},"
                f" timeout={self.timeout * 2:g})."
            )
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            return self._cut_off("the connection closed before the answer was complete")
        if isinstance(exc, json.JSONDecodeError):
            # A line that starts like JSON was cut; anything else is not Ollama talking.
            if exc.doc.lstrip().startswith("{"):
                return self._cut_off("its last line was incomplete")
            return ModelError(
                f"The server at {self.host} did not answer like an Ollama server (it sent"
                f" {exc.doc[:60]!r}): check the host= you passed or OLLAMA_HOST."
            )
        return ModelError(f"Could not talk to {where}: {type(exc).__name__}: {exc}")

    def _response_error(self, exc: ollama.ResponseError) -> str:
        error = cut(str(exc.error))
        lowered = error.lower()
        if exc.status_code == 404 and "model" in lowered and "not found" in lowered:
            return (
                f"Model '{self.name}' is not available on the Ollama server at {self.host}:"
                f" pull it with `ollama pull {self.name}`."
            )
        if exc.status_code == -1:  # an {"error": ...} line in the middle of a 200 stream
            return f"The Ollama server at {self.host} reported an error mid-answer: {error}"
        message = f"The Ollama server at {self.host} answered HTTP {exc.status_code}: {error}"
        if "does not support tools" in lowered:
            message += " (use the `xml` tool protocol, which works with any model)"
        elif "does not support thinking" in lowered:
            message += " (pass think=None or False, or use a thinking model)"
        elif exc.status_code in BUSY:
            message += (
                ". The server is busy or not ready (its queue is full, or it is starting): wait a"
                " minute and run the cell again; if it keeps saying so, tell whoever runs it"
                " (OLLAMA_NUM_PARALLEL and OLLAMA_MAX_QUEUE set how many it serves and holds)."
            )
        return message

    def _wire_error(self, exc: WireError | str, listing: bool = False) -> str:
        """What to say when the server sent what the API does not allow (``exc`` names it)."""
        doing = "listing its models" if listing else f"answering as '{self.name}'"
        kept = "" if listing else " This answer was dropped and the conversation is kept: try again."
        return (
            f"The Ollama server at {self.host} sent what Ollama's API does not allow, {doing}: {exc}.{kept}"
            " If it recurs, the server (or a proxy in front of it) is not Ollama, or not a version this"
            " client reads: check its version and its log."
        )

    def _cut_off(self, detail: str) -> ModelError:
        return ModelError(
            f"The connection to the Ollama server at {self.host} was cut off mid-answer ({detail}):"
            " the server may have stopped, restarted or crashed (check its log); Ollama queues"
            " requests, so another student's request does not do this.",
            retry=RetryCause("cut", "the server cut the answer (it may have restarted)"),
        )


async def _read(parts: AsyncIterator[ollama.ChatResponse]) -> AsyncIterator[ollama.ChatResponse]:
    """The parts the client reads, with a line it cannot read as a `WireError` saying what came.

    A cut or non-JSON line stays a `json.JSONDecodeError`, which `OllamaModel._error` explains.
    """
    while True:
        try:
            part = await parts.__anext__()
        except StopAsyncIteration:
            return
        except json.JSONDecodeError:
            raise
        except (pydantic.ValidationError, AttributeError, TypeError, ValueError, RecursionError) as exc:
            raise WireError(_unread(exc)) from None
        yield part


def _unread(exc: Exception) -> str:
    """What the client could not read, from what it raised (the type checks are pydantic's)."""
    if isinstance(exc, pydantic.ValidationError):
        problems = [
            f"{'.'.join(map(str, error['loc'])) or 'the line'} is {shown(error['input'])} ({error['msg']})"
            for error in exc.errors(include_url=False)[:3]
        ]
        more = exc.error_count() - len(problems)
        return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")
    if isinstance(exc, AttributeError) and not isinstance(getattr(exc, "obj", None), dict):
        return f"a line that is {shown(exc.obj)}, not a JSON object"
    if isinstance(exc, RecursionError):
        return "a line whose JSON nests deeper than it can be read"
    return f"a line the ollama client cannot read ({type(exc).__name__}: {shown(str(exc))})"


def _waited(chunk: ModelChunk, seconds: float) -> ModelChunk:
    """``chunk`` with, on the last, the ``seconds`` to the first part less Ollama's own work on
    the request before it (loading the model, reading the prompt): its queue."""
    usage = chunk.usage
    if usage is None:
        return chunk
    queued = waited(seconds - (usage.load_seconds or 0.0) - (usage.prompt_seconds or 0.0))
    return dataclasses.replace(chunk, usage=dataclasses.replace(usage, waited_seconds=queued))


def _chunk(part: ollama.ChatResponse) -> ModelChunk:
    """One part as a chunk; its counts, durations and call arguments checked (`WireError`)."""
    message = part.message
    calls = []
    for position, call in enumerate(message.tool_calls or ()):
        arguments = dict(call.function.arguments)
        name(call.function.name, f"message.tool_calls.{position}.function.name")
        if nests_deeper(arguments):
            raise WireError(
                f"message.tool_calls.{position}.function.arguments of {shown(call.function.name)}"
                f" nest deeper than {MAX_DEPTH} levels"
            )
        unicode(arguments, f"message.tool_calls.{position}.function.arguments")
        # Ollama 0.6's client keeps no call id, so results are paired with calls by order.
        calls.append(ToolCall(call.function.name, arguments, id=""))
    usage = None
    if part.done:
        usage = Usage(
            prompt_tokens=count(part.prompt_eval_count, "prompt_eval_count"),
            completion_tokens=count(part.eval_count, "eval_count"),
            total_seconds=_seconds(part.total_duration, "total_duration"),
            load_seconds=_seconds(part.load_duration, "load_duration"),
            prompt_seconds=_seconds(part.prompt_eval_duration, "prompt_eval_duration"),
            completion_seconds=_seconds(part.eval_duration, "eval_duration"),
        )
    return ModelChunk(
        text=text(message.content, "message.content"),
        thinking=text(message.thinking, "message.thinking"),
        tool_calls=tuple(calls),
        done=bool(part.done),
        usage=usage,
        # Ollama's words as they are: "stop", "length" (num_predict or the context), "load"...
        finish_reason=finish_reason(part.done_reason, "done_reason") if part.done else None,
    )


_LONGEST = 10**18
"""Nanoseconds a duration may be (about 31 years): more is no duration a request took."""


def _seconds(nanoseconds: int | None, field: str) -> float | None:
    if nanoseconds is None:
        return None
    if not 0 <= nanoseconds <= _LONGEST:
        raise WireError(
            f"{field} is {shown(nanoseconds)}, not a duration in nanoseconds (a whole number from 0)"
        )
    return nanoseconds / 1e9
