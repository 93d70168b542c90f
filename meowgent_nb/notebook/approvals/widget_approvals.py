"""`WidgetApprover`: the approval buttons in the running cell.

In a ``%%agent`` cell they go under each waiting call's card (`notebook._shown_run`); after ``await
agent.arun(...)`` they are a panel of their own, one per batch. Clicks arrive while the cell
waits because ipykernel handles comm messages during an async cell. ipywidgets loads late.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Sequence
from typing import Any, cast

from ...agent.approvals import ApprovalRequest, Decision, Denied
from ...agent.approvals.decisions import decision_words
from .._shown_run import SHOWN_RUN, call_soon_in_cell
from ._approval_row import ApprovalRow
from .input_approvals import AddRule, RuleText, SessionChoices, ask_by_input
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

__all__ = ["WidgetApprover", "text_panel_type"]

_WAKE_EVERY = 0.2  # seconds; see _Batch.wait


class WidgetApprover(SessionChoices, AsksForServers):
    """The approval buttons in the running cell (see `_approval_row` for each button).

    The cell must be async (``await agent.arun(...)`` or ``%%agent``). Undecided calls are denied
    after ``timeout``; an interrupt denies them and propagates. Headless, it follows
    ``MEOWGENT_APPROVE``; in a frontend without widgets it asks with ``input()``.

    Args:
        timeout: Seconds to wait for every call of a batch to be decided.
        rule_text: Writes the rule "Allow calls like this…" opens with (see `SessionChoices`).
        add_rule: Adds the rule the person settled on; what it raises is shown under the rule.

    Attributes:
        always_allowed: Tools approved for the rest of the session with "Always allow".
        exact_allowed: Calls approved for the rest of the session with "Allow this exact call".

    Raises:
        RuntimeError: Outside a Jupyter kernel (a script, a terminal IPython), where no button
            could be shown or clicked.
    """

    def __init__(
        self, timeout: float = 600.0, rule_text: RuleText | None = None, add_rule: AddRule | None = None
    ):
        if running_kernel() is None:
            where = "a terminal IPython" if running_shell() is not None else "a plain Python process"
            raise RuntimeError(
                "WidgetApprover needs a Jupyter kernel (ipykernel >= 7.4) to show its buttons, and"
                f" this is {where}. It works in a notebook cell that awaits the agent"
                " (`await agent.arun(...)`) or runs %%agent. Here, use InputApprover() to ask in"
                " the terminal or default_approver() to pick one for where the code runs (both from"
                " meowgent_nb.notebook.approvals), or AutoApprove() to run every call."
            )
        super().__init__(rule_text, add_rule)
        self.timeout = timeout

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
            return [ask_by_input(request, self) for request in requests]
        batch = _Batch(self, requests, asyncio.get_running_loop())
        run = SHOWN_RUN.get()
        if run is None or not all(run.attach(r.call, row.view) for r, row in zip(requests, batch.rows)):
            if run is not None:  # a display without widgets
                for request in requests:
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
        earlier = [approver.remembered(request) for request in self.requests]
        for index, request in enumerate(self.requests):
            choose = functools.partial(self._settle, index)
            rule = functools.partial(approver.prefill, request)
            row = ApprovalRow(request, choose, call_soon, buttons=earlier[index] is None, rule_text=rule)
            row.label.value = note
            self.rows.append(row)
        for index, decision in enumerate(earlier):
            if decision is not None:
                self._decide(index, decision)

    def _settle(self, index: int, choice: str, value: Any) -> str | None:
        """Decide call ``index`` as a person chose; what was wrong with the choice (a rule
        ``add_rule`` refused), or None."""
        if self.decisions[index] is not None or self.all_decided.done():
            return None  # a second click, or a click after the wait ended
        try:
            if choice == "rule-only":  # a rule for later calls: this one still waits
                self.approver.add_separate_rule(value)
                return None
            decision = self.approver.decide(self.requests[index], choice, value)
        except Exception as error:  # noqa: BLE001 - a refused rule: the person fixes it and tries again
            return f"{type(error).__name__}: {error}" if not isinstance(error, ValueError) else str(error)
        self._decide(index, decision)
        if choice in ("always", "exact"):  # the batch's other calls it covers are decided with it
            for other, request in enumerate(self.requests):
                covered = self.approver.remembered(request) if self.decisions[other] is None else None
                if covered is not None:
                    self._decide(other, covered)
        return None

    def _decide(self, index: int, decision: Decision, outcome: str | None = None) -> None:
        outcome = outcome or decision_words(decision) or "denied"
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
        from IPython.display import DisplayHandle, display

        self.batch = batch
        note = f" Calls left undecided are denied after {_duration(batch.approver.timeout)}."
        children = [widgets.HTML(header_html(len(batch.requests), note))]
        for request, row in zip(batch.requests, batch.rows):
            children += [widgets.HTML(row_html(request, "")), row.view]
        self.view = text_panel_type()(children=children)
        self.view.plain_text = lambda: requests_text(batch.requests, batch.outcomes)
        self.handle = cast("DisplayHandle", display(self.view, display_id=True))  # with an id: a handle

    async def wait(self, timeout: float) -> list[Decision]:
        try:
            return await self.batch.wait(timeout)
        finally:
            self.handle.update(self.view)  # the saved output then shows how each call ended


@functools.cache
def text_panel_type() -> type:
    """A VBox whose text form is its ``plain_text()`` (made on first use: ipywidgets loads late).

    nbval compares this text, and the default (a repr with child ids) changes every run.
    """
    import ipywidgets as widgets

    class TextPanel(widgets.VBox):
        plain_text: Any = None

        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            data = cast("dict[str, Any]", super()._repr_mimebundle_(**kwargs))  # a VBox has a view
            if self.plain_text is not None:
                data["text/plain"] = self.plain_text()
            return data

    return TextPanel


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'' if minutes == 1 else 's'}"
    return f"{seconds:g} second{'' if seconds == 1 else 's'}"
