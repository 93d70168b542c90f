"""`Transcript`: one agent run as a person reads it, built from its events, in text and HTML.

It has ``text/html`` for people and a stable ``text/plain`` for nbval: no timings, durations,
ids, token counts or rates go into the text. (nbval compares the HTML too; the measured times
there carry CSS classes that notebooks/nbval_sanitize.cfg replaces.) Showing it in a running cell
is `meowgent_nb.notebook.display`'s part; nothing here imports IPython.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._html import escape, note_html, seconds
from .._visible import visible
from ..agent.events import (
    AgentEvent,
    ApprovalEvent,
    ApprovalRequested,
    FinalAnswer,
    ModelStatus,
    PartialCall,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
)
from ..models.base import Usage
from ..tools.calls import ToolCall
from ._cards import Card, card_html_of, card_lines
from ._html import Bar, markdown_html, thinking_html, timeline_svg
from ._progress import draft_html, draft_line, model_html, thought_html, waiting_html

if TYPE_CHECKING:
    from ..agent.loop import AgentResult

__all__ = ["Transcript"]


@dataclass
class _Block:
    """Consecutive text or thinking deltas of one turn."""

    kind: Literal["text", "thinking"]
    turn: int
    parts: list[str] = field(default_factory=list)
    start: float = 0.0
    """When its first delta arrived (``clock()``)."""
    end: float | None = None
    """When the next other event arrived: the model stopped thinking (or writing this text)."""

    @property
    def text(self) -> str:
        return "".join(self.parts).strip()


@dataclass
class _Note:
    """A line between the parts of a run: a turn that ended at the token limit."""

    text: str


class Transcript:
    """One agent run as it happens: text, thinking, a card per tool call, usage.

    Feed it each event of ``agent.stream(prompt)`` with `handle`; it can be displayed at any
    point. ``text/plain`` reads like::

        [thinking]
        [tool] get_weather(city='Paris') -> done
          Paris: 21 degrees celsius
        It is 21 degrees in Paris.

    A turn that ended at the model's token limit (``TurnEnd.finish_reason == "length"``) adds
    ``[the answer hit the token limit (turn 2)]`` where it ended: its text or call may be cut off.
    While the run goes on, the text ends with ``[waiting for the model...]`` or ``[writing a call
    to get_weather...]``. The HTML also names the model (`RunStart`) and shows the signs of life
    that carry times: the backend's status and a counter while it waits, the call being written,
    how long the model thought (see `meowgent_nb.notebook._progress`).

    Args:
        clock: Seconds from any origin, read when calls and results arrive (for the timeline).
    """

    def __init__(self, *, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self._started = clock()
        self._stopped_at: float | None = None
        self._items: list[_Block | Card | _Note] = []
        self._turn = 1
        self._waiting = True
        self._waiting_since = self._started
        self._status: str | None = None  # what the backend said it is doing, while we wait
        self._draft: PartialCall | None = None  # the call being written, until it is complete
        self.model: str | None = None
        """Which model and backend answer (`RunStart`), shown at the top of the HTML."""
        self.turns = 0
        """Model turns finished so far."""
        self.usage: Usage | None = None
        """Usage summed over the turns that report it."""
        self.result: AgentResult | None = None
        """The run's result, once it has finished."""
        self.error: BaseException | None = None
        """What stopped the run, if it failed or was interrupted (see `fail`)."""

    @classmethod
    def from_events(
        cls, events: Iterable[AgentEvent], *, clock: Callable[[], float] = time.perf_counter
    ) -> Transcript:
        """A transcript of events already collected."""
        transcript = cls(clock=clock)
        for event in events:
            transcript.handle(event)
        return transcript

    @property
    def finished(self) -> bool:
        """Whether the run has ended, with an answer or an error."""
        return self.result is not None or self.error is not None

    def handle(self, event: AgentEvent) -> None:
        """Take in the next event of the run."""
        self._progress(event)
        if isinstance(event, (TextDelta, ThinkingDelta)):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            self._waiting = False
            last = self._items[-1] if self._items else None
            if not (isinstance(last, _Block) and last.kind == kind and last.turn == self._turn):
                last = _Block(kind, self._turn, start=self._clock())
                self._items.append(last)
            last.parts.append(event.text)
        elif isinstance(event, PartialCall):
            self._waiting, self._draft = False, event
        elif isinstance(event, ToolCallEvent):
            self._waiting = False
            self._items.append(Card(event.call, event.turn, self._clock()))
        elif isinstance(event, ApprovalRequested):
            for call in event.calls:
                self._card(call).asked = True
        elif isinstance(event, ApprovalEvent):
            self._card(event.call).decision = event.decision
        elif isinstance(event, ToolResultEvent):
            card = self._card(event.result.call)
            card.result, card.end = event.result, self._clock()
        elif isinstance(event, TurnEnd):
            self.turns, self._turn, self._waiting = event.turn, event.turn + 1, True
            self._waiting_since = self._clock()
            if event.finish_reason == "length":  # its answer, or its last call, may be cut off
                self._items.append(_Note(f"the answer hit the token limit (turn {event.turn})"))
            if event.usage is not None:
                self.usage = event.usage if self.usage is None else self.usage + event.usage
        elif isinstance(event, FinalAnswer):
            self.result, self._stopped_at = event.result, self._clock()
        # Other events (added to the agent later) are ignored: a display must never break a run.

    def fail(self, error: BaseException) -> None:
        """Record that the run stopped with ``error`` (an exception, or an interrupt)."""
        self._progress(None)
        self.error, self._stopped_at = error, self._clock()

    def _progress(self, event: AgentEvent | None) -> None:
        """The signs of life an event ends or starts: a status, a call being written, thinking."""
        if isinstance(event, RunStart):
            self.model = event.model
        elif isinstance(event, ModelStatus):
            self._status = event.text
        elif event is not None:
            self._status = None  # the answer has begun, or the turn is over
        if not isinstance(event, PartialCall):
            self._draft = None  # replaced by its complete card, or it was not a call after all
        last = self._items[-1] if self._items else None
        if isinstance(last, _Block) and last.end is None:
            if not isinstance(event, TextDelta if last.kind == "text" else ThinkingDelta):
                last.end = self._clock()

    @property
    def clock_running(self) -> bool:
        """Whether the HTML shows a live counter (waiting, thinking) that a display should redraw."""
        if self.finished:
            return False
        last = self._items[-1] if self._items else None
        return (self._waiting and self._draft is None) or (
            isinstance(last, _Block) and last.kind == "thinking" and last.end is None
        )

    def _card(self, call: ToolCall) -> Card:
        cards = [item for item in reversed(self._items) if isinstance(item, Card)]
        for card in cards:
            if card.call is call:
                return card
        for card in cards:  # an equal call rebuilt by someone replaying events
            if card.result is None and card.call == call:
                return card
        card = Card(call, self._turn, self._clock())  # a result whose call event was never seen
        self._items.append(card)
        return card

    # --- text/plain ---------------------------------------------------------------------------

    def to_text(self) -> str:
        """The stable ``text/plain`` form: no timings, ids or token counts."""
        lines: list[str] = []
        for item in self._items:
            if isinstance(item, Card):
                lines.extend(card_lines(item, self.error is not None))
            elif isinstance(item, _Note):
                lines.append(f"[{item.text}]")
            elif item.text:
                lines.append("[thinking]" if item.kind == "thinking" else item.text)
        if self.error is not None:
            lines.append(_error_text(self.error))
        elif self.result is None:
            if self._draft is not None:
                lines.append(draft_line(self._draft.name))
            elif self._waiting:
                lines.append("[waiting for the model...]")
        elif self.result.stopped == "max_turns":
            lines.append(f"[{_stopped_note(self.result.turns)}]")
        elif not lines:
            lines.append("[no answer]")
        return "\n".join(lines)

    # --- text/html ----------------------------------------------------------------------------

    def to_html(self) -> str:
        """The ``text/html`` form: Markdown answer, folded thinking, cards, timelines, footer."""
        stopped = self.error is not None
        now = self._stopped_at if self._stopped_at is not None else self._clock()
        last_card = {item.turn: i for i, item in enumerate(self._items) if isinstance(item, Card)}
        parts = [model_html(self.model)] if self.model is not None else []
        for i, item in enumerate(self._items):
            if isinstance(item, Card):
                parts.append(card_html_of(item, stopped))
                if last_card[item.turn] == i:
                    parts.append(self._timeline_html(item.turn, now))
            elif isinstance(item, _Note):
                parts.append(note_html("meowgent-token-limit", item.text, "color: #ef6c00; font-weight: bold; "))
            elif item.text and item.kind == "thinking":
                # Open while the model is still thinking, so a person sees it is at work.
                thinking = item.end is None and not self.finished
                title = thought_html((now if item.end is None else item.end) - item.start, live=thinking)
                parts.append(thinking_html(item.text, expanded=thinking, title=title))
            elif item.text:
                parts.append(f'<div class="meowgent-text">{markdown_html(item.text)}</div>')
        if self.error is not None:
            parts.append(
                f'<pre class="meowgent-error" style="color: #c62828">{escape(_error_text(self.error))}</pre>'
            )
        elif self._draft is not None:
            parts.append(draft_html(self._draft.name, self._draft.text))
        elif self.result is None and self._waiting:
            parts.append(waiting_html(self._status, now - self._waiting_since))
        elif self.result is not None and self.result.stopped == "max_turns":
            parts.append(note_html("meowgent-stopped", _stopped_note(self.result.turns)))
        if self.finished:
            parts.append(self._footer_html())
        return '<div class="meowgent-transcript">' + "".join(parts) + "</div>"

    def _timeline_html(self, turn: int, now: float) -> str:
        cards = [item for item in self._items if isinstance(item, Card) and item.turn == turn]
        origin = min(card.start for card in cards)
        bars = []
        for card in cards:
            end = card.end if card.end is not None else now
            duration = card.result.duration if card.result is not None else None
            # The tool ran for the last ``duration`` seconds before its result arrived.
            run = None if duration is None else min(max(end - duration, card.start), end) - origin
            status = card.status(self.error is not None)
            bars.append(Bar(visible(card.call.name), card.start - origin, end - origin, run, status))
        return f'<div class="meowgent-timeline-box" style="margin: 0.2em 0 0.6em">{timeline_svg(bars)}</div>'

    def _footer_html(self) -> str:
        calls = sum(isinstance(item, Card) for item in self._items)
        facts = [f"{self.turns} turn{'s' * (self.turns != 1)}", f"{calls} tool call{'s' * (calls != 1)}"]
        usage = self.usage
        if usage is not None and usage.prompt_tokens is not None:
            facts.append(f"{usage.prompt_tokens:,} prompt tokens")
        if usage is not None and usage.completion_tokens is not None:
            facts.append(f"{usage.completion_tokens:,} completion tokens")
        if usage is not None and usage.tokens_per_second is not None:
            facts.append(f"{usage.tokens_per_second:.1f} tokens/s")
        if self._stopped_at is not None:
            facts.append(seconds(self._stopped_at - self._started))
        return note_html("meowgent-footer", " \u00b7 ".join(facts), "margin-top: 0.4em; ")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def _stopped_note(turns: int) -> str:
    return f"stopped: the limit of {turns} turn{'s' * (turns != 1)} was reached"


def _error_text(error: BaseException) -> str:
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit)):
        return "[interrupted]"
    message = str(error).strip()
    text = f"[error] {type(error).__name__}" + (f": {message}" if message else "")
    return text.replace("\n", "\n  ")
