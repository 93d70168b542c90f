"""`AgentResult`: what one run produced (its own module, so events and the loop both import it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..models.base import Usage
from ..tools.core import ToolResult
from ..tools.proposed import ProposedCell

__all__ = ["AgentResult", "RepeatedFailure"]


@dataclass(frozen=True)
class RepeatedFailure:
    """The call that ended a run by failing the same way again and again (see `Agent`'s ``max_repeated_failures``)."""

    result: ToolResult
    """Its last result."""
    times: int
    """On how many turns in a row it failed this way."""
    answered: bool = False
    """Whether the call had succeeded before: each repeat was not run again but answered with that
    earlier result, so the tool did not fail, the model kept asking."""


@dataclass
class AgentResult:
    """What one run produced: the answer and everything that led to it."""

    text: str
    """The final answer (the last model turn's visible text)."""
    tool_results: list[ToolResult] = field(default_factory=list)
    """Every call's result, in the order the calls were made."""
    turns: int = 0
    """How many model requests the run made."""
    usage: Usage | None = None
    """Token counts and durations summed over the turns, where the backend reports them."""
    stopped: Literal["answer", "max_turns", "repeated_failure", "interrupted", "error"] = "answer"
    """Why the run ended: the model answered, the turn limit was reached, the model kept making
    a call that failed the same way (`repeated_failure` says which), or (in `Agent.last_result`)
    the run was interrupted or failed before it ended."""
    repeated_failure: RepeatedFailure | None = None
    """The call that kept failing, when that ended the run (``stopped == "repeated_failure"``)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The messages this run added to the conversation."""

    @property
    def proposed_cells(self) -> list[ProposedCell]:
        """The cells the agent proposed with ``propose_cell``, in order, inserted or not (a headless
        run inserts none: they are here and in the transcript)."""
        return [r.value for r in self.tool_results if isinstance(r.value, ProposedCell)]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        # Stable (no durations or ids), so a notebook may show a result and nbval still compares.
        calls = [f"{r.call.name}: {r.kind}" for r in self.tool_results]
        return (
            f"AgentResult(text={self.text!r}, turns={self.turns}, stopped={self.stopped!r}, calls={calls!r})"
        )
