"""What an agent run yields, as it happens: `async for event in agent.stream(prompt)`.

Small frozen values that display code and tests consume alike. A run begins with `RunStart`; in
a turn come `ModelStatus`, `ModelRetry` (the request is asked again; what the failed attempt
streamed is dropped), text and thinking deltas, `PartialCall` (display only), each
`ToolCallEvent`, `ApprovalRequested`, each `ApprovalEvent`, `ToolRunning`, each
`ToolResultEvent`, then `TurnEnd`; `ContextCompacted` before a request that was made smaller;
`FinalAnswer` last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._deltas import TextDelta, ThinkingDelta
from ..models.base import Usage
from ..protocols.parsing import PartialCall
from ..tools.core import ToolCall, ToolResult
from .approvals import Approved, Denied
from .result import AgentResult
from .window.compaction import Compacted

__all__ = [
    "AgentEvent",
    "ApprovalEvent",
    "ApprovalRequested",
    "ContextCompacted",
    "FinalAnswer",
    "ModelRetry",
    "ModelStatus",
    "PartialCall",
    "RunStart",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolRunning",
    "TurnEnd",
]


@dataclass(frozen=True)
class RunStart:
    """A run begins; ``model`` says which model and backend answer (`describe_model`)."""

    model: str
    tools: int = 0
    """How many tools the model is offered in this run (0: none, or ``tool_choice="none"``)."""


@dataclass(frozen=True)
class ModelStatus:
    """What the backend is doing before its answer begins ("loading the model (first time, ~491 MB)")."""

    text: str


@dataclass(frozen=True)
class ModelRetry:
    """The turn's model request failed in a way asking again may mend (`models.base.RetryCause`),
    before the model began a call: it is asked again after ``wait`` seconds. What the failed
    attempt streamed is dropped: neither the result nor the conversation keeps it."""

    turn: int
    attempt: int
    """The attempt about to be made: 2 for the first time the request is asked again."""
    attempts: int
    """The most attempts the agent makes (``retry_attempts``)."""
    wait: float
    """Seconds waited before it (none in a cassette's replay, which shows the recorded wait)."""
    cause: str
    """What happened, in a person's words: "the server cut the answer (another request took its turn)"."""

    @property
    def text(self) -> str:
        """The line a person reads: "the server cut the answer (...); asking again in 2 s, 2 of 5"."""
        when = f"in {self.wait:.0f} s" if self.wait >= 0.5 else "now"
        return f"{self.cause}; asking again {when}, {self.attempt} of {self.attempts}"


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete tool call the model asked for, before validation."""

    call: ToolCall
    turn: int


@dataclass(frozen=True)
class ApprovalRequested:
    """These calls wait for a decision (the approver is asked next)."""

    calls: tuple[ToolCall, ...]
    notes: tuple[str | None, ...] = ()
    """A line for each call's card, or None; empty when no call has one (a rule of an untrusted
    rules file would allow it: "a rule in approvals.toml would allow this; ...")."""


@dataclass(frozen=True)
class ApprovalEvent:
    """A decision on a call that needed approval."""

    call: ToolCall
    decision: Approved | Denied
    facts: dict[str, Any] = field(default_factory=dict)
    """The tool's facts about the arguments decided on (``Tool.facts_of``: a ``risk`` label); empty
    for a tool without facts."""


@dataclass(frozen=True)
class ToolRunning:
    """A validated, approved call starts to run: what a display counts a running call's time from."""

    call: ToolCall
    """The call as the model wrote it."""
    arguments: dict[str, Any]
    """The validated arguments it runs with: a person's, where they changed them at approval."""
    limit: float | None
    """Seconds its time limit allows (the tool's own, else the agent's ``tool_timeout``); None: no limit."""
    code_argument: str | None = None
    """The tool's parameter that holds code (``Tool.code_argument``), for a card that shows the code; or None."""
    facts: dict[str, Any] = field(default_factory=dict)
    """The tool's facts about the arguments it runs with (``Tool.facts_of``: a ``risk`` label), for its card."""


@dataclass(frozen=True)
class ToolResultEvent:
    """What came of one call: its output, or why it did not run."""

    result: ToolResult


@dataclass(frozen=True)
class TurnEnd:
    """One model turn (a request and the calls it made) is over."""

    turn: int
    """1 for the first model request of the run."""
    usage: Usage | None
    """Token counts and durations, where the backend reports them."""
    calls: int
    """How many tool calls the turn made."""
    finish_reason: str | None = None
    """Why the model stopped: "stop", "length" (the token limit), or what the backend said; None when it did not say."""


@dataclass(frozen=True)
class ContextCompacted:
    """Before a request, the conversation as sent was made smaller to fit the model's window
    (see `compaction`); the conversation itself keeps every message."""

    turn: int
    compacted: Compacted


@dataclass(frozen=True)
class FinalAnswer:
    """The run is over; ``result`` holds the answer and everything that led to it."""

    result: AgentResult


AgentEvent = (
    RunStart
    | ModelStatus
    | ModelRetry
    | TextDelta
    | ThinkingDelta
    | PartialCall
    | ToolCallEvent
    | ApprovalRequested
    | ApprovalEvent
    | ToolRunning
    | ToolResultEvent
    | TurnEnd
    | ContextCompacted
    | FinalAnswer
)
