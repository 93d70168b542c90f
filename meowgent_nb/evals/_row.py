"""`EvalRow`: how the model did on one case (one run of it), as `aevaluate` judged it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EvalRow", "stopped_note"]


@dataclass(frozen=True)
class EvalRow:
    """How the model did on one case."""

    prompt: str
    category: str
    expected: str | None
    """The expected tool, or None for no tool."""
    chosen: str | None
    """The first tool the model called, or None."""
    arguments: dict[str, Any]
    """The first call's arguments as the model sent them."""
    passed: bool
    reason: str
    """Why it failed; empty when it passed."""
    seconds: float
    """How long the model turn took (until reading stopped)."""
    stopped_after: int | None = None
    """Reading stopped after this many characters of answer text with no call begun (see
    `aevaluate`'s ``text_limit``); None when the answer was read to its first call or its end."""
    executes: bool | None = None
    """Whether the first call could run: it names an offered tool and its arguments validate
    against that tool (whichever tool the case expected). False for a call that could not be read,
    names no offered tool, or has invalid arguments; None when the model made no call."""
    arguments_match: bool | None = None
    """For a case that expected a tool and a call that named it: whether the arguments validate
    and hold the expected ones (after validation, as for passing). None for every other row."""
    made_up: tuple[str, ...] = ()
    """What the first call made up: its tool name when no offered tool has that name, else the
    argument names the tool's schema does not declare (in the call's order; nested fields are not
    looked at). Empty without a call, for a call that could not be read, or when nothing was made up."""
    wanted: Mapping[str, Any] = field(default_factory=dict)
    """The arguments the case expected (a subset the call must have); with the prompt and the
    expected tool, what names the case in a baseline."""

    @property
    def hallucinated(self) -> bool:
        """Whether the call named a tool that is not offered, or an argument its tool does not have."""
        return bool(self.made_up)

    @property
    def called_without_need(self) -> bool:
        """Whether the model called a tool (any, readable or not) where the case expected none."""
        return self.expected is None and self.chosen is not None


def stopped_note(characters: int) -> str:
    """What a row says when reading stopped after ``characters`` of text with no call begun."""
    return f"(no call in the first {characters} characters)"
