"""How a transcript says a run ended without an answer: stopped by a limit, by an interrupt, or by an error."""

from __future__ import annotations

import asyncio

from ...agent.result import AgentResult
from ._cards import call_text

__all__ = ["error_text", "stopped_note"]


def stopped_note(result: AgentResult) -> str | None:
    """Why the run stopped before the model answered, or None if it answered."""
    repeated = result.repeated_failure
    if result.stopped == "repeated_failure" and repeated is not None:
        call = repeated.result.call
        what = "an unreadable call" if repeated.result.kind == "parse_error" else call_text(call)
        return f"stopped: {what} failed the same way {repeated.times} times"
    if result.stopped == "max_turns":
        turns = result.turns
        return f"stopped: the limit of {turns} turn{'s' * (turns != 1)} was reached"
    return None


def error_text(error: BaseException, progress: str, below: bool = False) -> str:
    """The transcript's line about what stopped the run; "" for an interrupt the cell shows below
    (`display.show_run` raises `RunInterrupted`, whose one line says it all)."""
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit)):
        return "" if below else f"[stopped by an interrupt after {progress}]"
    if below:
        return f"[error] {type(error).__name__}, shown below"
    message = str(error).strip()
    text = f"[error] {type(error).__name__}" + (f": {message}" if message else "")
    return text.replace("\n", "\n  ")
