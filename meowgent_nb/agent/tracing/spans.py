"""A run's events turned into OpenTelemetry GenAI spans as they pass: the one place spans are made.

`traced` wraps a run's event stream (`Agent.stream`) and yields every event unchanged; a
`RunSpans` reads each one: ``invoke_agent`` is the run, ``chat {model}`` each model request
(retries included, as span events), ``execute_tool {tool}`` each call from the moment it is
decided or run to its result, the approval as attributes of the call's span. A compaction is an
event of the run's span. Names follow the GenAI semantic conventions; ``meowgent.*`` where they
have none yet (docs/guides/tracing.md lists them). Content (the prompt, answers, arguments,
results) is put in only when asked for, through the cassettes' `Mask`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ..._deltas import TextDelta, ThinkingDelta
from ...models.base import Usage
from ...protocols.parsing import PartialCall
from ...recording import Mask
from ...tools.core import ToolCall, ToolResult
from ..approvals import Approved, Decision, Denied
from ..approvals.decisions import decided_by
from ..events import (
    AgentEvent,
    ApprovalEvent,
    ApprovalRequested,
    ContextCompacted,
    FinalAnswer,
    ModelRetry,
    RunStart,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)
from .switch import forget_call, hold_call

__all__ = ["AGENT_NAME", "RunSpans", "ServedSpans", "provider_name", "traced"]

AGENT_NAME = "meowgent"
"""``gen_ai.agent.name`` of every run."""
_SCOPE = "meowgent_nb"
_RULE = re.compile(r"rule (\d+)\b")
_TOKENS = (TextDelta, ThinkingDelta, PartialCall, ToolCallEvent)  # the model began to answer


async def traced(
    events: AsyncIterator[AgentEvent],
    agent: Any,
    provider: Any,
    prompt: str,
    content: bool,
) -> AsyncIterator[AgentEvent]:
    """``events`` unchanged, each read into spans on ``provider`` as it passes.

    Args:
        events: A run's events (`Agent._stream`).
        agent: The `Agent` running, for its model, conversation and mask.
        provider: An OpenTelemetry ``TracerProvider``.
        prompt: What the person asked, for the run's span when ``content``.
        content: Whether prompts, answers, arguments and results go into the spans.
    """
    spans = RunSpans(agent, provider.get_tracer(_SCOPE), prompt, content)
    try:
        async for event in events:
            spans.see(event)
            yield event
    except BaseException as error:
        spans.fail(error)
        raise
    finally:
        spans.close()


def provider_name(model: Any) -> str:
    """``gen_ai.provider.name``: the model's ``provider`` (``ollama``, ``openai``, ``llama_cpp``),
    else its class's name."""
    provider = getattr(model, "provider", None)
    return provider if isinstance(provider, str) and provider else type(model).__name__


class RunSpans:
    """The spans of one run, made from its events (see `see`)."""

    call_kind = SpanKind.INTERNAL
    """The kind of its ``execute_tool`` spans."""

    def __init__(self, agent: Any, tracer: Any, prompt: str, content: bool):
        self.agent, self.tracer = agent, tracer
        self.redact = _mask_of(agent)
        self.mask = self.redact if content else None
        self.model = str(getattr(agent.model, "name", "") or type(agent.model).__name__)
        self.provider = provider_name(agent.model)
        self.run: Span = tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.provider.name": self.provider,
                "gen_ai.request.model": self.model,
                "gen_ai.conversation.id": str(getattr(agent, "conversation_id", "")),
            },
        )
        if self.mask is not None:
            self.run.set_attribute(
                "gen_ai.input.messages", _messages([{"role": "user", "content": prompt}], self.mask)
            )
        self.context = trace.set_span_in_context(self.run)
        self.turn_start = time.time_ns()
        self.chat: Span | None = None
        self.first_token: int | None = None
        self.read_end: int | None = None
        self.answer: list[str] = []
        self.asked_for: list[ToolCall] = []
        self.calls: dict[str, Span] = {}
        self.held: dict[str, ToolCall] = {}
        self.asked: dict[str, int] = {}

    # --- reading events -------------------------------------------------------------------------

    def see(self, event: AgentEvent) -> None:
        """Read one event of the run into its spans."""
        now = time.time_ns()
        if isinstance(event, RunStart):
            self.run.set_attribute("meowgent.tools.offered", event.tools)
        elif isinstance(event, ContextCompacted):
            self._compacted(event, now)
        elif isinstance(event, ModelRetry):
            self._chat().add_event(
                "meowgent.model.retry",
                {
                    "meowgent.retry.attempt": event.attempt,
                    "meowgent.retry.attempts": event.attempts,
                    "meowgent.retry.wait_seconds": event.wait,
                    "meowgent.retry.cause": event.cause,
                },
                timestamp=now,
            )
            self.first_token, self.answer, self.asked_for = None, [], []  # the failed attempt's are dropped
        elif isinstance(event, _TOKENS):
            self._chat()
            if self.first_token is None:
                self.first_token = now
            if isinstance(event, TextDelta):
                self.answer.append(event.text)
            elif isinstance(event, ToolCallEvent):
                self.asked_for.append(event.call)
        elif isinstance(event, ApprovalRequested):
            for call in event.calls:
                self._call(call, now)
                self.asked[_key(call)] = now
        elif isinstance(event, ApprovalEvent):
            self._approval(event, now)
        elif isinstance(event, ToolRunning):
            self._running(event, now)
        elif isinstance(event, ToolResultEvent):
            self._result(event.result, now)
        elif isinstance(event, TurnEnd):
            self._turn_end(event, now)
        elif isinstance(event, FinalAnswer):
            self._final(event, now)

    def _chat(self) -> Span:
        """The model request's span, begun when the turn began if it has none yet."""
        if self.chat is None:
            self.chat = chat = self.tracer.start_span(
                f"chat {self.model}",
                context=self.context,
                kind=SpanKind.CLIENT,
                start_time=self.turn_start,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": self.provider,
                    "gen_ai.request.model": self.model,
                },
            )
            return chat
        return self.chat

    def _compacted(self, event: ContextCompacted, now: int) -> None:
        compacted = event.compacted
        attributes: dict[str, Any] = {
            "meowgent.turn": event.turn,
            "meowgent.context.shortened": compacted.shortened,
            "meowgent.context.left_out": compacted.left_out,
            "meowgent.context.tokens_before": compacted.before,
            "meowgent.context.tokens_after": compacted.after,
            "meowgent.context.window": compacted.window,
        }
        if compacted.summarized is not None:
            attributes["meowgent.context.summary_tokens"] = compacted.summarized
        self.run.add_event("meowgent.context.compacted", attributes, timestamp=now)
        self.turn_start = now  # the request is made after it

    def _asked_by(self, now: int) -> list[trace.Link]:
        """A new call's link to the model request that asked for it, which ends before the call."""
        chat = self._chat()
        if self.read_end is None:
            self.read_end = now
        return [trace.Link(chat.get_span_context())]

    def _call(self, call: ToolCall, now: int) -> Span:
        """The call's span, begun now if it has none yet (see `_asked_by`); while it is open,
        `switch.call_context` gives its context for the call."""
        links = self._asked_by(now)
        key = _key(call)
        if key not in self.calls:
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.type": "function",
            }
            if self.mask is not None:
                attributes["gen_ai.tool.call.arguments"] = _json(self.mask(_plain(call.arguments)))
            self.calls[key] = span = self.tracer.start_span(
                f"execute_tool {call.name}",
                context=self.context,
                kind=self.call_kind,
                start_time=now,
                attributes=attributes,
                links=links,
            )
            self.held[key] = call
            hold_call(call, trace.set_span_in_context(span, self.context))
        return self.calls[key]

    def _approval(self, event: ApprovalEvent, now: int) -> None:
        span = self._call(event.call, now)
        decision = event.decision
        kind = decision.by.kind if decision.by is not None else "approver"
        attributes: dict[str, Any] = {
            "meowgent.approval.decision": _decision_word(decision),
            "meowgent.approval.decided_by": kind,
            "meowgent.approval.decider": decided_by(decision),
        }
        reason = decision.message if isinstance(decision, Denied) else decision.reason
        if reason:
            attributes["meowgent.approval.reason"] = self._masked_text(reason)
        number = _RULE.match(decision.by.name) if decision.by is not None and kind == "rule" else None
        if number is not None:
            attributes["meowgent.approval.rule"] = int(number.group(1))
        asked = self.asked.pop(_key(event.call), None)
        if asked is not None:
            attributes["meowgent.approval.wait_seconds"] = (now - asked) / 1e9
        risk = event.facts.get("risk")
        if isinstance(risk, str):
            attributes["meowgent.tool.risk"] = risk
        span.set_attributes(attributes)

    def _running(self, event: ToolRunning, now: int) -> None:
        span = self._call(event.call, now)
        risk = event.facts.get("risk")
        if isinstance(risk, str):
            span.set_attribute("meowgent.tool.risk", risk)
        if self.mask is not None and event.arguments != event.call.arguments:  # what runs: a person's edit
            span.set_attribute("gen_ai.tool.call.arguments", _json(self.mask(_plain(event.arguments))))

    def _result(self, result: ToolResult, now: int) -> None:
        key = _key(result.call)
        span = self.calls.get(key) or self._call(result.call, now)
        del self.calls[key]
        forget_call(self.held.pop(key))
        span.set_attribute("meowgent.tool.result_kind", result.kind)
        if result.duration is not None:
            span.set_attribute("meowgent.tool.run_seconds", result.duration)
        if self.mask is not None:
            span.set_attribute("gen_ai.tool.call.result", self._masked_text(result.output))
        if not result.ok:
            error = (
                type(result.exception).__name__
                if result.kind == "error" and result.exception
                else result.kind
            )
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=now)

    def _turn_end(self, event: TurnEnd, now: int) -> None:
        chat = self._chat()
        chat.set_attribute("meowgent.turn", event.turn)
        _usage(chat, event.usage)
        if event.finish_reason is not None:
            chat.set_attribute("gen_ai.response.finish_reasons", [event.finish_reason])
        if self.first_token is not None:
            chat.set_attribute(
                "gen_ai.response.time_to_first_chunk", (self.first_token - self.turn_start) / 1e9
            )
        if self.mask is not None:
            self._chat_content(chat)
        chat.end(end_time=self.read_end if self.read_end is not None else now)
        self.chat, self.first_token, self.read_end, self.answer, self.asked_for = None, None, None, [], []
        self.turn_start = now

    def _chat_content(self, chat: Span) -> None:
        assert self.mask is not None
        records = getattr(self.agent, "context_log", ())
        if records:
            chat.set_attribute("gen_ai.input.messages", _messages(records[-1].request.messages, self.mask))
        calls = [
            {
                "type": "tool_call",
                "id": call.id,
                "name": call.name,
                "arguments": self.mask(_plain(call.arguments)),
            }
            for call in self.asked_for
        ]
        said = _messages([{"role": "assistant", "content": "".join(self.answer)}], self.mask, calls)
        chat.set_attribute("gen_ai.output.messages", said)

    def _final(self, event: FinalAnswer, now: int) -> None:
        result = event.result
        self.run.set_attribute("meowgent.turns", result.turns)
        self.run.set_attribute("meowgent.stopped", result.stopped)
        _usage(self.run, result.usage)
        if self.mask is not None:
            self.run.set_attribute(
                "gen_ai.output.messages",
                _messages([{"role": "assistant", "content": result.text}], self.mask),
            )
        self.run.end(end_time=now)

    # --- ending ---------------------------------------------------------------------------------

    def fail(self, error: BaseException) -> None:
        """The run raised or was stopped: the spans it was in end with ``error.type`` its class
        (the model request's, when no call of its turn had begun)."""
        name = type(error).__name__
        failed = [*self.calls.values(), self.run]
        if self.read_end is None and self.run.is_recording():  # in the model's request
            failed.append(self._chat())
        for span in failed:
            if span.is_recording():
                span.set_attribute("error.type", name)
                span.set_status(Status(StatusCode.ERROR, self._masked_text(str(error)) or name))
        self.close()

    def end_calls(self) -> None:
        """End the call spans still open, with no result (a cassette holds no result of a tool
        it does not record: `testing.cassette_spans`)."""
        now = time.time_ns()
        for span in self.calls.values():
            span.end(end_time=now)
        self.calls.clear()
        for call in self.held.values():
            forget_call(call)
        self.held.clear()

    def close(self) -> None:
        """End every span still open (a run's events stopped early)."""
        now = time.time_ns()
        self.end_calls()
        if self.chat is not None:
            self.chat.end(end_time=self.read_end if self.read_end is not None else now)
            self.chat = None
        if self.run.is_recording():
            self.run.end(end_time=now)

    def _masked_text(self, text: str) -> str:
        return self.redact.string(text) if self.redact else text


class ServedSpans(RunSpans):
    """The ``execute_tool`` span of a call served over MCP (`ToolServer`), made from the events of
    its batch of one (see `RunSpans.see`): a ``SERVER`` span, the child of ``parent`` (the caller's
    span, when its request carried one), with the same attributes as a run's call span and no
    content.

    Args:
        tracer: An OpenTelemetry ``Tracer``.
        parent: The OpenTelemetry ``Context`` the span is begun in (its current span is the parent).
    """

    call_kind = SpanKind.SERVER

    def __init__(self, tracer: Any, parent: Any):  # no run span: the call is the whole trace here
        self.tracer, self.context = tracer, parent
        self.redact, self.mask = Mask([]), None
        self.run: Span = trace.INVALID_SPAN
        self.chat, self.read_end = None, None
        self.calls, self.held, self.asked = {}, {}, {}

    def _asked_by(self, now: int) -> list[trace.Link]:
        return []


def _mask_of(agent: Any) -> Mask:
    """The agent's ``trace_mask`` and, when its model is a cassette's, the cassette's mask: one `Mask`."""
    patterns = list(getattr(agent, "trace_mask", ()))
    cassette = getattr(agent.model, "cassette", None)
    recorded = getattr(cassette, "mask", None)
    if isinstance(recorded, Mask):
        patterns += [regex.pattern for regex in recorded.patterns]
    return Mask(patterns)


def _usage(span: Span, usage: Usage | None) -> None:
    if usage is None:
        return
    if usage.prompt_tokens is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
    if usage.completion_tokens is not None:
        span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)


def _decision_word(decision: Decision) -> str:
    if isinstance(decision, Denied):
        return "denied"
    return "edited" if isinstance(decision, Approved) and decision.arguments is not None else "approved"


def _messages(messages: Iterable[Mapping[str, Any]], mask: Mask, calls: Iterable[Any] = ()) -> str:
    """Chat messages as the conventions' ``gen_ai.*.messages`` JSON, masked; ``calls`` are the
    tool-call parts of the last one."""
    written = []
    for message in messages:
        content = message.get("content")
        parts = (
            [{"type": "text", "content": mask.string(content)}]
            if isinstance(content, str) and content
            else []
        )
        written.append({"role": str(message.get("role", "")), "parts": parts})
    if written:
        written[-1]["parts"] += list(calls)
    return _json(written)


def _plain(values: Mapping[str, Any]) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(dict(values), fallback=repr)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _key(call: ToolCall) -> str:
    return call.id or f"{call.name}@{id(call)}"
