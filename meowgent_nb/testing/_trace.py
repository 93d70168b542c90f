"""A cassette's recorded runs turned into the spans a traced run makes (`cassette_spans`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.approvals import Approved, DecidedBy, Denied
from ..agent.events import (
    AgentEvent,
    ApprovalEvent,
    FinalAnswer,
    ModelRetry,
    RunStart,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)
from ..agent.result import AgentResult
from ..models.base import Usage
from ..tools.core import ToolCall, ToolResult

if TYPE_CHECKING:
    from ..recording import RecordedTurn

__all__ = ["CASSETTE_PROVIDER", "cassette_spans"]

CASSETTE_PROVIDER = "cassette"
"""``gen_ai.provider.name`` of a cassette's spans: a cassette does not record the backend."""


@dataclass
class _Recorded:
    """The model a recorded run had: its name."""

    name: str
    provider: str = CASSETTE_PROVIDER


@dataclass
class _RunOf:
    """What `RunSpans` reads of an agent, for a recorded run."""

    model: _Recorded
    conversation_id: str
    trace_mask: list[str] = field(default_factory=list)


def cassette_spans(path: str | os.PathLike[str], tracer_provider: Any) -> int:
    """Send the runs recorded in the cassette at ``path`` to ``tracer_provider`` as the spans a
    traced run makes (see docs/guides/tracing.md): an ``invoke_agent`` span per run, a ``chat``
    span per model request, an ``execute_tool`` span per call the model asked for, with the
    recorded decision on it. No content, and the spans' times are when they were made: a cassette
    holds what was said, not when.

    Where runs begin is read as `recording.read_turns` says; a call's result is known only
    for the ``record=True`` tools, whose results the cassette holds (``meowgent.tool.result_kind``).

    Args:
        path: The cassette file.
        tracer_provider: An OpenTelemetry ``TracerProvider``.

    Returns:
        How many runs it holds (each its own trace).

    Raises:
        CassetteError: The file cannot be read or is not a cassette; the message names the line.
    """
    from ..agent.tracing.spans import RunSpans
    from ..recording import read_turns  # the cassette's reader, only when one is read

    turns = read_turns(path)
    runs: list[list[RecordedTurn]] = []
    for turn in turns:
        if turn.starts_run or not runs:
            runs.append([])
        runs[-1].append(turn)
    tracer = tracer_provider.get_tracer("meowgent_nb")
    conversation, before = 0, None
    for run in runs:
        first = run[0].messages
        if before is None or first[: len(before)] != before:  # not the conversation's next run
            conversation += 1
        before = run[-1].messages
        agent = _RunOf(_Recorded(run[0].model), f"{Path(path).name}#{conversation}")
        spans = RunSpans(agent, tracer, "", False)
        try:
            for event in _events(run):
                if isinstance(event, TurnEnd):
                    spans.end_calls()  # the results the cassette does not hold
                spans.see(event)
        finally:
            spans.close()
    return len(runs)


def _events(run: list[RecordedTurn]) -> list[AgentEvent]:
    events: list[AgentEvent] = [RunStart(run[0].model, len(run[0].offered))]
    turn, calls, retries = 0, 0, 0
    usage: Usage | None = None
    for recorded in run:
        if recorded.retried is not None:  # the same request is asked again: the next entry
            retries += 1
            events.append(ModelRetry(turn + 1, retries, retries + 1, 0.0, recorded.retried))
            continue
        turn, retries = turn + 1, 0
        named = []
        for call in recorded.calls:
            calls += 1
            named.append(call if call.id else ToolCall(call.name, call.arguments, id=f"call_{calls}"))
        for call in named:
            decision = _decision(recorded, call)
            if decision is not None:
                events.append(ApprovalEvent(call, decision))
            if not isinstance(decision, Denied):
                ran = (
                    decision.arguments
                    if isinstance(decision, Approved) and decision.arguments
                    else call.arguments
                )
                events.append(ToolRunning(call, dict(ran), None))
            result = _result(recorded, call, decision)
            if result is not None:
                events.append(ToolResultEvent(result))
        events.append(TurnEnd(turn, recorded.usage, len(named), recorded.finish_reason))
        if recorded.usage is not None:
            usage = recorded.usage if usage is None else usage + recorded.usage
    stopped = "answer" if not run[-1].calls else "max_turns"
    events.append(FinalAnswer(AgentResult(run[-1].text, turns=turn, usage=usage, stopped=stopped)))
    return events


def _decision(recorded: RecordedTurn, call: ToolCall) -> Approved | Denied | None:
    for entry in recorded.decisions:
        if entry.tool == call.name and entry.arguments == call.arguments:
            by = DecidedBy("replay", f"{entry.by or 'you'}, when the cassette was recorded")
            if entry.decision == "denied":
                return Denied(entry.reason or "", f"by {by.name}", by)
            edit = entry.ran_with if entry.decision == "edited" else None
            return Approved(f"approved by {by.name}", edit, by)
    return None


def _result(recorded: RecordedTurn, call: ToolCall, decision: Approved | Denied | None) -> ToolResult | None:
    if isinstance(decision, Denied):
        return ToolResult(call, f"Denied: {decision.message}", kind="denied")
    for entry in recorded.results:
        if entry.tool == call.name and entry.arguments == call.arguments:
            return ToolResult(
                call, entry.result.output, kind=entry.result.kind, duration=entry.result.seconds
            )
    return None
