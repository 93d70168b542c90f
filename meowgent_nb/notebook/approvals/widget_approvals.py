"""`WidgetApprover`: Approve / Edit arguments / Deny / Always allow buttons in the running cell.

In a ``%%agent`` cell the buttons go under each waiting call's card (see `_run_context`); after
``await agent.arun(...)`` they are a panel of their own, one per batch. A frontend that shows no
widgets (``jupyter console``) is asked with ``input()`` instead (see `shows_widgets`). The wait
works because ipykernel (>= 7.4) handles comm messages, such as button clicks, while an async
cell awaits. ipywidgets loads when the first buttons are made.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Sequence
from typing import Any

from ...agent.approvals import ApprovalRequest, Approved, Decision, Denied
from ._approval_row import ApprovalRow
from ._run_context import SHOWN_RUN, call_soon_in_cell
from .input_approvals import ask_by_input
from .policy_approvals import (
    AsksForServers,
    header_html,
    headless_policy,
    is_headless,
    requests_text,
    row_html,
    running_kernel,
    running_shell,
    shows_widgets,
)

__all__ = ["WidgetApprover"]

_WAKE_EVERY = 0.2  # seconds; see _Batch.wait


class WidgetApprover(AsksForServers):
    """Approve / Edit arguments / Deny / Always allow buttons in the running cell.

    The cell must be async (``await agent.arun(...)``, or ``%%agent``) for clicks to arrive while
    it waits. Edited arguments are validated with the tool's parameters before the call may be
    approved with them. Undecided calls are denied after ``timeout`` seconds. An interrupt (or
    the Stop button) denies them and propagates. In a headless run it follows
    ``MEOWGENT_APPROVE`` instead (see `is_headless`); where the frontend shows no widgets it
    asks with ``input()``. An MCP server's form (elicitation) or request to use the model
    (sampling) during a call is shown the same way, under the call's card (see `server_asks`).

    Args:
        timeout: Seconds to wait for every call of a batch to be decided.

    Attributes:
        always_allowed: Tools approved for the rest of the session with "Always allow".

    Raises:
        RuntimeError: Outside a Jupyter kernel (a script, a terminal IPython), where no button
            could be shown or clicked.
    """

    def __init__(self, timeout: float = 600.0):
        if running_kernel() is None:
            where = "a terminal IPython" if running_shell() is not None else "a plain Python process"
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
            return await headless_policy().approve(requests)
        if threading.current_thread().name == "meowgent-async":
            # `Agent.run` in a cell: the kernel's thread is blocked joining this one (see
            # _async.run_to_completion), so no click could arrive; fail now, not in 10 minutes.
            raise RuntimeError(
                "WidgetApprover cannot wait for a click while the cell blocks: run the agent in an"
                " async cell, `await agent.arun(...)` (or use %%agent), instead of `agent.run(...)`."
            )
        if not shows_widgets():  # jupyter console: buttons would never show; ask on stdin
            return [ask_by_input(request, self.always_allowed) for request in requests]
        batch = _Batch(self, requests, asyncio.get_running_loop())
        run = SHOWN_RUN.get()
        if run is None or not all(run.attach(r.call, row.view) for r, row in zip(requests, batch.rows)):
            for request in requests if run is not None else ():  # a display without widgets
                run.detach(request.call)
            return await _Panel(batch).wait(self.timeout)
        try:
            return await batch.wait(self.timeout)
        finally:
            for request, row in zip(requests, batch.rows):
                run.detach(request.call)
                row.close()  # the card says what was decided from now on

    def __repr__(self) -> str:
        return f"WidgetApprover(timeout={self.timeout:g})"


class _Batch:
    """The calls of one turn waiting for decisions, and their rows; changed only on ``loop``'s thread."""

    def __init__(self, approver: WidgetApprover, requests: Sequence[ApprovalRequest], loop: Any):
        self.approver, self.requests, self.loop = approver, list(requests), loop
        self.decisions: list[Decision | None] = [None] * len(self.requests)
        self.outcomes = ["waiting"] * len(self.requests)
        self.all_decided = loop.create_future()
        self.on_change: Any = None
        """Called after a decision (the standalone panel redraws its text)."""
        self.rows = []
        note = f"waiting for a decision (denied after {_duration(approver.timeout)})"
        call_soon = call_soon_in_cell(loop)
        for index, request in enumerate(self.requests):
            allowed = request.tool.name in approver.always_allowed
            choose = functools.partial(self._settle, index)
            row = ApprovalRow(request, choose, call_soon, buttons=not allowed)
            row.label.value = note
            self.rows.append(row)
        for index, request in enumerate(self.requests):
            if request.tool.name in approver.always_allowed:
                self._decide(index, Approved("always allowed for this session"), "always allowed")

    def _settle(self, index: int, choice: str, arguments: dict[str, Any] | None) -> None:
        if self.decisions[index] is not None or self.all_decided.done():
            return  # a second click, or a click after the wait ended
        if choice == "approve" and arguments is not None:
            self._decide(index, Approved("approved by you, with changed arguments", arguments), "approved (edited)")
        elif choice == "approve":
            self._decide(index, Approved("approved by you"), "approved")
        elif choice == "deny":
            self._decide(index, Denied(reason="by you"), "denied")
        else:
            name = self.requests[index].tool.name
            self.approver.always_allowed.add(name)
            for other, request in enumerate(self.requests):
                if request.tool.name == name and self.decisions[other] is None:
                    self._decide(other, Approved("always allowed for this session"), "always allowed")

    def _decide(self, index: int, decision: Decision, outcome: str) -> None:
        self.decisions[index], self.outcomes[index] = decision, outcome
        self.rows[index].show(outcome)
        if self.on_change is not None:
            self.on_change()
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
            self._close(Denied("stopped before a decision"), "denied: stopped")
            raise
        return [d for d in self.decisions if d is not None]


class _Panel:
    """A batch shown as a panel of its own (no transcript on screen to put the buttons in)."""

    def __init__(self, batch: _Batch):
        import ipywidgets as widgets
        from IPython.display import display

        self.batch = batch
        note = f" Calls left undecided are denied after {_duration(batch.approver.timeout)}."
        children = [widgets.HTML(header_html(len(batch.requests), note))]
        for request, row in zip(batch.requests, batch.rows):
            children += [widgets.HTML(row_html(request, "")), row.view]
        self.view = _panel_type()(children=children)
        self.view.plain_text = lambda: requests_text(batch.requests, batch.outcomes)
        self.handle = display(self.view, display_id=True)

    async def wait(self, timeout: float) -> list[Decision]:
        try:
            return await self.batch.wait(timeout)
        finally:
            self.handle.update(self.view)  # the saved output then shows how each call ended


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


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'' if minutes == 1 else 's'}"
    return f"{seconds:g} second{'' if seconds == 1 else 's'}"
