"""Asking a person to trust a rules file: the **Trust these rules** button (`TrustPanel`), or ``input()``.

A rules file's allow rules decide only once the person trusted its content (`agent.rules.trust`).
`tell_untrusted` says so the first time a cell meets such a file, `tell_ignored` when a call it
would have allowed is asked in a headless run, and `ask_to_trust` is ``%agent trust``. A click
records the trust at once, for the content shown (its sha256), whether or not the cell still runs.
Where the site's policy forbids trusting rules files, no button is offered: a line says the policy forbids it.
"""

from __future__ import annotations

import functools
from typing import Any

from ..._html import MONO, MUTED, escape
from ..._visible import visible, visible_html
from ...agent.rules import TrustedRules, UntrustedRules, trust_forbidden, trust_rules, warn_untrusted
from .._labels import TRUST_RULES
from .policy_approvals import is_headless, shows_widgets
from .widget_approvals import text_panel_type

__all__ = ["TrustPanel", "ask_to_trust", "tell_ignored", "tell_untrusted"]

_TOOLTIP = "Let this file's allow rules decide calls: this content, at this path (an edit asks again)"
# Widget text is laid out for one line (28 px high, not wrapped): a long path wraps here, its lines close.
_TEXT = "line-height: 1.4; white-space: normal; overflow-wrap: anywhere"
_RULES = f"margin: 0.2em 0; line-height: 1.3; white-space: pre-wrap; overflow-wrap: anywhere; {MONO}"
_WAITING = "#9e6c00"
"""The panel's edge and its button: the colour of a card waiting for the person. White text on it reads
at 4.6:1 in every theme (on the theme's warning orange, 3:1 in JupyterLab's light theme)."""
_FORBIDDEN = "#757575"
"""The edge of the line saying the policy forbids trusting: the colour of a denied card."""
_TRUSTED = "#2e7d32"
"""The edge once trusted: the colour of a card whose call is done."""


def tell_untrusted(untrusted: UntrustedRules) -> None:
    """Say that ``untrusted``'s allow rules are ignored: a `TrustPanel`, or a line in a console.

    A headless run says nothing here: it waits for a call the rules would have allowed (`tell_ignored`).
    """
    if is_headless():
        return
    forbidden = trust_forbidden()
    if forbidden is not None:
        ignored = f"The rules file {untrusted.path} has {untrusted.counted}, ignored (its ask and deny rules apply):"
        line = visible(f"{ignored} {forbidden}.")
        if shows_widgets():  # where the panel would be: a line of the panel's look, without its button
            from IPython.display import display

            html = _with_path(visible_html(f"{ignored} {forbidden}."), untrusted)
            style = f"{_TEXT}; border-left: 3px solid {_FORBIDDEN}; padding: 0.2em 0.6em; margin: 0.3em 0"
            html = f'<div class="meowgent-trust-forbidden" style="{style}">{html}</div>'
            display({"text/plain": line, "text/html": html}, raw=True)
        else:
            print(line)
        return
    if shows_widgets():
        TrustPanel(untrusted).show()
    else:
        print(f"{visible(untrusted.line)} To trust it: %agent trust")


def tell_ignored(untrusted: UntrustedRules) -> None:
    """Note that an ignored allow rule of ``untrusted`` would have allowed a call.

    In a headless run: one line on stderr per content, naming the file; elsewhere nothing.
    """
    if is_headless():
        warn_untrusted(untrusted)


def ask_to_trust(untrusted: UntrustedRules) -> TrustedRules | None:
    """Ask a person to trust ``untrusted`` (``%agent trust``): a `TrustPanel`, else ``input()``.

    Returns:
        What was trusted; None when a `TrustPanel` was shown (its click records the trust).

    Raises:
        RuntimeError: A headless run: no one can answer; or the site's policy forbids trusting rules files.
        OSError: The trust store cannot be written.
    """
    forbidden = trust_forbidden()
    if forbidden is not None:
        raise RuntimeError(forbidden)
    if is_headless():
        raise RuntimeError(
            f"no one can click in a headless run; a run that wants the allow rules of {untrusted.path} sets"
            f" MEOWGENT_TRUST_RULES={untrusted.path}"
        )
    if shows_widgets():
        TrustPanel(untrusted).show()
        return None
    print(visible(untrusted.line))
    print(visible(_rules_text(untrusted)))
    answer = input("Trust these rules? Type yes to trust them: ")
    if answer.strip().lower() not in ("y", "yes"):
        print("Not trusted: the file's allow rules stay ignored.")
        return None
    trusted = trust_rules(untrusted.path, untrusted.sha256)
    print(_trusted_text(untrusted))
    return trusted


class TrustPanel:
    """One line naming the file and its allow rules, the rules listed, and **Trust these rules**.

    The button trusts exactly the content listed (its sha256): a file edited since is not trusted.
    Once trusted, the button goes and a line says what was trusted.
    """

    def __init__(self, untrusted: UntrustedRules):
        import ipywidgets as widgets

        self.untrusted = untrusted
        self.trusted: TrustedRules | None = None
        self.button = widgets.Button(description=TRUST_RULES, button_style="warning", tooltip=_TOOLTIP)
        self.button.layout = widgets.Layout(width="auto", align_self="flex-start")  # not the panel's width
        self.button.style.button_color, self.button.style.text_color = _WAITING, "white"
        self.button.on_click(functools.partial(TrustPanel._clicked, self))
        self.label = widgets.HTML("")
        self.label.layout.display = "none"
        line = _with_path(visible_html(untrusted.line), untrusted)
        rules = visible_html(_rules_text(untrusted, content=False))
        content = escape(_content_text(untrusted))
        self.view = text_panel_type()(
            children=[
                widgets.HTML(f'<div class="meowgent-trust-line" style="{_TEXT}">{line}</div>'),
                widgets.HTML(f'<pre class="meowgent-trust-rules" style="{_RULES}">{rules}</pre>'),
                widgets.HTML(f'<div class="meowgent-trust-sha256" style="{_TEXT}; {MUTED}">{content}</div>'),
                self.button,
                self.label,
            ]
        )
        self.view.layout = widgets.Layout(
            border_left=f"3px solid {_WAITING}", padding="0.2em 0.6em", margin="0.3em 0"
        )
        self.view.plain_text = self.text
        self.view.add_class("meowgent-trust-panel")

    def text(self) -> str:
        """The panel as text: the line, the rules, and whether they were trusted."""
        done = f"\n{_trusted_text(self.untrusted)}" if self.trusted is not None else ""
        return f"{visible(self.untrusted.line)}\n{visible(_rules_text(self.untrusted))}{done}"

    def show(self) -> None:
        from IPython.display import display

        display(self.view)

    def _clicked(self, _button: Any) -> None:
        if self.trusted is not None:
            return
        try:
            self.trusted = trust_rules(self.untrusted.path, self.untrusted.sha256)
        except OSError as error:  # the store cannot be written: say so where the person clicked
            self._say("meowgent-trust-problem", f"Not trusted: the trust store cannot be written ({error}).")
            return
        self.button.layout.display = "none"
        self.view.layout.border_left = f"3px solid {_TRUSTED}"
        self._say("meowgent-trust-done", _trusted_text(self.untrusted))

    def _say(self, css_class: str, text: str) -> None:
        shown = _with_path(visible_html(text), self.untrusted)
        self.label.value = f'<div class="{css_class}" style="{_TEXT}">{shown}</div>'
        self.label.layout.display = None


def _with_path(html: str, untrusted: UntrustedRules) -> str:
    """``html`` with the file's path in it shown as code."""
    path = visible_html(str(untrusted.path))
    return html.replace(path, f'<code style="{MONO}">{path}</code>', 1)


def _rules_text(untrusted: UntrustedRules, content: bool = True) -> str:
    lines = [f"{n:>3}. {rule.text}" for n, rule in enumerate(untrusted.rules, 1)]
    return "\n".join([*lines, *([f"     {_content_text(untrusted)}"] if content else [])])


def _content_text(untrusted: UntrustedRules) -> str:
    return (
        f"Trusting applies to this content only (sha256 {untrusted.sha256[:16]}...): an edit to the file"
        " asks again."
    )


def _trusted_text(untrusted: UntrustedRules) -> str:
    return (
        f"Trusted: the allow rules of {untrusted.path} apply from the next call on, until the file changes"
        " (%agent trust --remove to undo)."
    )
