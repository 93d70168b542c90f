"""`InputApprover`: asking with ``input()``, where no button can be shown.

A terminal IPython, a plain script, and kernels whose frontend shows no widgets (``jupyter
console``) ask this way; `WidgetApprover` falls back to it in such a frontend.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...agent.approvals import ApprovalRequest, Approved, Decision, Denied
from .policy_approvals import AsksForServers, call_text, headless_policy, is_headless

__all__ = ["InputApprover"]


class InputApprover(AsksForServers):
    """Asks with ``input()`` for each call: yes, no, or always (for the rest of the session).

    Closed input (EOF) denies the call. In a headless run it follows ``MEOWGENT_APPROVE``.

    Attributes:
        always_allowed: Tools approved for the rest of the session with "always".
    """

    def __init__(self) -> None:
        self.always_allowed: set[str] = set()

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        if is_headless():
            return await headless_policy().approve(requests)
        return [ask_by_input(request, self.always_allowed) for request in requests]

    def __repr__(self) -> str:
        return "InputApprover()"


def ask_by_input(request: ApprovalRequest, always_allowed: set[str]) -> Decision:
    """Ask about one call with ``input()``; "always" adds its tool to ``always_allowed``."""
    name = request.tool.name
    if name in always_allowed:
        print(f"{call_text(request, None)}: always allowed")
        return Approved("always allowed for this session")
    prompt = f"Run {call_text(request, None)}? [y]es / [n]o / [a]lways: "
    while True:
        try:
            answer = input(prompt).strip().lower()  # looked up now: ipykernel swaps it per cell
        except EOFError:
            return Denied("no answer (the input was closed)")
        if answer in ("y", "yes"):
            return Approved("approved by you")
        if answer in ("n", "no"):
            return Denied(reason="by you")
        if answer in ("a", "always"):
            always_allowed.add(name)
            return Approved("always allowed for this session")
        print("Please answer y, n or a.")
