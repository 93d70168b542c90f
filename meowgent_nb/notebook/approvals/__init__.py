"""Asking a person: buttons in the running cell, an ``input()`` prompt, or a policy when no one is there.

`WidgetApprover` puts Approve / Edit arguments / Deny / Always allow / Allow this exact call /
Allow calls like this… / Deny with a reason under each waiting call's card in a running
``%%agent`` cell (a panel of its own after ``await agent.arun(...)``). The
wait works because ipykernel (>= 7.4) handles comm messages, such as clicks, while an async cell
awaits.
`InputApprover` (in `input_approvals`) asks in a terminal, and where the frontend shows no
widgets (``jupyter console``). `PolicyApprover` never waits: it applies ``allow`` or ``deny``
and shows what it decided. `default_approver` picks one of them for where the code runs. All four
are importable from here; `WidgetApprover` lives in `widget_approvals`, `PolicyApprover` in
`policy_approvals`, and `is_headless` in the notebook wing's `_kernel`.

Headless runs (nbval, nbclient, papermill) send their execute requests with ``allow_stdin``
false; the two interactive approvers check this at every batch and follow ``MEOWGENT_APPROVE``
instead, so a notebook written with buttons still runs unattended without blocking.
"""

from __future__ import annotations

import importlib.util
import warnings

from ...agent.approvals import Approver
from ...errors import SettingsError
from .._setting_words import APPROVALS, OLD_APPROVALS
from .input_approvals import InputApprover
from .policy_approvals import (
    HEADLESS_DENIAL,
    POLICIES,
    PolicyApprover,
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


def default_approver(mode: str = "ask", timeout: float = 600.0) -> Approver:
    """The approver for where this code runs.

    ``"allow"`` and ``"deny"`` give a `PolicyApprover`. ``"ask"`` and ``"every"`` (which calls
    are asked about is the agent's setting) give: in a headless kernel, the policy from
    ``MEOWGENT_APPROVE``; in a kernel with a frontend, a `WidgetApprover`; elsewhere an
    `InputApprover`. Each call returns a new approver: keep it for the session (one per kernel),
    so that "Always allow" lasts across cells.

    Args:
        mode: ``"ask"``, ``"every"``, ``"allow"`` or ``"deny"`` (the old ``"all"`` and ``"none"``
            still work, with a DeprecationWarning).
        timeout: Seconds a `WidgetApprover` waits for a click before denying.

    Raises:
        SettingsError: For another mode, or a headless run with an unknown ``MEOWGENT_APPROVE``.
    """
    if mode in OLD_APPROVALS:
        new = OLD_APPROVALS[mode]
        message = f"default_approver({mode!r}) is deprecated; write default_approver({new!r})"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        mode = new
    if mode not in APPROVALS:
        raise SettingsError(f"approval mode must be one of {', '.join(map(repr, APPROVALS))}, got {mode!r}")
    if mode in POLICIES:
        denial = "the notebook's approval setting (approve='deny') denies calls that need approval"
        return PolicyApprover(mode, f"approve={mode!r}", denial)  # type: ignore[arg-type]
    if running_kernel() is not None:
        if is_headless():
            return headless_policy()
        if importlib.util.find_spec("ipywidgets") is not None:
            return WidgetApprover(timeout)  # asks with input() itself in a frontend without widgets
    return InputApprover()  # a kernel without ipywidgets still forwards input() to the frontend
