"""Asking a person: buttons in the running cell, an ``input()`` prompt, or a policy when no one is there.

`WidgetApprover` shows one panel per batch in the cell that is running. The wait works because
ipykernel (>= 7.4) handles comm messages, such as button clicks, while an async cell awaits.
`InputApprover` asks in a terminal. `PolicyApprover` never waits: it applies ``all`` or ``none``
and shows what it decided. `default_approver` picks one of them for where the code runs. All four
are importable from here; `WidgetApprover` lives in `widget_approvals`, `PolicyApprover` and
`is_headless` in `policy_approvals`.

Headless runs (nbval, nbclient, papermill) send their execute requests with ``allow_stdin``
false; the two interactive approvers check this at every batch and follow ``MEOWGENT_APPROVE``
instead, so a notebook written with buttons still runs unattended without blocking.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from ..agent.approvals import ApprovalRequest, Approved, Approver, Decision, Denied
from .policy_approvals import (
    HEADLESS_DENIAL,
    POLICIES,
    PolicyApprover,
    call_text,
    headless_policy,
    is_headless,
    running_kernel,
)
from .widget_approvals import WidgetApprover

__all__ = [
    "HEADLESS_DENIAL",
    "InputApprover",
    "PolicyApprover",
    "WidgetApprover",
    "default_approver",
    "is_headless",
]

_MODES = ("ask", "every", "all", "none")


def default_approver(mode: str = "ask", timeout: float = 600.0) -> Approver:
    """The approver for where this code runs.

    ``"all"`` and ``"none"`` give a `PolicyApprover`. ``"ask"`` and ``"every"`` (which calls
    are asked about is the agent's ``ask`` setting) give: in a headless kernel, the policy from
    ``MEOWGENT_APPROVE``; in a kernel with a frontend, a `WidgetApprover`; elsewhere an
    `InputApprover`. Each call returns a new approver: keep it for the session (one per kernel),
    so that "Always allow" lasts across cells.

    Args:
        mode: ``"ask"``, ``"every"``, ``"all"`` or ``"none"``.
        timeout: Seconds a `WidgetApprover` waits for a click before denying.

    Raises:
        ValueError: For another mode, or a headless run with an unknown ``MEOWGENT_APPROVE``.
    """
    if mode not in _MODES:
        raise ValueError(f"approval mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    if mode in POLICIES:
        denial = "the notebook's approval setting (approve='none') denies calls that need approval"
        return PolicyApprover(mode, f"approve={mode!r}", denial)  # type: ignore[arg-type]
    if running_kernel() is not None:
        if is_headless():
            return headless_policy()
        if importlib.util.find_spec("ipywidgets") is not None:
            return WidgetApprover(timeout)
    return InputApprover()  # a kernel without ipywidgets still forwards input() to the frontend


class InputApprover:
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
        return [self._ask(request) for request in requests]

    def _ask(self, request: ApprovalRequest) -> Decision:
        name = request.tool.name
        if name in self.always_allowed:
            print(f"{call_text(request, None)}: always allowed")
            return Approved("always allowed for this session")
        prompt = f"Run {call_text(request, None)}? [y]es / [n]o / [a]lways: "
        while True:
            try:
                answer = input(prompt).strip().lower()  # looked up now: ipykernel swaps it per cell
            except EOFError:
                return Denied("no answer (the input was closed)")
            if answer in ("y", "yes"):
                return Approved("approved by the person")
            if answer in ("n", "no"):
                return Denied()
            if answer in ("a", "always"):
                self.always_allowed.add(name)
                return Approved("always allowed for this session")
            print("Please answer y, n or a.")

    def __repr__(self) -> str:
        return "InputApprover()"
