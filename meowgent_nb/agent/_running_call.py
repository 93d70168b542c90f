"""The tool call running now, for code a tool reaches that must ask the person or use the model.

An MCP server may ask, in the middle of a call, for input from the person (elicitation) or for an
answer from the model (sampling). The server's request arrives on the MCP loop, far from the
agent; `RUNNING_CALL` carries what it needs from the agent to the tool's thread (whose context
is a copy of the call's task's, see `_tool_threads`): the call, the cell's loop, the approver
that asks the person, the model, and the call's task, which ends when the call does (its result,
its time limit, Stop).
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..tools.calls import ToolCall

__all__ = ["RUNNING_CALL", "RunningCall"]


@dataclass(frozen=True)
class RunningCall:
    """One validated, approved call on its way through a tool."""

    call: ToolCall
    loop: asyncio.AbstractEventLoop
    """The loop the agent runs on (a notebook's: the cell's); the person is asked there."""
    task: asyncio.Task[Any]
    """The call's task: done once the call has ended, whatever ended it."""
    timeout: float | None
    """The call's time limit in seconds (None: none)."""
    approver: Any
    """The agent's approver (or None); one that can ask a person has ``elicit`` and ``review_sampling``."""
    model: Any
    """The agent's model."""


RUNNING_CALL: ContextVar[RunningCall | None] = ContextVar("meowgent_running_call", default=None)
