"""`WidgetApprover`: Approve / Deny / Always allow buttons in the running cell, one panel per batch.

The wait works because ipykernel (>= 7.4) handles comm messages, such as button clicks, while an
async cell awaits. ipywidgets loads when the first panel is made.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Sequence
from typing import Any

from ..agent.approvals import ApprovalRequest, Approved, Decision, Denied
from .policy_approvals import (
    header_html,
    headless_policy,
    is_headless,
    requests_text,
    row_html,
    running_kernel,
    running_shell,
)

__all__ = ["WidgetApprover"]

_WAKE_EVERY = 0.2  # seconds; see _Panel.wait
_BUTTONS = (  # description, choice, style, tooltip
    ("Approve", "approve", "success", "Run this call"),
    ("Deny", "deny", "danger", "Do not run this call"),
    ("Always allow", "always", "", "Run this call and every later call of this tool in this session"),
)


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
        panel = _Panel(self, requests, asyncio.get_running_loop())
        return await panel.wait(self.timeout)

    def __repr__(self) -> str:
        return f"WidgetApprover(timeout={self.timeout:g})"


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
        children = [widgets.HTML(header_html(len(self.requests), note))]
        for index, request in enumerate(self.requests):
            allowed = request.tool.name in approver.always_allowed
            self.labels.append(widgets.Label("waiting for a decision", description="Decision:"))
            self.buttons.append([] if allowed else self._buttons(index))
            children += [
                widgets.HTML(row_html(request, "")),
                widgets.HBox([*self.buttons[-1], self.labels[-1]]),
            ]
            if allowed:
                self._decide(index, Approved("always allowed for this session"), "always allowed")
        self.view = _panel_type()(children=children)
        self.view.plain_text = lambda: requests_text(self.requests, self.outcomes)
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


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'' if minutes == 1 else 's'}"
    return f"{seconds:g} second{'' if seconds == 1 else 's'}"
