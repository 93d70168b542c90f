"""One call's approval controls (`ApprovalRow`): its buttons, the boxes three of them open, its outcome.

The row reports a person's choice and shows the outcome it is told; batching, waiting and the
timeout are `widget_approvals`'. Each **Check** replaces the edit box with a fresh one, because
during an async cell the widget frontend sends only a box's first value change at once: what
**Approve these arguments** runs is then always what the person was shown. A call of a tool
with a ``code_argument`` shows its code highlighted with its risk label above the buttons, and
**Edit code** opens that code as plain text (not the JSON of the arguments); **Check** shows the new
code's risk label. Enter in the Rule or Reason box does what the button beside it does; **Add rule
only** adds the rule without deciding the call.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from ..._visible import visible_html
from ...agent.approvals import ApprovalRequest
from ...errors import ToolArgumentsError
from .._labels import (
    ADD_RULE,
    ADD_RULE_ONLY,
    ALLOW_EXACT,
    ALLOW_LIKE,
    ALWAYS_ALLOW,
    APPROVE,
    APPROVE_EDITED,
    CHECK,
    DENY,
    DENY_REASON,
    EDIT,
    EDIT_CODE,
    SEND_DENIAL,
)
from ..views._code_html import code_html, risk_html
from .input_approvals import CodeCall, code_call
from .policy_approvals import tool_title

__all__ = ["ApprovalRow"]

_BUTTONS = (  # description, choice, style, tooltip
    (APPROVE, "approve", "success", "Run this call"),
    (EDIT, "edit", "", "Change the arguments, check them, then approve the call with them"),
    (DENY, "deny", "danger", "Do not run this call"),
    (ALWAYS_ALLOW, "always", "", "Run this call and every later call of this tool in this session"),
    (
        ALLOW_EXACT,
        "exact",
        "",
        "Run this call, and this same call with these same arguments again in this session",
    ),
    (ALLOW_LIKE, "like", "", "Write a rule for calls like this one (prefilled from it), then approve"),
    (DENY_REASON, "reason", "", "Do not run this call, and tell the model why"),
)
_CODE_BUTTONS = tuple(  # a call of a tool with a code_argument: Edit opens the code, not the arguments
    (EDIT_CODE, "edit", "", "Change the code, check it, then approve the call with it")
    if spec[0] == EDIT
    else spec
    for spec in _BUTTONS
)

Choice = Callable[[str, Any], "str | None"]
"""Called on the loop's thread with "approve" (edited arguments or None), "deny" (a reason or
None), "always", "exact", "rule" or "rule-only" (its text: a rule added without deciding the
call); returns what was wrong with the choice, or None."""


class ApprovalRow:
    """The buttons, the edit box and the outcome label of one call waiting for a decision.

    Args:
        request: The call, its tool and its validated arguments.
        on_choice: Told each choice, on the thread of ``call_soon`` (the cell's loop).
        call_soon: Runs a function on the cell's loop, in the cell's context (`call_soon_in_cell`).
        buttons: False for a call already decided (always allowed): only its label is shown.
        rule_text: Writes the rule "Allow calls like this…" opens with (called when it opens).
    """

    def __init__(
        self,
        request: ApprovalRequest,
        on_choice: Choice,
        call_soon: Callable[..., Any],
        *,
        buttons: bool = True,
        rule_text: Callable[[], str] | None = None,
    ):
        import ipywidgets as widgets

        self.request, self.on_choice, self.call_soon = request, on_choice, call_soon
        self.rule_text = rule_text or (lambda: "")
        self.label = widgets.Label("waiting for a decision", description="Decision:")
        self.decided = False
        self.buttons: list[Any] = []
        self.edit_box: Any = None
        self.checked: dict[str, Any] | None = None
        """The edited arguments the last Check accepted and showed (what Approve these arguments runs)."""
        if not buttons:
            self.view = widgets.VBox([self.label])
            return
        self.code = code_call(request)
        """The code the call carries and its risk label; None for a tool without a ``code_argument``."""
        self.buttons = [self._button(*spec) for spec in (_BUTTONS if self.code is None else _CODE_BUTTONS)]
        text = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False, default=repr)
        self.editor = self._editor(text if self.code is None else self.code.code)
        self.check = self._button(CHECK, "check", "", "Check the arguments against the tool's parameters")
        self.approve_edited = self._button(APPROVE_EDITED, "approve-edited", "success", "Run the call shown")
        self.approve_edited.layout.display = "none"
        self.problem = widgets.HTML("")
        self.edit_box = widgets.VBox(
            [self.editor, widgets.HBox([self.check, self.approve_edited]), self.problem]
        )
        self.edit_box.layout.display = "none"
        self.rule = _OneLine(self, ADD_RULE, "rule", "success", "Rule:", "TOOL ARG=PATTERN ... -> allow")
        # A rule for later calls that need not cover this one: the call keeps waiting for its own decision.
        self.rule_only = self._button(
            ADD_RULE_ONLY,
            "rule-only",
            "",
            "Add the rule for later calls; this call still waits for a decision",
        )
        self.rule.view.children[0].children += (self.rule_only,)
        self.reason = _OneLine(
            self,
            SEND_DENIAL,
            "deny",
            "danger",
            "Reason:",
            "why not (the model reads it; empty: a plain denial)",
        )
        self._line = widgets.HBox([*self.buttons, self.label], layout=widgets.Layout(flex_flow="row wrap"))
        title = tool_title(request)
        self.title = None
        """The tool's title for people (an MCP server's), above the buttons; None when it has none."""
        if title is not None:
            self.title = widgets.HTML(f'<div class="meowgent-approval-title">{visible_html(title)}</div>')
        self.code_view = None
        """The call's code, highlighted, and its risk label, above the buttons (a code call only)."""
        if self.code is not None:
            self.code_view = widgets.HTML(_code_view(self.code, "wants to run this code"))
            self.code_view.add_class("meowgent-approval-code")
        boxes = [self.edit_box, self.rule.view, self.reason.view]
        heads = [head for head in (self.title, self.code_view) if head is not None]
        self.view = widgets.VBox([*heads, self._line, *boxes])
        self.buttons += [
            self.check,
            self.approve_edited,
            self.rule.button,
            self.rule_only,
            self.reason.button,
        ]
        self.view.add_class("meowgent-approval-row")

    def _button(self, description: str, choice: str, style: str, tooltip: str) -> Any:
        import ipywidgets as widgets

        button = widgets.Button(description=description, button_style=style, tooltip=tooltip)
        button.layout.width = "auto"
        button.on_click(functools.partial(self._clicked, choice))
        return button

    @staticmethod
    def _editor(text: str) -> Any:
        import ipywidgets as widgets

        # continuous_update=False: the text travels once, when the box loses focus (on Check).
        editor = widgets.Textarea(value=text, rows=min(12, text.count("\n") + 2), continuous_update=False)
        editor.layout.width = "100%"
        return editor

    def _clicked(self, choice: str, _button: Any) -> None:
        self.call_soon(self._choose, choice)

    def _choose(self, choice: str) -> None:
        if self.decided:
            return  # a second click, or a click after the wait ended
        if choice == "edit":
            self.edit_box.layout.display = "flex"
        elif choice == "like":
            try:
                self.rule.open(self.rule_text())
            except Exception as error:  # noqa: BLE001 - no prefill: the person writes the rule
                self.rule.open("")
                self.rule.sent(
                    f"No rule could be written from this call ({type(error).__name__}: {error}); write one."
                )
        elif choice == "reason":
            self.reason.open(None)
        elif choice in ("rule", "deny-reason"):
            one_line = self.rule if choice == "rule" else self.reason
            one_line.sent(self.on_choice("rule" if choice == "rule" else "deny", one_line.text.value))
        elif choice == "rule-only":
            problem = self.on_choice("rule-only", self.rule.text.value)
            self.rule.sent(problem)
            if problem is None:
                self.rule.view.layout.display = "none"
                self.label.value = f"rule added: {' '.join(self.rule.text.value.split())}; this call still waits for a decision"
        elif choice == "check":
            self._check()
        elif choice == "approve-edited":
            if self.checked is not None:
                same = self.checked == dict(self.request.arguments)
                self.on_choice("approve", None if same else self.checked)
        else:
            self.on_choice(choice, None)

    def _check(self) -> None:
        """Validate the text; show the call it makes (or the problem) and a fresh text box."""
        text = self.editor.value
        fresh = self._editor(text)
        self.edit_box.children = (fresh, *self.edit_box.children[1:])
        self.editor.close()
        self.editor = fresh
        self.checked = None
        self.approve_edited.layout.display = "none"
        try:
            if self.code is not None:  # the box holds the code alone
                arguments = {**self.request.arguments, self.code.argument: text}
            else:
                arguments = json.loads(text)
            if not isinstance(arguments, dict):
                raise ValueError("the arguments must be a JSON object, {...}")
            values = self.request.tool.validate(arguments)
        except (ValueError, ToolArgumentsError) as error:  # JSONDecodeError is a ValueError
            self.problem.value = (
                f'<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">'
                f"{visible_html(str(error))}\nFix the arguments, then check again.</pre>"
            )
            return
        self.checked = arguments
        edited = code_call(self.request, arguments)
        if edited is not None:
            self.problem.value = f'<div class="meowgent-edit-preview">{_code_view(edited, "will run")}</div>'
            self.approve_edited.layout.display = "inline-flex"
            return
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        self.problem.value = (
            f'<pre class="meowgent-edit-preview" style="white-space: pre-wrap">will run: '
            f"{visible_html(self.request.tool.name)}({visible_html(shown)})</pre>"
        )
        self.approve_edited.layout.display = "inline-flex"

    def show(self, outcome: str) -> None:
        """The call is decided: show ``outcome`` and take the controls away."""
        self.decided = True
        self.label.value = outcome
        for button in self.buttons:
            button.disabled = True
        if self.edit_box is not None:
            for box in (self.edit_box, self.rule.view, self.reason.view):
                box.layout.display = "none"

    def close(self) -> None:
        """Free the widgets (once the row is off screen)."""
        extra = [] if self.edit_box is None else [self._line, self.edit_box, self.editor, self.problem]
        extra += [] if self.edit_box is None else [*self.rule.widgets(), *self.reason.widgets()]
        extra += [self.title] if getattr(self, "title", None) is not None else []
        extra += [self.code_view] if getattr(self, "code_view", None) is not None else []
        for widget in [self.view, self.label, *self.buttons, *extra]:
            widget.close()


def _code_view(code: CodeCall, lead: str) -> str:
    """The code, highlighted, under a line that says what it is and its risk label with what it is based on."""
    head = f'<span style="opacity: 0.8">{lead}</span> {risk_html(code.label, code.reasons)}'
    return f"<div>{head}</div>{code_html(code.code)}"


_ENTER_WAIT = 0.3
"""Seconds Enter waits for the typed text before it sends the box's text as it is (unchanged)."""


class _OneLine:
    """A one-line text box with its button and the problem it met: the rule of "Allow calls like
    this…", the reason of "Deny with a reason". Hidden until opened."""

    def __init__(self, row: ApprovalRow, label: str, choice: str, style: str, name: str, placeholder: str):
        import ipywidgets as widgets

        self.row, self.name, self.placeholder = row, name, placeholder
        self.choice = "rule" if choice == "rule" else "deny-reason"
        self.entered = False
        """Enter was pressed and the typed text it sends may still be on its way."""
        self.text = self._box("")
        tooltip = (
            "Add the rule, then run this call"
            if choice == "rule"
            else "Deny the call, telling the model this"
        )
        self.button = row._button(label, "rule" if choice == "rule" else "deny-reason", style, tooltip)
        self.problem = widgets.HTML("")
        self.view = widgets.VBox([widgets.HBox([self.text, self.button]), self.problem])
        self.view.layout.display = "none"

    def _box(self, value: str) -> Any:
        import ipywidgets as widgets

        # continuous_update=False: the text travels once, when the box loses focus (on the click).
        # The description labels the box for screen readers too.
        box = widgets.Text(
            value=value, description=self.name, placeholder=self.placeholder, continuous_update=False
        )
        box.layout.width = "60%"
        # Enter sends the button's choice: the frontend sends "submit" first, then the text when
        # it changed (the change event comes after the key), so the choice waits for the text.
        box.on_msg(self._key)
        box.observe(self._typed, "value")
        return box

    def _key(self, box: Any, content: Any, _buffers: Any) -> None:
        if box is self.text and isinstance(content, dict) and content.get("event") == "submit":
            self.entered = True
            self.row.call_soon(self._wait_for_text)

    def _typed(self, change: Any) -> None:
        if self.entered and change["owner"] is self.text:
            self.entered = False
            self.row.call_soon(self.row._choose, self.choice)

    def _wait_for_text(self) -> None:
        import asyncio

        asyncio.get_running_loop().call_later(_ENTER_WAIT, self._entered_unchanged)

    def _entered_unchanged(self) -> None:
        """Enter on text that did not change (no new text follows): choose with the text as it is."""
        if self.entered:
            self.entered = False
            self.row._choose(self.choice)

    def open(self, value: str | None) -> None:
        """Show the box (with ``value``, when given: a rule prefilled from the call)."""
        if value is not None and self.view.layout.display == "none":
            self._fresh(value)
        self.view.layout.display = "flex"

    def sent(self, problem: str | None) -> None:
        """What became of the text sent: refused (``problem``): say why, in a fresh box whose first
        change the frontend sends at once (see the module's docstring)."""
        if problem is None:
            return
        self._fresh(self.text.value)
        self.problem.value = (
            f'<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">'
            f"{visible_html(problem)}\nFix it, then try again.</pre>"
        )

    def _fresh(self, value: str) -> None:
        fresh = self._box(value)
        line = self.view.children[0]
        line.children = (fresh, *line.children[1:])
        self.text.close()
        self.text = fresh

    def widgets(self) -> list[Any]:
        return [self.view, self.view.children[0], self.text, self.problem]
