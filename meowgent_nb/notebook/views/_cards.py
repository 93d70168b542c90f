"""A tool call's card in a transcript (`Card`): its status, and its text/plain and HTML forms.

`Transcript` keeps one `Card` per call; `card_lines` renders it as text/plain (stable for nbval)
and `card_html_of` as HTML. What the model and the tool wrote is shown with its hidden characters
visible; identical calls in a row share one card (`same_card`); an edited call shows the
arguments it ran with (`shown_arguments`). A call of a tool with a ``code_argument`` shows that
code as code (`_code_html`): highlighted in HTML, with its risk label and "ran as edited".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from ..._html import highlight
from ..._visible import visible
from ...agent.approvals import Approved, Denied
from ...agent.approvals.decisions import decision_words
from ...agent.call_runner import edited_note
from ...agent.repeated import split_repeat_notice
from ...tools.calls import ToolCall, ToolResult
from ...tools.media import MediaBudget
from ...tools.proposed import ProposedCell
from ._code_html import code_html, code_lines, code_of, risk_html
from ._media_html import media_html
from ._raised import raised_lines
from ._transcript_html import card_html, progress_html

if TYPE_CHECKING:
    from ...mcp.client.progress import Progress

__all__ = [
    "STATUS_LABELS",
    "STOPPED_UNRUN",
    "Card",
    "call_text",
    "card_html_of",
    "card_lines",
    "card_summary",
    "card_title",
    "decision_brief",
    "failed",
    "running_text",
    "same_card",
    "shown_arguments",
    "shown_code",
    "was_told",
]

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
    "interrupted": "interrupted while running",
    "stopped-waiting": "not run (stopped before approval)",
    "stopped-queued": "not run (stopped before it ran)",
}
STOPPED_UNRUN = frozenset({"stopped-waiting", "stopped-queued"})
"""The statuses of a call the run was stopped before: it never ran (the footer does not count it)."""


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
    running_at: float | None = None
    """When it started to run (`ToolRunning`): its live counter counts from here."""
    limit: float | None = None
    """Its time limit in seconds, once it runs (None: none)."""
    ran: dict[str, Any] | None = None
    """The validated arguments it ran with (`ToolRunning`), as JSON values."""
    code_argument: str | None = None
    """Its tool's parameter that holds code (`ToolRunning`): the card shows that argument as code."""
    facts: dict[str, Any] = field(default_factory=dict)
    """Its tool's facts about the arguments it ran with (`ToolRunning`): ``risk`` is shown by the code."""

    def runs(
        self,
        at: float,
        limit: float | None,
        arguments: dict[str, Any],
        code_argument: str | None = None,
        facts: dict[str, Any] | None = None,
    ) -> None:
        """It started to run at ``at`` within ``limit`` seconds, with ``arguments`` (validated);
        ``code_argument`` and ``facts`` as `ToolRunning` gives them."""
        self.running_at, self.limit, self.ran = at, limit, to_jsonable_python(arguments, fallback=repr)
        self.code_argument = code_argument
        self.facts = to_jsonable_python(facts or {}, fallback=repr)

    @property
    def counting(self) -> bool:
        """Whether it runs now: its live counter goes on."""
        return self.running_at is not None and self.result is None

    def status(self, stopped: bool) -> str:
        if self.result is None:
            if stopped and self.running_at is not None:
                return "interrupted"
            if stopped:
                return "stopped-waiting" if self.asked and self.decision is None else "stopped-queued"
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


def shown_arguments(card: Card) -> tuple[Any, bool]:
    """The arguments that ran (or were to run), and whether they are not the model's: a person
    changed them at approval. Where an edit was refused (invalid), the person's are shown."""
    decision = card.decision
    if not isinstance(decision, Approved) or decision.arguments is None:
        return card.call.arguments, False
    if _canonical(decision.arguments) == _canonical(card.call.arguments):  # "changed" to what the model asked
        return card.call.arguments, False
    return (card.ran if card.ran is not None else decision.arguments), True


def _canonical(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, default=repr)


def shown_code(card: Card) -> tuple[str, str | None] | None:
    """The code the call ran (its tool's ``code_argument``) and, where a person changed it, the
    model's; None for a call that carries no code or has not run."""
    if card.ran is None:
        return None
    arguments, edited = shown_arguments(card)
    code = code_of(arguments, card.code_argument)
    if code is None:
        return None
    model = code_of(card.call.arguments, card.code_argument) if edited else None
    return code, (model if model != code else None)


def _without_code(card: Card, arguments: Any) -> Any:
    """``arguments`` but the code (shown on its own) when the card shows code."""
    if shown_code(card) is None or not isinstance(arguments, dict):
        return arguments
    return {name: value for name, value in arguments.items() if name != card.code_argument}


def card_title(card: Card, status: str, limit: int = _ARGUMENTS_LIMIT) -> str:
    """``name(arguments that ran)``, marked ``(edited)`` where a person changed them; a call
    carrying code leaves the code out (shown below) and is marked ``(ran as edited)``."""
    if status == "unreadable":  # no arguments to show; its output quotes what the model wrote
        return visible(card.call.name)
    arguments, edited = shown_arguments(card)
    if shown_code(card) is not None:
        rest = _without_code(card, arguments)
        text = visible(card.call.name + (f"({_arguments_text(rest, limit)})" if rest else ""))
        return text + " (ran as edited)" * edited
    return visible(f"{card.call.name}({_arguments_text(arguments, limit)})") + " (edited)" * edited


def card_summary(card: Card, stopped: bool, times: int = 1) -> str:
    """The card in a few words, for a folded turn: ``get_weather(city='Paris') done``, ``... error x3``;
    a decided call says who decided: ``delete_file(path='a.txt') approved by you, done``,
    ``delete_file(path='b.txt') denied by rule 2``."""
    status = card.status(stopped)
    label = STATUS_LABELS[status]
    decided = decision_brief(card.decision)
    if decided is not None:
        label = decided if status == "denied" and decided.startswith("denied") else f"{decided}, {label}"
    return f"{card_title(card, status, 60)} {label}" + (f" \u00d7{times}" if times > 1 else "")


_BRIEF_END = re.compile(r" \(|, |: ")
"""Where a decision's words (`decision_words`) go on past who decided: a rule's condition, a
person's reason, "when the cassette was recorded", a policy's setting."""


def decision_brief(decision: Approved | Denied | None) -> str | None:
    """Who decided, in a few words, for a folded turn's line: ``approved by you``, ``allowed by
    rule 1``, ``denied by policy``, ``allowed for this session``; None where nothing says who (no
    decision, or one that names no decider)."""
    if decision is None:
        return None
    if decision.by is not None and decision.by.kind == "session":
        return "allowed for this session"
    words = decision_words(decision)
    if words is None:
        return None
    brief = _BRIEF_END.split(words, maxsplit=1)[0]
    return brief if " " in brief else None


def failed(card: Card, stopped: bool) -> bool:
    """Whether the call did not end well (an error, a time-out, a denial, anything but done)."""
    return card.status(stopped) != "done"


def _output(card: Card) -> tuple[str, bool]:
    """The card's output without the agent's notice not to repeat the call, and whether it had one;
    for edited code, without the note giving the model the code that ran (the card shows it), and
    under a tool's error, where its code raised (the model reads only the error)."""
    output, notice = split_repeat_notice(card.result.output if card.result is not None else "")
    arguments, edited = shown_arguments(card)
    if edited and shown_code(card) is not None and isinstance(arguments, dict):
        output = output.removeprefix(edited_note(arguments))
    where = raised_lines(card.result) if card.result is not None else []
    if where:
        output = "\n".join([output.rstrip(), *where])
    return output, notice is not None and "do not repeat" in notice  # not the note that the run stopped


def was_told(card: Card) -> bool:
    """Whether the model was told, with this card's result, not to repeat the call."""
    return _output(card)[1]


def same_card(a: Card, b: Card, stopped: bool) -> bool:
    """Whether ``b`` repeats ``a`` exactly: the same call and arguments, status, approval and output."""
    if a.result is None or b.result is None or a.call.name != b.call.name:
        return False
    return (
        _canonical(shown_arguments(a)) == _canonical(shown_arguments(b))
        and _canonical(a.call.arguments) == _canonical(b.call.arguments)
        and a.status(stopped) == b.status(stopped)
        and _approval(a) == _approval(b)
        and a.notes == b.notes
        and _output(a)[0] == _output(b)[0]
    )


def _approval(card: Card, short: bool = False) -> str | None:
    """Who decided the call and how, for its card (`decision_words`); ``short`` for text/plain
    after "-> denied", without the word "denied"."""
    decision = card.decision
    words = None if decision is None else decision_words(decision)
    if words is None or not short or not isinstance(decision, Denied):
        return words
    return words.removeprefix("denied").removeprefix(":").strip()


def card_lines(card: Card, stopped: bool, times: int = 1, told: bool | None = None) -> list[str]:
    """The card in text/plain.

    Args:
        card: The call's card.
        stopped: Whether the run was stopped.
        times: How many identical calls in a row the card stands for.
        told: Whether the model was told not to repeat the call (None: as the result says).
    """
    status = card.status(stopped)
    head = f"[tool] {card_title(card, status)} -> {STATUS_LABELS[status]}"
    approval = _approval(card, short=True)
    if approval is not None:
        head += f" ({approval})"
    code = shown_code(card)
    if code is not None:
        risk = card.facts.get("risk")
        head += "\n  code" + (f" (risk: {visible(str(risk))})" if risk else "") + ":"
        head += "".join("\n" + line for line in code_lines(code[0]))
        if code[1] is not None:
            head += "\n  the model's code:" + "".join("\n" + line for line in code_lines(code[1]))
    elif shown_arguments(card)[1]:  # the head shows what ran; this is what the model asked for
        head += f"\n  the model asked for: {visible(_arguments_text(card.call.arguments))}"
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
    return lines + _proposed_lines(card.result.value)


_PROPOSED_LINES = 40  # of a proposed cell's code in a card's text


def _proposed_lines(value: Any) -> list[str]:
    """A proposed cell's code under its card (``propose_cell``), as the cell would hold it."""
    if not isinstance(value, ProposedCell):
        return []
    code = visible(value.code).rstrip().split("\n")
    more = [f"    [... {len(code) - _PROPOSED_LINES} more lines]"] * (len(code) > _PROPOSED_LINES)
    return ["  proposed cell:", *(f"    {line}".rstrip() for line in code[:_PROPOSED_LINES]), *more]


def _proposed_html(value: Any) -> str:
    """A proposed cell's code, highlighted, in its card (``propose_cell``)."""
    if not isinstance(value, ProposedCell):
        return ""
    return f'<div class="meowgent-proposed-cell">proposed cell:{highlight(value.code, "python")}</div>'


def running_text(card: Card, now: float) -> str | None:
    """How long a running call has run, and of what limit: "12 s of 30 s" (None before it runs)."""
    if card.running_at is None:
        return None
    text = f"{int(max(now - card.running_at, 0.0))} s"
    return text + (f" of {card.limit:g} s" if card.limit is not None else "")


def card_html_of(
    card: Card,
    stopped: bool,
    times: int = 1,
    told: bool | None = None,
    now: float | None = None,
    budget: MediaBudget | None = None,
) -> str:
    """The card in HTML; ``times`` and ``told`` as for `card_lines`.

    Args:
        now: A ``clock()`` reading, to draw a running call's counter.
        budget: What the output may still show of images and audio (None: the card's own).
    """
    status = card.status(stopped)
    arguments = None
    shown, edited = shown_arguments(card)
    if status != "unreadable":  # an unreadable call has no arguments; its output quotes the text
        arguments = json.dumps(shown, indent=2, ensure_ascii=False, default=repr)
    if edited and arguments is not None:
        model = json.dumps(card.call.arguments, indent=2, ensure_ascii=False, default=repr)
        given = "ran with, changed by you" if card.ran is not None else "changed by you to"
        arguments = f"{given}:\n{arguments}\nthe model asked for:\n{model}"
    code = shown_code(card)
    code_part = ""
    if code is not None:
        rest = _without_code(card, shown)
        arguments = json.dumps(rest, indent=2, ensure_ascii=False, default=repr) if rest else None
        risk = card.facts.get("risk")
        code_part = risk_html(str(risk) if risk else None) + code_html(code[0])
        if code[1] is not None:
            code_part += (
                '<details class="meowgent-model-code"><summary style="cursor: pointer; opacity: 0.75">'
                "the model's code</summary>"
                + code_html(code[1], css_class="meowgent-code-model")
                + "</details>"
            )
    output, notice = _output(card)
    return card_html(
        status,
        STATUS_LABELS[status],
        card.call.name,
        edited=edited,
        running=running_text(card, now) if status == "running" and now is not None else None,
        duration=card.result.duration if card.result is not None else None,
        approval=_approval(card),
        arguments=arguments,
        output=output if card.result is not None else None,
        limit=_RESULT_LIMIT,
        times=times,
        told=notice if told is None else told,
        notes=card.notes,
        media=_proposed_html(card.result.value) + media_html(card.result.value, budget)
        if card.result is not None
        else "",
        progress=progress_html(card.progress) if card.result is None and card.progress is not None else "",
        code=code_part,
    )
