"""The tool call running now, for code a tool reaches that must ask the person or use the model.

An MCP server may ask mid-call for the person's input (elicitation) or the model's answer
(sampling). `RUNNING_CALL` carries a `RunningCall` (the call, the cell's loop, the approver, the
model, and `RunningCall.on_end`) from the agent to the tool's thread. While a question waits for
its answer the call's time limit stands still (`RunningCall.hold`, `within_limit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from ..tools.calls import ToolCall

__all__ = ["RUNNING_CALL", "Ending", "RunningCall", "within_limit"]

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
    approved: bool = False
    """Whether the call was put to the approver and explicitly approved (a tool that finds it
    needed approval after all refuses to run without it: see `errors.ApprovalMissing`)."""
    on_end: list[Callable[[Ending], None]] = field(default_factory=list, compare=False, repr=False)
    """Told once how the call ended, in its own task and before the agent goes on (so what they
    add to the call's card is there when the run shows its end, even a run that ends at once)."""

    ended: Ending | None = None
    """How the call ended, once it has."""
    asking: int = 0
    """How many of a server's questions about this call are being answered now (see `hold`)."""
    held: float = 0.0
    """Seconds spent answering them so far; the call's time limit does not count them."""
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Around the answer to a server's question (a form, a request to use the model), on any
        thread: the call's time limit stands still meanwhile."""
        with self._lock:
            self.asking += 1
        started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self.asking -= 1
                self.held += time.monotonic() - started

    def left(self, started: float, limit: float) -> float | None:
        """Seconds left of ``limit`` since ``started`` (a ``time.monotonic()`` reading), not
        counting the held time; None while a question is being answered."""
        with self._lock:
            if self.asking:
                return None
            return limit - (time.monotonic() - started - self.held)

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


async def within_limit(awaitable: Awaitable[Any], limit: float | None, running: RunningCall | None) -> Any:
    """``await awaitable`` within ``limit`` seconds (None: no limit), not counting the time
    ``running``'s questions took (see `RunningCall.hold`).

    Raises:
        asyncio.TimeoutError: The time ran out; the awaitable is cancelled.
    """
    task = asyncio.ensure_future(awaitable)
    if limit is None:
        return await task
    started = time.monotonic()
    try:
        while True:
            left = (
                running.left(started, limit) if running is not None else limit - (time.monotonic() - started)
            )
            if left is not None and left <= 0:
                task.cancel()
                raise asyncio.TimeoutError
            # While held, look again now and then; else wake at the deadline and look again
            # (a question may have started meanwhile, or held time moved the deadline on).
            done, _ = await asyncio.wait({task}, timeout=_HELD_POLL if left is None else left)
            if done:
                return task.result()
    except asyncio.CancelledError:
        task.cancel()
        raise


_HELD_POLL = 0.5
"""Seconds between looks at a held call's clock."""
