"""A tool call's card in a transcript: its status, and its text/plain and HTML forms.

`meowgent_nb.notebook.transcript.Transcript` keeps one `Card` per call and renders it with `card_lines`
(text/plain, stable for nbval) and `card_html_of` (HTML). The name, arguments and output come
from the model and the tool, so both forms show their hidden characters (see `_visible`).

Identical calls in a row (`same_card`) are shown as one card marked "x3"; a notice the agent
added to a result (`agent.calls.repeat_notice`) is shown as a note, not as part of the output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._visible import visible
from ..agent.approvals import Approved, Denied
from ..agent.calls import split_repeat_notice
from ..tools.calls import ToolCall, ToolResult
from ._html import card_html, progress_html
from ._media_html import media_html

if TYPE_CHECKING:
    from ..mcp._progress import Progress

__all__ = ["STATUS_LABELS", "Card", "call_text", "card_summary", "card_html_of", "card_lines", "same_card", "was_told"]

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
    "answering": "waiting for you",
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
    asked_at: float | None = None
    """When it was sent for approval."""
    decided_at: float | None = None
    """When the decision arrived."""
    notes: list[str] = field(default_factory=list)
    """What happened while it ran that a person should read: what its server asked, and what
    became of it (a form answered, a request to use the model refused), what it logged."""
    answering: int = 0
    """How many of its server's questions (a form, a request to use the model) are open in the cell now."""
    progress: Progress | None = None
    """The newest progress its MCP server reported. Shown only while the call runs: a finished
    card says nothing of it, so its text is the same however many notifications arrived."""

    def status(self, stopped: bool) -> str:
        if self.result is None:
            if stopped:
                return "interrupted"
            if self.asked and self.decision is None:
                return "waiting"
            return "answering" if self.answering else "running"
        if self.result.kind == "denied" and not isinstance(self.decision, Denied):
            return "not-run"  # refused by the turn limit, not by a person
        return _KIND_STATUS.get(self.result.kind, "error")


def call_text(call: ToolCall, limit: int = _ARGUMENTS_LIMIT) -> str:
    """``name(a=1, b='x')``, its arguments cut after ``limit`` characters, hidden characters shown."""
    return visible(f"{call.name}({_arguments_text(call.arguments, limit)})")


def _arguments_text(arguments: object, limit: int = _ARGUMENTS_LIMIT) -> str:
    if isinstance(arguments, dict):
        text = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
    else:  # pragma: no cover - a backend that breaks the ToolCall contract
        text = repr(arguments)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _title(card: Card, status: str, limit: int = _ARGUMENTS_LIMIT) -> str:
    # An unreadable call has no arguments to show; its output quotes what the model wrote.
    return visible(card.call.name) if status == "unreadable" else call_text(card.call, limit)


def card_summary(card: Card, stopped: bool, times: int = 1) -> str:
    """The card in a few words, for a folded turn: ``get_weather(city='Paris') done``, ``... error x3``."""
    status = card.status(stopped)
    return f"{_title(card, status, 60)} {STATUS_LABELS[status]}" + (f" \u00d7{times}" if times > 1 else "")


def _output(card: Card) -> tuple[str, bool]:
    """The card's output without the agent's notice not to repeat the call, and whether it had one."""
    output, notice = split_repeat_notice(card.result.output if card.result is not None else "")
    return output, notice is not None and "do not repeat" in notice  # not the note that the run stopped


def was_told(card: Card) -> bool:
    """Whether the model was told, with this card's result, not to repeat the call."""
    return _output(card)[1]


def same_card(a: Card, b: Card, stopped: bool) -> bool:
    """Whether ``b`` repeats ``a`` exactly: the same call and arguments, status, approval and output."""
    if a.result is None or b.result is None or a.call.name != b.call.name:
        return False
    return (
        json.dumps(a.call.arguments, sort_keys=True, default=repr) == json.dumps(b.call.arguments, sort_keys=True, default=repr)
        and a.status(stopped) == b.status(stopped)
        and _approval(a) == _approval(b)
        and a.notes == b.notes
        and _output(a)[0] == _output(b)[0]
    )


def _approval(card: Card, short: bool = False) -> str | None:
    """Who decided the call and how, for its card; ``short`` for text/plain after "-> denied"."""
    decision = card.decision
    if isinstance(decision, Approved):
        return _approval_note(decision)
    if isinstance(decision, Denied) and decision.reason:  # the output says what the model was told
        reason = visible(decision.reason)
        return reason if short else f"denied {reason}" if reason.startswith("by ") else f"denied: {reason}"
    return None


def _edited(card: Card) -> dict[str, Any] | None:
    """The arguments a person gave instead of the model's, if they did."""
    decision = card.decision
    return dict(decision.arguments) if isinstance(decision, Approved) and decision.arguments is not None else None


def card_lines(card: Card, stopped: bool, times: int = 1, told: bool | None = None) -> list[str]:
    """The card in text/plain; ``times`` > 1: it stands for that many identical calls in a row.

    ``told``: whether the model was told not to repeat the call (by default: whether this card's
    result says so).
    """
    status = card.status(stopped)
    head = f"[tool] {_title(card, status)} -> {STATUS_LABELS[status]}"
    approval = _approval(card, short=True)
    if approval is not None:
        head += f" ({approval})"
    edited = _edited(card)
    if edited is not None:  # the model's call is in the head; this is what ran
        head += f"\n  run with: {visible(_arguments_text(edited))}"
    if times > 1:
        head += f" (x{times})"
    head += "".join(f"\n  [{visible(note)}]" for note in card.notes)
    if card.result is None:
        if card.progress is not None:
            head += f"\n  [progress: {visible(card.progress.text())}]"
        return [head]
    output, notice = _output(card)
    output = output.rstrip()
    lines = [head, *(("  " + line).rstrip() for line in visible(output[:_RESULT_LIMIT]).split("\n"))]
    if not output:
        lines[1] = "  (no output)"
    if len(output) > _RESULT_LIMIT:
        lines.append(f"  [... {len(output) - _RESULT_LIMIT:,} more characters]")
    if notice if told is None else told:
        lines.append("  [the model was told not to repeat this call]")
    return lines


def _approval_note(decision: Approved) -> str:
    reason = visible(decision.reason.strip())  # an approver's reason may quote the arguments
    # Policies word their reasons "approved automatically", "approved by policy: ..."; don't say it twice.
    return (
        reason if reason.lower().startswith("approved") else f"approved: {reason}" if reason else "approved"
    )


def card_html_of(card: Card, stopped: bool, times: int = 1, told: bool | None = None) -> str:
    """The card in HTML; ``times`` and ``told`` as for `card_lines`."""
    status = card.status(stopped)
    arguments = None
    if status != "unreadable":  # an unreadable call has no arguments; its output quotes the text
        arguments = json.dumps(card.call.arguments, indent=2, ensure_ascii=False, default=repr)
    edited = _edited(card)
    if edited is not None and arguments is not None:
        changed = json.dumps(edited, indent=2, ensure_ascii=False, default=repr)
        arguments = f"the model's arguments:\n{arguments}\nchanged by you to:\n{changed}"
    output, notice = _output(card)
    return card_html(
        status,
        STATUS_LABELS[status],
        card.call.name,
        duration=card.result.duration if card.result is not None else None,
        approval=_approval(card),
        arguments=arguments,
        output=output if card.result is not None else None,
        limit=_RESULT_LIMIT,
        times=times,
        told=notice if told is None else told,
        notes=card.notes,
        media=media_html(card.result.value) if card.result is not None else "",
        progress=progress_html(card.progress) if card.result is None and card.progress is not None else "",
    )
