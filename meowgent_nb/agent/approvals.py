"""Approving tool calls: decisions, the approver protocol, and the simple policies.

A call needs approval when its tool is marked ``approval=True`` (or the agent is told to ask for
every tool). The agent sends all such calls of one turn to its approver as one batch, after
validation, so what a person approves is exactly the argument set that will run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union, runtime_checkable

from ..tools.core import Tool, ToolCall

__all__ = ["ApprovalRequest", "Approved", "Approver", "AutoApprove", "Decision", "Denied", "DenyAll"]


@dataclass(frozen=True)
class Approved:
    """Run the call."""

    reason: str = ""
    """Why, for the record (e.g. "approved by policy: MEOWGENT_APPROVE=all")."""
    arguments: Mapping[str, Any] | None = None
    """Arguments the person gave instead of the model's (None: run the model's). They are
    validated with the tool's parameters before the call runs, and the model is told the call ran
    with changed arguments."""


@dataclass(frozen=True)
class Denied:
    """Do not run the call; ``message`` is what the model is told."""

    message: str = "the person did not approve this call."
    """The reason; the model reads ``Denied: {message}``."""
    reason: str = ""
    """Who or what decided, for the record and the call's card ("by you", "MEOWGENT_APPROVE=none")."""


Decision = Union[Approved, Denied]


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for a decision."""

    call: ToolCall
    tool: Tool
    arguments: Mapping[str, Any]
    """The validated arguments: exactly what will run if approved."""


@runtime_checkable
class Approver(Protocol):
    """Decides on a batch of calls; returns one decision per request, in order."""

    async def approve(self, requests: Sequence[ApprovalRequest]) -> Sequence[Decision]: ...


class AutoApprove:
    """Approve every call (for trusted tools, scripts and tests)."""

    def __init__(self, reason: str = "approved automatically"):
        self.reason = reason

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        return [Approved(self.reason) for _ in requests]

    def __repr__(self) -> str:
        return "AutoApprove()"


class DenyAll:
    """Deny every call, telling the model ``message``."""

    def __init__(self, message: str = "no one is here to approve this call."):
        self.message = message

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        return [Denied(self.message) for _ in requests]

    def __repr__(self) -> str:
        return f"DenyAll({self.message!r})"
