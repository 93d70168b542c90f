"""Asking a person: buttons in the running cell, an ``input()`` prompt, or a policy when no one is there.

`WidgetApprover` shows one panel per batch in the cell that is running. The wait works because
ipykernel (>= 7.4) handles comm messages, such as button clicks, while an async cell awaits.
`InputApprover` asks in a terminal. `PolicyApprover` never waits: it applies ``all`` or ``none``
and shows what it decided. `default_approver` picks one of them for where the code runs.

Headless runs (nbval, nbclient, papermill) send their execute requests with ``allow_stdin``
false; the two interactive approvers check this at every batch and follow ``MEOWGENT_APPROVE``
instead, so a notebook written with buttons still runs unattended without blocking.
"""

from __future__ import annotations

import asyncio
import functools
import html
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, Literal

from ._visible import visible, visible_html
from ..agent.approvals import ApprovalRequest, Approved, Approver, Decision, Denied

__all__ = [
    "HEADLESS_DENIAL",
    "InputApprover",
    "PolicyApprover",
    "WidgetApprover",
    "default_approver",
    "is_headless",
]

HEADLESS_DENIAL = "no person to approve (headless run)"
"""What the model is told (after "Denied: ") when a headless run denies a call."""

_ENV = "MEOWGENT_APPROVE"
_POLICIES = ("all", "none")
_MODES = ("ask", "every", "all", "none")
_VALUE_LIMIT = 60  # characters of one argument's repr in the one-line form of a call
_WAKE_EVERY = 0.2  # seconds; see _Panel.wait
_BUTTONS = (  # description, choice, style, tooltip
    ("Approve", "approve", "success", "Run this call"),
    ("Deny", "deny", "danger", "Do not run this call"),
    ("Always allow", "always", "", "Run this call and every later call of this tool in this session"),
)


def is_headless() -> bool:
    """Whether the code runs in a kernel whose current cell was sent with ``allow_stdin`` false.

    nbval, nbclient and papermill send cells that way; a person's frontend does not. Outside a
    kernel (a terminal IPython, a script) this is False.
    """
    kernel = _kernel()
    if kernel is None:
        return False
    # The parent is a ContextVar, so it is the request of the cell running in this task, even
    # when another request (on a subshell) arrived since; `_allow_stdin` is only the latest one's.
    parent = kernel.get_parent("shell") or {}
    if parent.get("header", {}).get("msg_type") == "execute_request":
        return not parent.get("content", {}).get("allow_stdin", False)
    return not getattr(kernel, "_allow_stdin", False)


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
    if mode in _POLICIES:
        denial = "the notebook's approval setting (approve='none') denies calls that need approval"
        return PolicyApprover(mode, f"approve={mode!r}", denial)  # type: ignore[arg-type]
    if _kernel() is not None:
        if is_headless():
            return _headless_policy()
        if importlib.util.find_spec("ipywidgets") is not None:
            return WidgetApprover(timeout)
    return InputApprover()  # a kernel without ipywidgets still forwards input() to the frontend


class PolicyApprover:
    """Decides without asking, and shows each call with the decision and why.

    Args:
        mode: ``"all"`` approves every call; ``"none"`` denies it (the model is told
            "Denied: no person to approve (headless run)").
        reason: Why this policy applies, shown with the decision (e.g. "MEOWGENT_APPROVE=none").
    """

    def __init__(self, mode: Literal["all", "none"], reason: str, denial: str = HEADLESS_DENIAL):
        if mode not in _POLICIES:
            raise ValueError(f"PolicyApprover mode must be 'all' or 'none', got {mode!r}")
        self.mode = mode
        self.reason = reason
        self.denial = denial
        """What the model is told when a call is denied ("Denied: {denial}")."""

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        if self.mode == "all":
            decision: Decision = Approved(self.reason)
            outcome = f"approved ({self.reason})"
        else:
            decision, outcome = Denied(self.denial), f"denied ({self.reason})"
        rows = "".join(_row_html(r, html.escape(outcome)) for r in requests)
        text = _text(requests, [outcome] * len(requests))
        _show({"text/html": f"<div>{_header_html(len(requests))}{rows}</div>", "text/plain": text})
        return [decision] * len(requests)

    def __repr__(self) -> str:
        return f"PolicyApprover({self.mode!r}, {self.reason!r})"


class WidgetApprover:
    """Approve / Deny / Always allow buttons in the running cell, one panel per batch.

    The cell must be async (``await agent.arun(...)``) for clicks to arrive while it waits.
    Undecided calls are denied after ``timeout`` seconds. An interrupt denies them and
    propagates. In a headless run it follows ``MEOWGENT_APPROVE`` instead (see `is_headless`).

    Args:
        timeout: Seconds to wait for every call of a batch to be decided.

    Attributes:
        always_allowed: Tools approved for the rest of the session with "Always allow".

    Raises:
        RuntimeError: Outside a Jupyter kernel (a script, a terminal IPython), where no button
            could be shown or clicked.
    """

    def __init__(self, timeout: float = 600.0):
        if _kernel() is None:
            where = "a terminal IPython" if _shell() is not None else "a plain Python process"
            raise RuntimeError(
                "WidgetApprover needs a Jupyter kernel (ipykernel >= 7.4) to show its buttons, and"
                f" this is {where}. It works in a notebook cell that awaits the agent"
                " (`await agent.arun(...)`) or runs %%agent. Here, use InputApprover() to ask in"
                " the terminal or default_approver() to pick one for where the code runs (both from"
                " meowgent_nb.notebook.approvals), or AutoApprove() to run every call."
            )
        self.timeout = timeout
        self.always_allowed: set[str] = set()

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        if is_headless():
            return await _headless_policy().approve(requests)
        if threading.current_thread().name == "meowgent-async":
            # `Agent.run` in a cell: the kernel's thread is blocked joining this one (see
            # _async.run_to_completion), so no click could arrive; fail now, not in 10 minutes.
            raise RuntimeError(
                "WidgetApprover cannot wait for a click while the cell blocks: run the agent in an"
                " async cell, `await agent.arun(...)` (or use %%agent), instead of `agent.run(...)`."
            )
        panel = _Panel(self, requests, asyncio.get_running_loop())
        return await panel.wait(self.timeout)

    def __repr__(self) -> str:
        return f"WidgetApprover(timeout={self.timeout:g})"


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
            return await _headless_policy().approve(requests)
        return [self._ask(request) for request in requests]

    def _ask(self, request: ApprovalRequest) -> Decision:
        name = request.tool.name
        if name in self.always_allowed:
            print(f"{_call_text(request, None)}: always allowed")
            return Approved("always allowed for this session")
        prompt = f"Run {_call_text(request, None)}? [y]es / [n]o / [a]lways: "
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


class _Panel:
    """One batch on screen and its decisions; changed only on the thread of ``loop``."""

    def __init__(self, approver: WidgetApprover, requests: Sequence[ApprovalRequest], loop: Any):
        import ipywidgets as widgets
        from IPython.display import display

        self.approver, self.requests, self.loop = approver, list(requests), loop
        self.decisions: list[Decision | None] = [None] * len(self.requests)
        self.outcomes = ["waiting"] * len(self.requests)
        self.all_decided = loop.create_future()
        self.buttons: list[list[Any]] = []
        self.labels: list[Any] = []
        note = f" Calls left undecided are denied after {_duration(approver.timeout)}."
        children = [widgets.HTML(_header_html(len(self.requests), note))]
        for index, request in enumerate(self.requests):
            allowed = request.tool.name in approver.always_allowed
            self.labels.append(widgets.Label("waiting for a decision", description="Decision:"))
            self.buttons.append([] if allowed else self._buttons(index))
            children += [
                widgets.HTML(_row_html(request, "")),
                widgets.HBox([*self.buttons[-1], self.labels[-1]]),
            ]
            if allowed:
                self._decide(index, Approved("always allowed for this session"), "always allowed")
        self.view = _panel_type()(children=children)
        self.view.plain_text = lambda: _text(self.requests, self.outcomes)
        self.handle = display(self.view, display_id=True)

    def _buttons(self, index: int) -> list[Any]:
        import ipywidgets as widgets

        buttons = []
        for description, choice, style, tooltip in _BUTTONS:
            button = widgets.Button(description=description, button_style=style, tooltip=tooltip)
            button.layout.width = "auto"
            button.on_click(functools.partial(self._clicked, index, choice))
            buttons.append(button)
        return buttons

    def _clicked(self, index: int, choice: str, _button: Any) -> None:
        # Clicks may arrive on a subshell thread; futures and widgets are touched on the loop's.
        self.loop.call_soon_threadsafe(self._settle, index, choice)

    def _settle(self, index: int, choice: str) -> None:
        if self.decisions[index] is not None or self.all_decided.done():
            return  # a second click, or a click after the wait ended
        if choice == "approve":
            self._decide(index, Approved("approved by the person"), "approved")
        elif choice == "deny":
            self._decide(index, Denied(), "denied")
        else:
            name = self.requests[index].tool.name
            self.approver.always_allowed.add(name)
            for other, request in enumerate(self.requests):
                if request.tool.name == name and self.decisions[other] is None:
                    self._decide(other, Approved("always allowed for this session"), "always allowed")

    def _decide(self, index: int, decision: Decision, outcome: str) -> None:
        self.decisions[index], self.outcomes[index] = decision, outcome
        self.labels[index].value = outcome
        for button in self.buttons[index]:
            button.disabled = True
        if all(d is not None for d in self.decisions) and not self.all_decided.done():
            self.all_decided.set_result(None)

    def _close(self, decision: Denied, outcome: str) -> None:
        for index, existing in enumerate(self.decisions):
            if existing is None:
                self._decide(index, decision, outcome)

    async def wait(self, timeout: float) -> list[Decision]:
        """Every call's decision, once all are made, the timeout passes, or an interrupt comes."""
        deadline = self.loop.time() + timeout
        try:
            while not self.all_decided.done():
                left = deadline - self.loop.time()
                if left <= 0:
                    waited = f"no decision within {_duration(timeout)}"
                    self._close(Denied(waited), f"denied: {waited}")
                    break
                # Wake up often: ipykernel's SIGINT handler schedules the cancellation without
                # waking the loop, so an idle wait would not see an interrupt (ipykernel#881).
                await asyncio.wait({self.all_decided}, timeout=min(left, _WAKE_EVERY))
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._close(Denied("interrupted before a decision"), "denied: interrupted")
            raise
        finally:
            self.handle.update(self.view)  # the saved output then shows how each call ended
        return [d for d in self.decisions if d is not None]


@functools.cache
def _panel_type() -> type:
    """A VBox whose text form is the panel's summary (made on first use: ipywidgets loads late)."""
    import ipywidgets as widgets

    class ApprovalPanel(widgets.VBox):
        plain_text: Any = None

        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            # The default text is the widget's repr, with child ids; nbval compares this text.
            data = super()._repr_mimebundle_(**kwargs)
            if self.plain_text is not None:
                data["text/plain"] = self.plain_text()
            return data

    return ApprovalPanel


def _headless_policy() -> PolicyApprover:
    value = (os.environ.get(_ENV) or "none").strip().lower()
    if value not in _POLICIES:
        raise ValueError(
            f"{_ENV}={os.environ[_ENV]!r} is not a policy for headless runs; set {_ENV}=all"
            f" (run the calls) or {_ENV}=none (deny them; the default)."
        )
    return PolicyApprover(value, f"{_ENV}={value}")  # type: ignore[arg-type]


def _shell() -> Any:
    """The running IPython shell, or None (IPython is not imported just to find out)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _kernel() -> Any:
    return getattr(_shell(), "kernel", None)


def _show(bundle: dict[str, str]) -> None:
    if _shell() is None:
        print(bundle["text/plain"])  # a plain script: display() would print the dict
        return
    from IPython.display import display

    display(bundle, raw=True)


def _call_text(request: ApprovalRequest, limit: int | None = _VALUE_LIMIT) -> str:
    parts = []
    for name, value in request.arguments.items():
        text = repr(value)
        if limit is not None and len(text) > limit:
            text = text[: limit - 1] + "…"
        parts.append(f"{name}={text}")
    return visible(f"{request.tool.name}({', '.join(parts)})")  # what a person approves: nothing hidden


def _text(requests: Sequence[ApprovalRequest], outcomes: Sequence[str]) -> str:
    return "\n".join(f"Approval needed: {_call_text(r)} -> {o}" for r, o in zip(requests, outcomes))


def _header_html(count: int, note: str = "") -> str:
    calls = "1 call" if count == 1 else f"{count} calls"
    return f"<b>Approval needed</b> for {calls}.{html.escape(note)}"


def _row_html(request: ApprovalRequest, outcome_html: str) -> str:
    arguments = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False, default=repr)
    decided = f"<div>&rarr; <b>{outcome_html}</b></div>" if outcome_html else ""
    return (
        f"<div style='margin-top:0.5em'><code>{visible_html(request.tool.name)}</code>"
        f"<pre style='margin:0.2em 0'>{visible_html(arguments)}</pre>{decided}</div>"
    )


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'' if minutes == 1 else 's'}"
    return f"{seconds:g} second{'' if seconds == 1 else 's'}"
