"""What an agent run yields, as it happens: ``async for event in agent.stream(prompt)``.

A run begins with `RunStart`; within a turn come `ModelStatus`, `ModelRetry` (the request is
asked again: a busy server, a cut answer; what the failed attempt streamed is dropped),
`TextDelta` and `ThinkingDelta`, `PartialCall`, `ToolCallEvent`, `ApprovalRequested`, `ApprovalEvent`, `ToolRunning`,
`ToolResultEvent`, then `TurnEnd`; `ContextCompacted` before a request that was made smaller;
`FinalAnswer` last. `AgentEvent` is their union. They are defined with the loop, in
`meowgent_nb.agent.events`; this is their public place.
"""

from __future__ import annotations

from .agent.events import (
    AgentEvent,
    ApprovalEvent,
    ApprovalRequested,
    ContextCompacted,
    FinalAnswer,
    ModelRetry,
    ModelStatus,
    PartialCall,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)

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
