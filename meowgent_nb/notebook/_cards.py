"""A tool call's card in a transcript: its status, and its text/plain and HTML forms.

`meowgent_nb.notebook.transcript.Transcript` keeps one `Card` per call and renders it with `card_lines`
(text/plain, stable for nbval) and `card_html_of` (HTML). The name, arguments and output come
from the model and the tool, so both forms show their hidden characters (see `_visible`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .._visible import visible
from ..agent.approvals import Approved, Denied
from ..tools.calls import ToolCall, ToolResult
from ._html import card_html

__all__ = ["STATUS_LABELS", "Card", "card_html_of", "card_lines"]

_RESULT_LIMIT = 500
"""Characters of a result shown before the rest is folded away (HTML) or cut (text/plain)."""
_ARGUMENTS_LIMIT = 200
_KIND_STATUS = {
    "ok": "done",
    "error": "error",
    "timeout": "timeout",
    "denied": "denied",
    "unknown_tool": "unknown-tool",
    "invalid_arguments": "invalid-arguments",
    "parse_error": "unreadable",
}
STATUS_LABELS = {
    "waiting": "waiting for approval",
    "running": "running",
    "done": "done",
    "error": "error",
    "timeout": "timed out",
    "denied": "denied",
    "not-run": "not run",
    "unknown-tool": "unknown tool",
    "invalid-arguments": "invalid arguments",
    "unreadable": "unreadable",
    "interrupted": "interrupted",
}


@dataclass
class Card:
    """One tool call and what became of it; times are ``clock()`` readings."""

    call: ToolCall
    turn: int
    start: float
    end: float | None = None
    result: ToolResult | None = None
    decision: Approved | Denied | None = None
    asked: bool = False
    """Whether the call was sent for approval."""

    def status(self, stopped: bool) -> str:
        if self.result is None:
            if stopped:
                return "interrupted"
            return "waiting" if self.asked and self.decision is None else "running"
        if self.result.kind == "denied" and not isinstance(self.decision, Denied):
            return "not-run"  # refused by the turn limit, not by a person
        return _KIND_STATUS.get(self.result.kind, "error")


def _call_text(call: ToolCall) -> str:
    return visible(f"{call.name}({_arguments_text(call.arguments)})")


def _arguments_text(arguments: object) -> str:
    if isinstance(arguments, dict):
        text = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
    else:  # pragma: no cover - a backend that breaks the ToolCall contract
        text = repr(arguments)
    if len(text) > _ARGUMENTS_LIMIT:
        text = text[: _ARGUMENTS_LIMIT - 3] + "..."
    return text


def card_lines(card: Card, stopped: bool) -> list[str]:
    status = card.status(stopped)
    call = visible(card.call.name) if status == "unreadable" else _call_text(card.call)
    head = f"[tool] {call} -> {STATUS_LABELS[status]}"
    if isinstance(card.decision, Denied) and card.decision.reason:
        head += f" ({visible(card.decision.reason)})"
    if isinstance(card.decision, Approved):
        head += f" ({_approval_note(card.decision)})"
        if card.decision.arguments is not None:  # the model's call above, what ran here
            head += f"\n  run with: {visible(_arguments_text(dict(card.decision.arguments)))}"
    if card.result is None:
        return [head]
    output = card.result.output.rstrip()
    lines = [head, *(("  " + line).rstrip() for line in visible(output[:_RESULT_LIMIT]).split("\n"))]
    if not output:
        lines[1] = "  (no output)"
    if len(output) > _RESULT_LIMIT:
        lines.append(f"  [... {len(output) - _RESULT_LIMIT:,} more characters]")
    return lines


def _approval_note(decision: Approved) -> str:
    reason = visible(decision.reason.strip())  # an approver's reason may quote the arguments
    # Policies word their reasons "approved automatically", "approved by policy: ..."; don't say it twice.
    return (
        reason if reason.lower().startswith("approved") else f"approved: {reason}" if reason else "approved"
    )


def card_html_of(card: Card, stopped: bool) -> str:
    status = card.status(stopped)
    # A denial's note says who decided; the output the model reads says "Denied: <message>".
    approval = _approval_note(card.decision) if isinstance(card.decision, Approved) else None
    if isinstance(card.decision, Denied) and card.decision.reason:
        approval = f"denied {card.decision.reason}" if card.decision.reason.startswith("by ") else (
            f"denied: {visible(card.decision.reason)}"
        )
    arguments = None
    if status != "unreadable":  # an unreadable call has no arguments; its output quotes the text
        arguments = json.dumps(card.call.arguments, indent=2, ensure_ascii=False, default=repr)
    if isinstance(card.decision, Approved) and card.decision.arguments is not None and arguments is not None:
        edited = json.dumps(dict(card.decision.arguments), indent=2, ensure_ascii=False, default=repr)
        arguments = f"the model's arguments:\n{arguments}\nchanged by you to:\n{edited}"
    return card_html(
        status,
        STATUS_LABELS[status],
        card.call.name,
        duration=card.result.duration if card.result is not None else None,
        approval=approval,
        arguments=arguments,
        output=card.result.output if card.result is not None else None,
        limit=_RESULT_LIMIT,
    )
