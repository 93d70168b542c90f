"""`OpenAIModel`: a model behind any OpenAI-compatible Chat Completions server, streamed.

vLLM, SGLang, llama.cpp's ``llama-server``, LM Studio and Ollama's ``/v1`` all speak this API,
through the official ``openai`` client (the ``openai`` extra), imported by the first request.
Every way a request can fail is translated here, once, into a `ModelError` that says how to fix
it; what the server streams is checked field by field (`_openai_wire.read_event`). The API key
never appears in a repr, a description or an error message.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from .._deltas import TextDelta
from .._redact import redact, reveals, shown_address
from . import check_model_requests_allowed
from ._llama_text import chunks
from ._openai_wire import (
    CallDeltas,
    StreamEvent,
    error_words,
    openai_messages,
    read_call,
    read_event,
    read_models,
    server_events,
)
from .base import (
    Arrived,
    ModelChunk,
    ModelError,
    ModelRequest,
    RetryCause,
    StreamCut,
    ToolsRefused,
    ToolSupport,
    Usage,
    awaiting,
    waited,
)
from .wire_values import BUSY, WireError, busy_cause, cut, shown, vision_said

if TYPE_CHECKING:
    from openai import APIStatusError  # the client is imported when the first request is made

__all__ = ["DEFAULT_BASE_URL", "NO_KEY", "OpenAIModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when neither ``base_url`` nor ``OPENAI_BASE_URL`` is set (the client's default)."""
NO_KEY = "not-needed"
"""The key sent when neither ``api_key`` nor ``OPENAI_API_KEY`` is set: local servers need none,
and the client refuses to start without one."""
INSTALL_OPENAI = 'pip install "meowgent-nb[openai]"'
# Where servers say whether their model reads images (see OpenAIModel.accepts_images); body: a POST's.
_VISION_SAID_AT = (
    ("GET", "/props", False),
    ("POST", "/api/show", True),
    ("GET", "/api/v0/models/{name}", False),
)

_END = object()  # the end of the server's events

# What servers answer a request with tools they do not take: Ollama's /v1 ("... does not support
# tools"), vLLM started without a tool parser ('"auto" tool choice requires
# --enable-auto-tool-choice and --tool-call-parser to be set'), llama-server without --jinja
# ("tools param requires --jinja flag").
_REFUSES_TOOLS = re.compile(
    r"does not support tools|tool choice requires --enable-auto-tool-choice|tools param requires",
    re.IGNORECASE,
)

NEAR_WINDOW = 0.85
"""How full the context window a conversation must be for a cut answer to be put down to it."""

# The request options read here: Ollama's names (requests carry Ollama-style options) -> the API's.
_OPTIONS = {
    "temperature": "temperature",
    "seed": "seed",
    "num_predict": "max_tokens",
    "max_tokens": "max_tokens",
    "top_p": "top_p",
    "stop": "stop",
}


class OpenAIModel:
    """A chat model served over the OpenAI Chat Completions API.

    Nothing is contacted until the first request. Options are merged in two layers, the request's
    winning over the model's; a value of None leaves the option to the server.

    Args:
        name: The model's name on the server (vLLM's model id, llama-server's ``--model_alias``).
        base_url: The API's address, usually ending in ``/v1``. Defaults to ``OPENAI_BASE_URL``
            (read now), then `DEFAULT_BASE_URL`.
        api_key: Sent as the bearer token. Defaults to ``OPENAI_API_KEY`` (read now), then
            `NO_KEY`. Kept out of reprs, descriptions and errors.
        options: Ollama-style options for every request: ``temperature``, ``seed``,
            ``num_predict`` (or ``max_tokens``), ``top_p``, ``stop``.
        timeout: Seconds each step of a request may take (connecting, sending, each next piece of
            the answer), not the whole answer.
        tool_choice: Passed through with native tools (``"auto"``, ``"required"``...); None
            leaves it to the server.
        n_ctx: The server's context window in tokens, where known: a long conversation is then
            compacted to fit it (`agent.window.compaction`). None: not known here.
        schema_format: How the ``json`` protocol's schema is sent: ``"json_schema"`` (the API's
            ``response_format``), or ``"json_object"`` with the schema beside it (llama-cpp-python's
            server).
        images: Whether the model is given the images in tool results, as ``image_url`` parts.
            None: ask the server once (`accepts_images`); without an answer, text only.

    Attributes:
        name: The model name.
        base_url: The API's address, as used in errors.
        options: The options for every request.
        timeout: The per-step timeout in seconds.

    Raises:
        ModelError: ``schema_format`` or ``n_ctx`` is not one the class takes, or an option is unknown.
    """

    provider = "openai"
    """``gen_ai.provider.name`` in its spans (see `agent.tracing`)."""

    def __init__(
        self,
        name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        options: Mapping[str, Any] | None = None,
        timeout: float = 300.0,
        tool_choice: str | None = None,
        schema_format: Literal["json_schema", "json_object"] = "json_schema",
        n_ctx: int | None = None,
        images: bool | None = None,
    ):
        self.name = name
        # Empty means unset, as for the client.
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.options = dict(options or {})
        self.timeout = timeout
        self.tool_choice = tool_choice
        if schema_format not in ("json_schema", "json_object"):
            raise ModelError(f'schema_format must be "json_schema" or "json_object", not {schema_format!r}.')
        self.schema_format = schema_format
        if n_ctx is not None and (isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1):
            raise ModelError(
                f"n_ctx must be a positive number of tokens (the server's context window), not {n_ctx!r}."
            )
        self.n_ctx = n_ctx
        self.images = images
        self.refused: str | None = None
        """What the server said when it refused a request's tools (`ToolsRefused`), or None."""
        self._check_options(self.options)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, base_url={self._shown_url!r})"

    @property
    def description(self) -> str:
        """``"Qwen2.5-7B via OpenAI-compatible server at http://gpu:8000/v1"`` (no credentials)."""
        return f"{self.name} via OpenAI-compatible server at {self._shown_url}"

    @property
    def _shown_url(self) -> str:
        return self._redact(shown_address(self.base_url))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request``, one chunk per piece the server sends.

        Native tools go as ``tools=``, and the calls come back as `ModelChunk.tool_calls` once
        the answer is complete. A server that gives its model's calls back as text (as
        llama-cpp-python's does for Qwen) has them read by ``request.call_parser``. ``format``
        goes as a ``response_format``. ``think`` is not sent (the API has no such field); a
        server's reasoning deltas (``reasoning_content``) arrive as thinking.

        Args:
            request: The messages, native tools, options and ``format`` of this turn.

        Yields:
            A `ModelChunk` per streamed piece; the last has ``done=True``, the server's
            ``finish_reason`` and, where the server reports it, the `Usage`.

        Raises:
            ModelError: Requests are not allowed (`ALLOW_MODEL_REQUESTS`), an option is unknown,
                talking to the server failed, or it sent a value the API does not allow (the
                conversation is kept); the message says how to fix it.
        """
        check_model_requests_allowed(f"the OpenAI-compatible server at {self._shown_url}")
        options = {**self.options, **request.options}
        self._check_options(options)
        openai, client = self._client()
        body = self._body(request, options)
        parser = request.call_parser() if request.tools and request.call_parser else None
        calls, reason, usage, seen, events = CallDeltas(), None, None, False, False
        sent, first = time.monotonic(), None
        try:
            async with client:
                # The events as the JSON the server sent (cast_to=object), read by read_event:
                # the client's typed chunks are built without checks, so odd values got through.
                posted = client.post(
                    "/chat/completions",
                    body=body,
                    cast_to=object,
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                )
                stream: Any = None
                async for got in awaiting(posted):  # a queued request waits here (llama-cpp-python)...
                    if isinstance(got, Arrived):
                        stream = got.value
                    else:
                        yield got
                events = "event-stream" in stream.response.headers.get("content-type", "")
                async with stream:
                    pending = server_events(stream).__aiter__()
                    while True:
                        data: Any = _END
                        if first is not None:
                            data = await anext(pending, _END)
                        else:
                            async for got in awaiting(anext(pending, _END)):  # ...or here (vLLM)
                                if isinstance(got, Arrived):
                                    data = got.value
                                else:
                                    yield got
                        if data is _END:
                            break
                        seen = True
                        event = read_event(data)
                        usage = event.usage or usage
                        reason = event.finish_reason or reason
                        if first is None and (event.content or event.thinking or event.calls):
                            first = time.monotonic()
                        for piece in _delta_chunks(event, parser):
                            yield piece
                        calls.add(event.calls)
            read = [read_call(call) for call in calls.calls()]
        except openai.OpenAIError as exc:
            cause = None if self._leaks(exc) else exc
            # The client reports a connection lost mid-stream as a connection error too.
            if seen and type(exc) is openai.APIConnectionError:
                detail = "the connection closed before the answer was complete"
                raise self._cut(detail, request) from cause
            raise self._error(exc, openai) from cause
        except WireError as exc:
            raise ModelError(self._redact(self._wire_error(exc))) from None
        if not seen and events:  # an event stream, but not one event: the server gave up
            raise self._unbegun(request)
        if not seen:
            raise ModelError(
                f"The server at {self._shown_url} did not answer like an OpenAI-compatible server"
                " (its answer had no Chat Completions events): check base_url / OPENAI_BASE_URL,"
                " which usually ends in /v1."
            )
        if reason is None:
            raise self._cut("the stream ended without a finish_reason", request)
        if first is not None and waited(first - sent) is not None:
            usage = dataclasses.replace(usage or Usage(), waited_seconds=waited(first - sent))
        for one in read:
            yield ModelChunk(text=one.text) if isinstance(one, TextDelta) else ModelChunk(tool_calls=(one,))
        for piece in chunks(parser.close(reason)) if parser else []:
            yield piece
        yield ModelChunk(done=True, usage=usage, finish_reason=reason)

    async def tool_support(self) -> ToolSupport:
        """``native`` (Chat Completions' ``tools=``), unless the server refused tools in this
        session (`refused`): then ``xml``, which works with any model. The server is not asked:
        a refusal is an answer to a request with tools, which the agent then asks again with ``xml``."""
        if self.refused is not None:
            return ToolSupport("xml", f"the server refuses tools: {self.refused}")
        return ToolSupport("native", "an OpenAI-compatible server takes tools")

    async def accepts_images(self) -> bool:
        """Whether the model reads images: ``images`` when given, else the server's word, asked once.

        Where a server says it: llama.cpp's ``llama-server`` on ``GET /props`` (``modalities.vision``,
        true when started with an ``--mmproj``), Ollama on ``POST /api/show`` (``capabilities``
        holding ``"vision"``), LM Studio on ``GET /api/v0/models/NAME`` (``type`` ``"vlm"``), each
        beside the API's ``/v1``. vLLM, SGLang and llama-cpp-python's server do not say: pass
        ``images=True`` for a vision model there. A server that cannot be reached means no, asked
        again next time; one that answers none of these means no.
        """
        if self.images is None:
            try:
                check_model_requests_allowed(f"the OpenAI-compatible server at {self._shown_url}")
                self.images = await self._says_vision()
            except Exception:  # noqa: BLE001 - not knowing means text only
                return False
        return self.images

    async def _says_vision(self) -> bool:
        import httpx

        root, key = self.base_url.removesuffix("/v1"), {"Authorization": f"Bearer {self._api_key}"}
        async with httpx.AsyncClient(base_url=root, headers=key, timeout=min(self.timeout, 10.0)) as client:
            for method, path, body in _VISION_SAID_AT:
                asked = {"model": self.name} if body else None
                answer = await client.request(method, path.format(name=self.name), json=asked)
                said = vision_said(answer) if answer.status_code == 200 else None
                if said is not None:
                    return said
        return False

    async def list_models(self) -> list[str]:
        """The names of the models the server serves (``GET /models``).

        Raises:
            ModelError: Requests are not allowed, or the server cannot be reached.
        """
        check_model_requests_allowed(f"the OpenAI-compatible server at {self._shown_url}")
        openai, client = self._client()
        try:
            async with client:
                return read_models(await client.get("/models", cast_to=object))
        except openai.OpenAIError as exc:
            raise self._error(exc, openai) from (None if self._leaks(exc) else exc)
        except (ValueError, RecursionError) as exc:  # WireError, or a body that is not JSON
            unread = f"a list of models that is not JSON ({shown(str(exc))})"
            problem = exc if isinstance(exc, WireError) else unread
            raise ModelError(self._redact(self._wire_error(problem, listing=True))) from None

    def _client(self) -> tuple[Any, Any]:
        """The ``openai`` module and a client for one request.

        A client per request: its connections belong to the event loop that opened them, and
        scripts and tests run each request under a fresh ``asyncio.run()``. No retries: a
        person waiting in a notebook hears of a dead server at once, not after three tries.
        """
        try:
            import openai
        except ImportError as exc:
            raise ModelError(f"OpenAIModel needs the openai client: {INSTALL_OPENAI}") from exc
        client = openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )
        return openai, client

    def _check_options(self, options: Mapping[str, Any]) -> None:
        unknown = sorted(key for key in options if key not in _OPTIONS)
        if unknown:
            raise ModelError(
                f"OpenAIModel({self.name!r}) does not understand the option(s) {', '.join(unknown)};"
                f" it reads {', '.join(_OPTIONS)}. The context size is set where the server is started."
            )

    def _body(self, request: ModelRequest, options: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": openai_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        body.update({_OPTIONS[key]: value for key, value in options.items() if value is not None})
        if request.tools:
            body["tools"] = [tool.to_json_schema() for tool in request.tools]
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
        if request.format is not None:
            schema = dict(request.format)
            if self.schema_format == "json_object":
                # llama-cpp-python's form; the openai client passes the extra key through.
                body["response_format"] = {"type": "json_object", "schema": schema}
            else:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema},
                }
        return body

    def _leaks(self, exc: BaseException) -> bool:
        """Whether the key is in ``exc``'s text (then it is not kept as the error's cause)."""
        return self._api_key != NO_KEY and reveals(str(exc), [self._api_key])

    def _redact(self, text: str) -> str:
        return redact(text, [self._api_key], "[api key]") if self._api_key != NO_KEY else text

    def _error(self, exc: Exception, openai: Any) -> ModelError:
        """Translate what the client raised into an error that says what to do."""
        where = f"the OpenAI-compatible server at {self._shown_url}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(
                f"Timed out talking to {where}: no answer within {self.timeout:g} s. The model may"
                f" still be loading, or the server is busy: allow longer with"
                f" OpenAIModel({self.name!r}, timeout={self.timeout * 2:g})."
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(
                f"Cannot reach {where}: is it running? Start it (e.g. `vllm serve MODEL` or"
                " `python -m llama_cpp.server --model FILE`), or set base_url= / OPENAI_BASE_URL"
                " to where it runs.",
                retry=RetryCause("refused", "the server could not be reached (it may be restarting)"),
            )
        if isinstance(exc, openai.AuthenticationError):
            return ModelError(
                f"{where[0].upper()}{where[1:]} refused the API key (HTTP 401): set OPENAI_API_KEY,"
                f" or pass OpenAIModel({self.name!r}, api_key=...)."
            )
        if not isinstance(exc, openai.APIStatusError):  # an error event mid-stream, a bad answer
            return ModelError(
                self._redact(f"{where[0].upper()}{where[1:]} reported an error: {cut(str(exc))}")
            )
        status = cast("APIStatusError", exc).status_code  # as checked (`openai` is the module, typed Any)
        detail = self._redact(error_words(exc))
        lowered = detail.lower()
        if status == 404 and "model" in lowered:
            return ModelError(
                f"Model '{self.name}' is not served by {where} ({detail}): use one of the names"
                " its /models lists (OpenAIModel.list_models())."
            )
        if status == 404:
            return ModelError(
                f"{where[0].upper()}{where[1:]} has no Chat Completions endpoint (HTTP 404:"
                f" {detail}): check base_url / OPENAI_BASE_URL, which usually ends in /v1."
            )
        if "context" in lowered and ("length" in lowered or "window" in lowered):
            return ModelError(
                f"The conversation does not fit the context of '{self.name}' on {where} ({detail}):"
                " start a new conversation, lower num_predict, or serve the model with a larger context."
            )
        message = f"{where[0].upper()}{where[1:]} answered HTTP {status}: {detail}"
        if status in BUSY:
            return ModelError(
                f"{message}. The server is busy or not ready (it serves others, or is starting):"
                " wait a minute and run the cell again; if it keeps saying so, tell whoever runs it.",
                retry=busy_cause(status, cast("APIStatusError", exc).response.headers.get("retry-after")),
            )
        if _REFUSES_TOOLS.search(detail):
            self.refused = cut(detail, 120)
            return ToolsRefused(
                f"{message} (use the `xml` tool protocol, which works with any model)", self.refused
            )
        if "json_schema" in lowered and "json_object" in lowered:
            message += f' (this server takes OpenAIModel({self.name!r}, schema_format="json_object"))'
        return ModelError(message)

    def _wire_error(self, exc: WireError | str, listing: bool = False) -> str:
        """What to say when the server sent what the API does not allow (``exc`` names it)."""
        doing = "listing its models" if listing else f"answering as '{self.name}'"
        kept = "" if listing else " This answer was dropped and the conversation is kept: try again."
        return (
            f"The OpenAI-compatible server at {self._shown_url} sent what the Chat Completions API does"
            f" not allow, {doing}: {exc}.{kept} If it recurs, the server (or a proxy in front of it) does"
            " not speak the API correctly: check its version and its log."
        )

    def _unbegun(self, request: ModelRequest) -> ModelError:
        """The error for an event stream without one event: llama-cpp-python's server answers a
        conversation longer than its context so, and a request interrupted before its first token."""
        prompt = len(json.dumps(request.messages, ensure_ascii=False)) // 4  # about 4 characters a token
        return ModelError(
            f"The OpenAI-compatible server at {self._shown_url} ended its answer before it began (the"
            f" server sent no events): either the conversation (about {prompt:,} tokens) is longer than"
            " the model's context, which llama-cpp-python's server answers so, or another request"
            " arrived and the server interrupted this one (that server does by default; start it with"
            " `--interrupt_requests False` to make it queue requests). If the conversation is long,"
            " start a new one (%agent reset, or agent.reset()); otherwise wait a little before asking again.",
            retry=RetryCause(
                "cut", "the server ended the answer before it began (another request, or a full context)"
            ),
        )

    def _cut(self, detail: str, request: ModelRequest) -> ModelError:
        """The error for an answer the server ended early: named by its likely cause, by what was seen.

        A server that interrupts the answer it streams when another request arrives does this
        (llama-cpp-python's, by default), unless the conversation is near the context window.
        """
        where = f"The OpenAI-compatible server at {self._shown_url}"
        prompt = len(json.dumps(request.messages, ensure_ascii=False)) // 4  # about 4 characters a token
        if self.n_ctx is not None and prompt >= NEAR_WINDOW * self.n_ctx:
            return StreamCut(
                f"{where} ended its answer early ({detail}): the conversation (about {prompt:,} tokens)"
                f" is near the model's context window of {self.n_ctx:,} tokens, and a server that runs"
                " out of it stops this way. Start a new conversation (%agent reset, or agent.reset()),"
                " or serve the model with a larger context."
            )
        return StreamCut(
            f"{where} ended its answer early ({detail}): most likely another request arrived while it"
            " answered this one, and the server interrupts the answer it is streaming when one does"
            " (llama-cpp-python's server does by default). Whoever starts the server can make it queue"
            " requests instead: `python -m llama_cpp.server --interrupt_requests False ...`; until"
            " then, wait a little before asking again, as each request cuts another's answer.",
            retry=RetryCause("cut", "the server cut the answer (another request took its turn)"),
        )


def _delta_chunks(event: StreamEvent, parser: Any) -> list[ModelChunk]:
    """The chunks of one streamed event: reasoning as thinking, then the text, read for calls by
    ``parser`` when there is one."""
    out = [ModelChunk(thinking=event.thinking)] if event.thinking else []
    if event.content:
        out += chunks(parser.feed(event.content)) if parser else [ModelChunk(text=event.content)]
    return out
