"""`ProposedCell`: a code cell an agent proposed to the person, and what became of it.

The notebook's ``propose_cell`` tool returns one; `AgentResult.proposed_cells` gathers a run's.
It lives here, below the agent and the notebook, so that both may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProposedCell"]


@dataclass(frozen=True)
class ProposedCell:
    """A code cell the agent proposed (``propose_cell``), and whether the person inserted it."""

    code: str
    """The cell's code, as the model wrote it."""
    inserted: bool
    """Whether the person chose Insert below (never in a headless run)."""
    outcome: str
    """What became of it, in a line: what the model reads and the card shows."""
    problem: str | None = None
    """Why the code does not parse (None: it does). Such code may still be proposed: an exercise
    may be left incomplete on purpose."""

    def _repr_llm_(self) -> str:
        return self.outcome
