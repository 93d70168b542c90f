"""Asking a person: buttons in the running cell, an ``input()`` prompt, or a policy when no one is there.

`widget_approvals` holds `WidgetApprover` (the buttons; one call's row is `_approval_row`; the
button words are the wing's `notebook._labels`, the cell's shown run `notebook._shown_run`); `input_approvals` holds
`InputApprover` and `SessionChoices` (what a choice means, shared with the buttons);
`policy_approvals` holds `PolicyApprover` and `headless_policy` (``MEOWGENT_APPROVE`` when no one
can answer); `trust_panel` asks to trust a rules file; `proposal_card` asks whether a cell the agent proposes
goes below (Insert below / Not now). `default_approver` picks one for where the
code runs.
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

    ``"allow"`` and ``"deny"`` give a `PolicyApprover`; ``"ask"`` and ``"every"`` give the
    ``MEOWGENT_APPROVE`` policy in a headless kernel, a `WidgetApprover` in a kernel with
    ipywidgets, else an `InputApprover`. Keep the result for the session so "Always allow" lasts.

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
