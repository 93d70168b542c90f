"""The tool call running now, for code a tool reaches that must ask the person or use the model.

An MCP server may ask, in the middle of a call, for input from the person (elicitation) or for an
answer from the model (sampling). The server's request arrives on the MCP loop, far from the
agent; `RUNNING_CALL` carries what it needs from the agent to the tool's thread (whose context
is a copy of the call's task's, see `_tool_threads`): the call, the cell's loop, the approver
that asks the person, the model, and `RunningCall.on_end`, told when the call ends (its result,
its time limit, Stop), in the call's own task, before the agent goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from ..tools.calls import ToolCall

__all__ = ["RUNNING_CALL", "Ending", "RunningCall"]

Ending = Literal["done", "timeout", "stopped"]
"""How a call ended: it returned (or raised), its time limit ended it, or the run was stopped."""


@dataclass(eq=False)
class RunningCall:
    """One validated, approved call on its way through a tool."""

    call: ToolCall
    loop: asyncio.AbstractEventLoop
    """The loop the agent runs on (a notebook's: the cell's); the person is asked there."""
    timeout: float | None
    """The call's time limit in seconds (None: none)."""
    approver: Any
    """The agent's approver (or None); one that can ask a person has ``elicit`` and ``review_sampling``."""
    model: Any
    """The agent's model."""
    on_end: list[Callable[[Ending], None]] = field(default_factory=list, compare=False, repr=False)
    """Told once how the call ended, in its own task and before the agent goes on (so what they
    add to the call's card is there when the run shows its end, even a run that ends at once)."""

    ended: Ending | None = None
    """How the call ended, once it has."""

    def end(self, how: Ending) -> None:
        """Tell `on_end` how the call ended, once (later calls do nothing); one listener that fails
        does not keep the others from hearing it."""
        if self.ended is None:
            self.ended = how
        listeners = list(self.on_end)
        self.on_end.clear()
        for listener in listeners:
            try:
                listener(how)
            except Exception:  # noqa: BLE001 - a display must never break a run
                pass


RUNNING_CALL: ContextVar[RunningCall | None] = ContextVar("meowgent_running_call", default=None)
