"""The widgets for a server's requests in the running cell: `ElicitFormView` (a form) and `ReviewView`.

Both only report a choice; the wait, the time limit and the card's line are `server_asks`'.
Everything a server wrote is shown as text. Each entry is replaced by a fresh one once its change
arrives, because while a cell runs the frontend holds a widget's later changes (as `_approval_row`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..._html import escape
from ..._visible import visible, visible_html
from ...mcp.client.asking import ElicitAnswer, ElicitRequest
from ...mcp.content.elicit import FormField, parse_entry
from .._labels import ACCEPT, CANCEL, DECLINE

__all__ = ["ElicitFormView", "ReviewView", "content_text"]

_PROBLEM = '<span class="meowgent-field-problem" style="color: #c62828">{}</span>'
_HINT = '<span class="meowgent-field-hint" style="opacity: 0.75">{}</span>'


def content_text(content: dict[str, Any]) -> str:
    """An answer in one line, ``name='Ada', age=36``, hidden characters shown."""
    return visible(", ".join(f"{k}={v!r}" for k, v in content.items())) or "nothing"


def _button(description: str, style: str, tooltip: str, on_click: Callable[[Any], None]) -> Any:
    import ipywidgets as widgets

    button = widgets.Button(description=description, button_style=style, tooltip=tooltip)
    button.layout.width = "auto"
    button.on_click(on_click)
    return button


class ElicitFormView:
    """One server's form, waiting for Accept, Decline or Cancel.

    Args:
        request: The server's request and its fields.
        call_soon: Runs a function on the cell's loop (changes and clicks may arrive on another thread).
        on_answer: Told the answer once, on the cell's loop.
    """

    def __init__(
        self,
        request: ElicitRequest,
        call_soon: Callable[..., Any],
        on_answer: Callable[[ElicitAnswer], object],
    ):
        import ipywidgets as widgets

        self.request, self.call_soon, self.on_answer = request, call_soon, on_answer
        self.fields = request.form.fields
        self.decided = False
        header = (
            f'<div class="meowgent-elicit-head"><b>{visible_html(request.server)}</b> asks for input'
            f" (during <code>{visible_html(request.running.call.name)}</code>):</div>"
            f'<pre class="meowgent-elicit-message" style="white-space: pre-wrap; margin: 0.2em 0">'
            f"{visible_html(request.form.shown_message)}</pre>"
        )
        self.entries = [
            self._entry(field, self._start_value(field), index) for index, field in enumerate(self.fields)
        ]
        self.notes = [widgets.HTML(self._hint(field)) for field in self.fields]
        self.lines = []
        for field, entry, note in zip(self.fields, self.entries, self.notes):
            star = " *" if field.required else ""
            label = widgets.HTML(
                f'<span class="meowgent-field-label" title="{escape(visible(field.description))}">'
                f"{visible_html(field.title)}{star}</span>"
            )
            label.layout.min_width = "10em"
            self.lines.append(widgets.HBox([label, entry, note]))
        choices = (
            (ACCEPT, "success", "Send these values to the server", "accept"),
            (DECLINE, "danger", "Tell the server no", "decline"),
            (CANCEL, "", "Dismiss without answering", "cancel"),
        )
        self.buttons = [_button(d, s, t, functools.partial(self._clicked, c)) for d, s, t, c in choices]
        self.status = widgets.HTML("")
        self.view = widgets.VBox(
            [widgets.HTML(header), *self.lines, widgets.HBox([*self.buttons, self.status])]
        )
        self.view.add_class("meowgent-elicit-form")

    @staticmethod
    def _start_value(field: FormField) -> Any:
        if field.kind == "boolean":
            return bool(field.default)
        if field.kind == "choice":
            return field.default
        if field.kind == "choices":
            return tuple(field.default or ())
        return "" if field.default is None else str(field.default)

    @staticmethod
    def _hint(field: FormField) -> str:
        text = " · ".join(part for part in (field.hint, field.description) if part)
        return _HINT.format(visible_html(text)) if text else ""

    def _entry(self, field: FormField, value: Any, index: int) -> Any:
        import ipywidgets as widgets

        css = (f"meowgent-field-{index}",)  # made with it: a test (or a stylesheet) finds the entry at once
        if field.kind == "boolean":
            entry = widgets.Checkbox(value=value, indent=False, _dom_classes=css)
        elif field.kind == "choice":
            # No value yet: the empty choice shows, and says what it is ("(choose one)" where one is needed).
            empty = (
                []
                if field.required and value is not None
                else [("(choose one)" if field.required else "(none)", None)]
            )
            options = empty + [(visible(t), v) for v, t in field.options]
            # ipywidgets reads value=None as "nothing selected" (a blank box), so None is picked by its index.
            chosen = {"index": 0} if value is None else {"value": value}
            entry = widgets.Dropdown(options=options, **chosen, _dom_classes=css)
        elif field.kind == "choices":
            entry = widgets.SelectMultiple(
                options=[(visible(t), v) for v, t in field.options],
                value=value,
                rows=min(6, len(field.options)),
                _dom_classes=css,
            )
        else:
            # continuous_update=False: the text travels once, when the box loses focus or on Enter.
            entry = widgets.Text(
                value=value, placeholder=field.hint, continuous_update=False, _dom_classes=css
            )
        entry.observe(functools.partial(self._changed, index, entry), "value")
        return entry

    def _changed(self, index: int, entry: Any, _change: Any) -> None:
        self.call_soon(self._renew, index, entry)

    def _renew(self, index: int, entry: Any) -> None:
        """A fresh entry with the value that arrived, so the next change is sent too (see above)."""
        if self.decided or self.entries[index] is not entry:
            return
        fresh = self._entry(self.fields[index], entry.value, index)
        self.entries[index] = fresh
        line = self.lines[index]
        line.children = (line.children[0], fresh, line.children[2])
        entry.close()

    def _clicked(self, choice: str, _button: Any) -> None:
        self.call_soon(self._choose, choice)

    def _choose(self, choice: str) -> None:
        if self.decided:
            return  # a second click, or a click after the wait ended
        if choice != "accept":
            self.on_answer(ElicitAnswer(choice, None, "by you"))  # type: ignore[arg-type]
            return
        content, bad = {}, 0
        for field, entry, note in zip(self.fields, self.entries, self.notes):
            try:
                value = parse_entry(field, entry.value)
            except ValueError as problem:
                note.value = _PROBLEM.format(visible_html(str(problem)))
                bad += 1
                continue
            note.value = self._hint(field)
            if value is not None:
                content[field.name] = value
        if bad:
            fields = "1 field" if bad == 1 else f"{bad} fields"
            self.status.value = _PROBLEM.format(
                f"nothing was sent: fix the {fields} marked, then Accept again"
            )
            return
        self.on_answer(ElicitAnswer("accept", content, "by you"))

    def finish(self, outcome: str) -> None:
        """The request is over: show ``outcome`` and take the controls away."""
        self.decided = True
        self.status.value = f'<span class="meowgent-elicit-outcome"><b>{visible_html(outcome)}</b></span>'
        for widget in [*self.buttons, *self.entries]:
            widget.disabled = True


class ReviewView:
    """What a server asks the model, or what the model answered, with an approve and a decline button.

    Args:
        html: What the person reads (already escaped).
        approve: The approve button's label ("Let the model answer", "Send the answer").
        call_soon: Runs a function on the cell's loop.
        on_choice: Told True (approve) or False (decline) once, on the cell's loop.
    """

    def __init__(
        self, html: str, approve: str, call_soon: Callable[..., Any], on_choice: Callable[[bool], object]
    ):
        import ipywidgets as widgets

        self.decided = False
        self.on_choice = on_choice
        self.buttons = [
            _button(approve, "success", approve, lambda _b: call_soon(self._choose, True)),
            _button(
                DECLINE, "danger", "Refuse the server's request", lambda _b: call_soon(self._choose, False)
            ),
        ]
        self.status = widgets.HTML("")
        self.view = widgets.VBox([widgets.HTML(html), widgets.HBox([*self.buttons, self.status])])
        self.view.add_class("meowgent-sampling-review")

    def _choose(self, ok: bool) -> None:
        if not self.decided:
            self.on_choice(ok)

    def finish(self, outcome: str) -> None:
        self.decided = True
        self.status.value = f'<span class="meowgent-elicit-outcome"><b>{visible_html(outcome)}</b></span>'
        for button in self.buttons:
            button.disabled = True
