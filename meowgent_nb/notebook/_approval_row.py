"""One call's approval controls: Approve / Edit arguments / Deny / Always allow, and the edit box.

`ApprovalRow` is the widget part only: it reports a person's choice to ``on_choice`` and shows
the outcome it is told. Which calls are asked together, the wait and the timeout are
`widget_approvals`' part; where a row is shown (under its call's card in a running ``%%agent``
cell, or in a panel of its own) is the caller's.

Edited arguments are checked with the tool's parameters before they are accepted, so a person
cannot approve a call that would then fail validation: the error is shown under the box instead.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from .._visible import visible_html
from ..agent.approvals import ApprovalRequest
from ..errors import ToolArgumentsError

__all__ = ["ApprovalRow"]

_BUTTONS = (  # description, choice, style, tooltip
    ("Approve", "approve", "success", "Run this call"),
    ("Edit arguments", "edit", "", "Change the arguments, then approve the call with them"),
    ("Deny", "deny", "danger", "Do not run this call"),
    ("Always allow", "always", "", "Run this call and every later call of this tool in this session"),
)

Choice = Callable[[str, "dict[str, Any] | None"], None]
"""Called on the loop's thread with "approve", "deny" or "always", and edited arguments or None."""


class ApprovalRow:
    """The buttons, the edit box and the outcome label of one call waiting for a decision.

    Args:
        request: The call, its tool and its validated arguments.
        on_choice: Told each choice, on the thread of ``call_soon`` (the cell's loop).
        call_soon: Runs a function on the cell's loop (clicks may arrive on another thread).
        buttons: False for a call already decided (always allowed): only its label is shown.
    """

    def __init__(
        self, request: ApprovalRequest, on_choice: Choice, call_soon: Callable[..., Any], *, buttons: bool = True
    ):
        import ipywidgets as widgets

        self.request, self.on_choice, self.call_soon = request, on_choice, call_soon
        self.label = widgets.Label("waiting for a decision", description="Decision:")
        self.decided = False
        self.buttons: list[Any] = []
        self.edit_box: Any = None
        if not buttons:
            self.view = widgets.VBox([self.label])
            return
        self.buttons = [self._button(*spec) for spec in _BUTTONS]
        original = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False, default=repr)
        self.editor = widgets.Textarea(value=original, rows=min(12, original.count("\n") + 2))
        self.editor.layout.width = "100%"
        self.problem = widgets.HTML("")
        approve_edited = self._button("Approve with these arguments", "approve-edited", "success", "")
        self.edit_box = widgets.VBox([self.editor, approve_edited, self.problem])
        self.edit_box.layout.display = "none"
        self._line = widgets.HBox([*self.buttons, self.label])
        self.view = widgets.VBox([self._line, self.edit_box])
        self.buttons.append(approve_edited)
        self.view.add_class("meowgent-approval-row")

    def _button(self, description: str, choice: str, style: str, tooltip: str) -> Any:
        import ipywidgets as widgets

        button = widgets.Button(description=description, button_style=style, tooltip=tooltip)
        button.layout.width = "auto"
        button.on_click(functools.partial(self._clicked, choice))
        return button

    def _clicked(self, choice: str, _button: Any) -> None:
        self.call_soon(self._choose, choice)

    def _choose(self, choice: str) -> None:
        if self.decided:
            return  # a second click, or a click after the wait ended
        if choice == "edit":
            self.edit_box.layout.display = "flex"
        elif choice == "approve-edited":
            arguments = self._edited()
            if arguments is not None:
                self.on_choice("approve", None if arguments == dict(self.request.arguments) else arguments)
        else:
            self.on_choice(choice, None)

    def _edited(self) -> dict[str, Any] | None:
        """The edited arguments if they are valid for the tool; else None, with the problem shown."""
        try:
            arguments = json.loads(self.editor.value)
            if not isinstance(arguments, dict):
                raise ValueError("the arguments must be a JSON object, {...}")
            self.request.tool.validate(arguments)
        except (ValueError, ToolArgumentsError) as error:  # JSONDecodeError is a ValueError
            self.problem.value = (
                f'<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">'
                f"{visible_html(str(error))}\nFix the arguments, then approve again.</pre>"
            )
            return None
        self.problem.value = ""
        return arguments

    def show(self, outcome: str) -> None:
        """The call is decided: show ``outcome`` and take the controls away."""
        self.decided = True
        self.label.value = outcome
        for button in self.buttons:
            button.disabled = True
        if self.edit_box is not None:
            self.edit_box.layout.display = "none"

    def close(self) -> None:
        """Free the widgets (once the row is off screen)."""
        for widget in [self.view, self.label, *self.buttons, *self._extra()]:
            widget.close()

    def _extra(self) -> list[Any]:
        return [] if self.edit_box is None else [self._line, self.edit_box, self.editor, self.problem]
