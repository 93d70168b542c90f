"""When a server asks: elicitation (input from the person), sampling (an answer from the model), roots.

`ServerAsks` holds one toolbox's answers; its methods are the SDK's ``elicitation_callback``,
``sampling_callback`` and ``list_roots_callback``, run on the MCP loop. The person is asked on the
cell's loop through the approver of the agent call the server is serving, when that approver is
a `ServerAsker`; otherwise the request is declined. `Asked` records each in `history`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Awaitable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from ...agent.running_call import RUNNING_CALL, RunningCall
from ...errors import SettingsError
from ..content.elicit import ElicitForm, ElicitSchemaError, check_content, form_from_schema

__all__ = [
    "SAMPLING_SETTINGS",
    "Asked",
    "ElicitAnswer",
    "ElicitRequest",
    "SamplingReview",
    "ServerAsker",
    "ServerAsks",
]

SAMPLING_SETTINGS = ("ask", "allow", "deny")
_USER_REJECTED = -1  # MCP's code for "the user rejected the sampling request"


@dataclass(frozen=True)
class ElicitRequest:
    """A server's request for input from the person, during ``running``."""

    server: str
    form: ElicitForm
    running: RunningCall


@dataclass(frozen=True)
class ElicitAnswer:
    """What the person (or the policy) answered: accept with content, decline, or cancel."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    reason: str = ""
    """Why, in a few words ("by you", "no person to answer (headless run)")."""


@dataclass(frozen=True)
class SamplingReview:
    """A server's request to use the model, shown to the person before (``answer`` None) and after."""

    server: str
    messages: tuple[tuple[str, str], ...]
    """(role, text) of each message the server sends."""
    system_prompt: str | None
    max_tokens: int
    running: RunningCall
    model: str
    """Which model answers."""
    answer: str | None = None
    """The model's answer, when the person is asked whether it may go back to the server."""


class ServerAsker(Protocol):
    """What an approver has when it can ask a person about a server's requests (the notebook's do)."""

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer: ...

    async def review_sampling(self, review: SamplingReview) -> tuple[bool, str]:
        """Whether the request (or, with ``review.answer``, the answer) may go on, and why."""
        ...

    def tell(self, running: RunningCall, text: str) -> None:
        """Say ``text`` in the running call's card (what a server asked and what became of it)."""
        ...


@dataclass(frozen=True)
class Asked:
    """One request a server sent, and what became of it (the toolbox's `history`)."""

    kind: Literal["elicitation", "sampling", "roots"]
    what: str
    outcome: str


@dataclass
class _Flight:
    """A call of this toolbox's server in progress, as seen from the tool's thread."""

    running: RunningCall | None
    context: contextvars.Context


_FLIGHT: contextvars.ContextVar[_Flight | None] = contextvars.ContextVar("meowgent_mcp_flight", default=None)


@dataclass
class ServerAsks:
    """A toolbox's answers to its server's elicitation, sampling and roots requests.

    Args:
        server: The server's name here.
        sampling: "ask" (the person approves the request and the answer), "allow" or "deny".
        sampling_model: The model that answers sampling requests; None: the calling agent's.
        roots: The folders offered as roots, in order; none: no roots capability.
    """

    server: str
    sampling: str = "ask"
    sampling_model: Any = None
    roots: Sequence[str | os.PathLike[str]] = ()
    history: list[Asked] = field(default_factory=list)
    _flights: list[_Flight] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLING_SETTINGS:
            raise SettingsError(
                f"McpToolbox {self.server!r}: sampling must be 'ask', 'allow' or 'deny', got {self.sampling!r}"
            )
        roots = (
            [self.roots] if isinstance(self.roots, (str, os.PathLike)) else self.roots
        )  # one folder is one root
        self.roots = list(dict.fromkeys(str(Path(root).expanduser().resolve()) for root in roots))

    # --- the calls in flight (on tool threads) ----------------------------------------------------

    @contextlib.contextmanager
    def flight(self) -> Iterator[_Flight]:
        """Around a call, on the thread that makes it: which agent call it serves, in which context."""
        flight = _Flight(RUNNING_CALL.get(), contextvars.copy_context())
        token = _FLIGHT.set(flight)  # seen by the call's task on the MCP loop (a copy of this context)
        with self._lock:
            self._flights.append(flight)
        try:
            yield flight
        finally:
            with self._lock:
                self._flights.remove(flight)
            _FLIGHT.reset(token)

    def _flight(self) -> _Flight | None:
        own = _FLIGHT.get()
        if own is not None:
            return own
        with self._lock:
            return self._flights[0] if self._flights else None

    def _note(self, kind: Any, what: str, outcome: str) -> None:
        self.history.append(Asked(kind, what[:200], outcome))
        del self.history[:-100]  # a chatty server cannot grow this without bound

    # --- the SDK's callbacks (on the MCP loop) -----------------------------------------------------

    async def elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import INVALID_PARAMS, ElicitResult, ErrorData

        message = getattr(params, "message", "")
        if getattr(params, "mode", "form") != "form":
            return self._decline(
                "elicitation", message, "a URL elicitation cannot be followed from the notebook"
            )
        flight, asker = self._asker()
        if isinstance(asker, str):
            return self._decline("elicitation", message, asker)
        try:
            form = form_from_schema(message, params.requested_schema)
        except ElicitSchemaError as error:
            await self._on_cell(
                flight, _tell(asker, flight.running, f"{self.server} asked for input, but {error}")
            )
            self._note("elicitation", str(message), f"refused: {error}")
            return ErrorData(code=INVALID_PARAMS, message=str(error)[:2000])
        running = cast(RunningCall, flight.running)  # asker is an approver: _asker found the call
        try:
            answer = await self._on_cell(flight, asker.elicit(ElicitRequest(self.server, form, running)))
        except Exception as error:  # a form that broke is a decline, never a hung call
            return self._decline(
                "elicitation", form.message, f"the form failed: {type(error).__name__}: {error}"
            )
        if answer.action == "accept":
            problems = check_content(form, answer.content)
            if problems:  # whatever asked the person, what goes back fits the server's schema
                reason = "the answer does not fit the form: " + "; ".join(problems)
                return self._decline("elicitation", form.message, reason)
        self._note(
            "elicitation", form.message, f"{answer.action}" + (f": {answer.reason}" if answer.reason else "")
        )
        content = (
            {k: v for k, v in (answer.content or {}).items() if v is not None}
            if answer.action == "accept"
            else None
        )
        return ElicitResult(action=answer.action, content=content)

    def _decline(self, kind: str, what: str, reason: str) -> Any:
        from mcp_types import ElicitResult

        self._note(kind, str(what), f"decline: {reason}")  # type: ignore[arg-type]
        return ElicitResult(action="decline")

    def _asker(self) -> tuple[_Flight, Any]:
        """The call a request belongs to and the approver that asks about it, or why there is none."""
        flight = self._flight()
        if flight is None:
            return None, f"no call of the server {self.server!r} is running, so no one can be asked"  # type: ignore[return-value]
        running = flight.running
        if running is None:
            return flight, "the tool was called outside an agent run, so no one can be asked"
        approver = running.approver
        if not all(hasattr(approver, name) for name in ("elicit", "review_sampling", "tell")):
            return flight, f"the agent's approver ({approver!r}) cannot ask a person"
        return flight, approver

    async def _on_cell(self, flight: _Flight, coroutine: Awaitable[Any]) -> Any:
        """Run ``coroutine`` on the cell's loop, in the context of the call (its cell, its display);
        the call's time limit stands still meanwhile (a person may be filling in a form)."""
        running = flight.running
        assert running is not None  # _asker found the call
        with running.hold():
            future = flight.context.copy().run(asyncio.run_coroutine_threadsafe, coroutine, running.loop)  # type: ignore[arg-type]
            return await asyncio.wrap_future(future)

    def running_call(self) -> Any:
        """The agent call that the current MCP call serves (on the call's own task), or None."""
        flight = _FLIGHT.get()
        return flight.running if flight is not None else None

    async def sample(self, context: Any, params: Any) -> Any:
        from mcp_types import INTERNAL_ERROR, CreateMessageResult, ErrorData, TextContent

        messages = tuple((m.role, _content_text(m.content)) for m in params.messages)
        what = messages[-1][1] if messages else ""
        flight, asker = self._asker()
        running = flight.running if flight is not None else None
        if self.sampling == "deny":
            return await self._refuse(what, f"sampling='deny' for {self.server!r}", flight, asker)
        model = self.sampling_model if self.sampling_model is not None else getattr(running, "model", None)
        if running is None or model is None:
            return await self._refuse(
                what, asker if isinstance(asker, str) else "there is no model to answer", flight, asker
            )
        name = getattr(model, "name", type(model).__name__)
        review = SamplingReview(self.server, messages, params.system_prompt, params.max_tokens, running, name)
        if self.sampling == "ask":
            if isinstance(asker, str):
                return await self._refuse(
                    what, f"{asker} (sampling='allow' answers without asking)", flight, asker
                )
            ok, reason = await self._on_cell(flight, asker.review_sampling(review))
            if not ok:
                return await self._refuse(what, reason, None, None)  # the card says it already
        try:
            answer, stop = await self._on_cell(flight, _complete(model, review, params.temperature))
        except Exception as error:  # a model that failed is the server's error, not the notebook's
            self._note("sampling", what, f"failed: {error}")
            return ErrorData(code=INTERNAL_ERROR, message=f"the model {name!r} failed: {error}"[:2000])
        if self.sampling == "ask":
            ok, reason = await self._on_cell(flight, asker.review_sampling(replace(review, answer=answer)))
            if not ok:
                return await self._refuse(what, f"the answer was not sent back ({reason})", None, None)
        elif not isinstance(asker, str):
            told = f"{self.server} used the model {name} (sampling='allow'); it answered: {answer[:200]!r}"
            await self._on_cell(flight, _tell(asker, running, told))
        self._note("sampling", what, f"answered by {name}")
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=answer), model=name, stop_reason=stop
        )

    async def _refuse(self, what: str, reason: str, flight: _Flight | None, asker: Any) -> Any:
        """Refuse a sampling request (MCP's "user rejected" error), saying why in the card if there is one."""
        from mcp_types import ErrorData

        if flight is not None and flight.running is not None and not isinstance(asker, (str, type(None))):
            await self._on_cell(
                flight,
                _tell(asker, flight.running, f"{self.server} asked to use the model: refused, {reason}"),
            )
        self._note("sampling", what, f"refused: {reason}")
        return ErrorData(code=_USER_REJECTED, message=f"the sampling request was refused: {reason}")

    async def list_roots(self, context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        roots = cast("list[str]", self.roots)  # resolved to path strings by __post_init__
        self._note("roots", ", ".join(roots), "listed")
        # pydantic validates the URI string into the FileUrl the model's stub asks for.
        return ListRootsResult(
            roots=[Root(uri=Path(f).as_uri(), name=Path(f).name or f) for f in roots]  # pyright: ignore[reportArgumentType]
        )


async def _tell(asker: Any, running: RunningCall | None, text: str) -> None:
    if running is not None:
        asker.tell(running, text)


def _content_text(content: Any) -> str:
    """The text of a sampling message's content (a block or a list of them); others are named."""
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        kind = getattr(block, "type", "")
        parts.append(block.text if kind == "text" else f"[{kind or 'unknown'} content]")
    return "\n".join(parts)


async def _complete(model: Any, review: SamplingReview, temperature: float | None) -> tuple[str, str]:
    """The model's answer to a sampling request (on the cell's loop, where the agent runs it)."""
    from ...models.base import ModelRequest

    messages = [{"role": "system", "content": review.system_prompt}] if review.system_prompt else []
    messages += [
        {"role": role if role in ("user", "assistant") else "user", "content": text}
        for role, text in review.messages
    ]
    options: dict[str, Any] = {"num_predict": review.max_tokens}
    if temperature is not None:
        options["temperature"] = temperature
    parts, finish = [], None
    async for chunk in model.stream(ModelRequest(messages=messages, options=options)):
        parts.append(chunk.text)
        if chunk.done:
            finish = chunk.finish_reason
    return "".join(parts).strip(), "maxTokens" if finish == "length" else "endTurn"
