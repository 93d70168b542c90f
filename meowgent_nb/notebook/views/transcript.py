"""`Transcript`: one agent run as a person reads it, built from its events, in text and HTML.

Its ``text/plain`` is stable for nbval (no timings, ids, token counts or rates); times in the HTML
carry classes nbval_sanitize.cfg replaces. Nothing here imports IPython: `display` shows it.
`stopped_note` and `error_text` say why a run ended without an answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..._html import escape, note_html, seconds
from ...agent.events import (
    AgentEvent,
    ApprovalEvent,
    ApprovalRequested,
    ContextCompacted,
    FinalAnswer,
    ModelRetry,
    ModelStatus,
    PartialCall,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)
from ...models.base import WAIT_NOTICE, WAITING, Usage
from ...tools.calls import ToolCall
from ...tools.media import MediaBudget
from ._cards import STOPPED_UNRUN, Card, call_text, card_html_of, card_lines
from ._progress import draft_html, draft_line, model_html, thought_html, waiting_html
from ._rows import Block, Note, Repeats, Row, failing, last_turn, rows, segments, summary, turns_of
from ._timeline import turn_timeline_html
from ._transcript_html import markdown_html, thinking_html, turn_html

if TYPE_CHECKING:
    from ...agent.loop import AgentResult

__all__ = ["NO_TOOL_CALLED", "Transcript", "variables_line"]

NO_TOOL_CALLED = "answered without calling a tool"
"""What a transcript says beside an answer given without a call, in a run that offered tools."""


class Transcript:
    """One agent run as it happens: text, thinking, a card per tool call, usage.

    Feed it each event of ``agent.stream(prompt)`` with `handle`; it can be displayed at any
    point. ``text/plain`` reads like::

        [thinking]
        [tool] get_weather(city='Paris') -> done
          Paris: 21 degrees celsius
        It is 21 degrees in Paris.

    In HTML, finished turns fold to one line each (`_rows`), several calls in a turn get a
    timeline (`_timeline`), and a running run shows its signs of life (`_progress`).

    Args:
        clock: Seconds from any origin, read when calls and results arrive (for the timeline).
    """

    def __init__(self, *, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self._started = clock()
        self._stopped_at: float | None = None
        self._items: list[Block | Card | Note] = []
        self._turn = 1
        self._turn_ends: dict[int, float] = {}
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
        self._error_below = False
        self.stopped_by: str | None = None
        """Who stopped the run before its end ("you": the Stop button), see `stop`."""
        self.offered = 0
        """How many tools the model was offered (`RunStart.tools`)."""
        self.model_note: str | None = None
        """A few words the model line adds after the model ("Ollama not running"), or None."""
        self.variables: str | None = None
        """Which variables the model was shown and what each cost (`variables_line`), shown first."""
        self.context: str | None = None
        """How full the model's context window is after the run ("context 61 % of 16,384"), for the footer."""

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
        return self.result is not None or self.error is not None or self.stopped_by is not None

    def handle(self, event: AgentEvent) -> None:
        """Take in the next event of the run."""
        self._progress(event)
        if isinstance(event, (TextDelta, ThinkingDelta)):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            self._waiting = False
            last = self._items[-1] if self._items else None
            if not (isinstance(last, Block) and last.kind == kind and last.turn == self._turn):
                last = Block(kind, self._turn, start=self._clock())
                self._items.append(last)
            last.parts.append(event.text)
        elif isinstance(event, PartialCall):
            self._waiting, self._draft = False, event
        elif isinstance(event, ToolCallEvent):
            self._waiting = False
            self._items.append(Card(event.call, event.turn, self._clock()))
        elif isinstance(event, ApprovalRequested):
            now = self._clock()
            for index, call in enumerate(event.calls):
                card = self._card(call)
                card.asked, card.asked_at = True, now
                note = event.notes[index] if index < len(event.notes) else None
                if note:
                    card.notes.append(note)
        elif isinstance(event, ApprovalEvent):
            card = self._card(event.call)
            card.decision, card.decided_at = event.decision, self._clock()
        elif isinstance(event, ToolRunning):
            self._card(event.call).runs(
                self._clock(), event.limit, event.arguments, event.code_argument, event.facts
            )
        elif isinstance(event, ToolResultEvent):
            card = self._card(event.result.call)
            card.result, card.end = event.result, self._clock()
        elif isinstance(event, TurnEnd):
            self.turns, self._turn, self._waiting = event.turn, event.turn + 1, True
            self._turn_ends[event.turn] = self._waiting_since = self._clock()
            if event.finish_reason == "length":  # its answer, or its last call, may be cut off
                self._items.append(Note(f"the answer hit the token limit (turn {event.turn})", event.turn))
            if event.usage is not None:
                self.usage = event.usage if self.usage is None else self.usage + event.usage
        elif isinstance(event, ContextCompacted):
            self._items.append(Note(event.compacted.text(), event.turn))
        elif isinstance(event, ModelRetry):  # the failed attempt's text is dropped, as by the agent
            kept = [item for item in self._items if not (isinstance(item, Block) and item.turn == event.turn)]
            self._items = [*kept, Note(event.text, event.turn, "retry")]
            self._waiting, self._waiting_since = True, self._clock()
        elif isinstance(event, ModelStatus) and event.text == WAITING and self._waiting:
            # Said once the request has waited WAIT_NOTICE s: the counter counts the server's wait,
            # as the footer reports it, not also the pause before a request asked again.
            self._waiting_since = max(self._waiting_since, self._clock() - WAIT_NOTICE)
        elif isinstance(event, FinalAnswer):
            self.result, self._stopped_at = event.result, self._clock()
        # Other events (added to the agent later) are ignored: a display must never break a run.

    def note_call(self, call: ToolCall, text: str) -> None:
        """Add a line to ``call``'s card: something that happened while it ran (its server asked)."""
        self._card(call).notes.append(text)

    def answering_call(self, call: ToolCall, open_: bool) -> None:
        """A question of ``call``'s server opened (True) or closed in the cell: its card says "waiting for you"."""
        card = self._card(call)
        card.answering = max(card.answering + (1 if open_ else -1), 0)

    def progress_call(self, call: ToolCall, progress: Any) -> None:
        """Show ``progress`` (an MCP ``Progress``) in ``call``'s card until its result arrives."""
        self._card(call).progress = progress

    def fail(self, error: BaseException, *, shown_below: bool = False) -> None:
        """Record that the run stopped with ``error`` (an exception, or an interrupt).

        ``shown_below``: the cell shows the error's message below, so the transcript names only
        its type.
        """
        self._progress(None)
        self.error, self._stopped_at = error, self._clock()
        self._error_below = shown_below

    def stop(self, by: str = "you") -> None:
        """Record that ``by`` stopped the run on purpose (the Stop button): not an error."""
        self._progress(None)
        self.stopped_by, self._stopped_at = by, self._clock()

    def progress(self) -> str:
        """What the run did so far: "1 turn, 2 tool calls" (a turn cut short counts); calls the run
        was stopped before are not counted but named: "1 turn, 0 tool calls (1 not run)"."""
        turns = self.turns if self.result is not None else self.turns + (not self._waiting)
        cards = [item for item in self._items if isinstance(item, Card)]
        unrun = sum(card.status(self._cut_short) in STOPPED_UNRUN for card in cards)
        calls = len(cards) - unrun
        return f"{turns} turn{'s' * (turns != 1)}, {calls} tool call{'s' * (calls != 1)}" + (
            f" ({unrun} not run)" if unrun else ""
        )

    @property
    def _answered_without_tools(self) -> bool:
        """Whether the model answered a run that offered tools without calling any: a small
        model's guess then reads like a result, so the transcript says so beside the answer."""
        result = self.result
        return (
            result is not None
            and result.stopped == "answer"
            and self.offered > 0
            and bool(result.text.strip())
            and not any(isinstance(item, Card) for item in self._items)
        )

    @property
    def _cut_short(self) -> bool:
        """Whether the run ended before its answer (an error, an interrupt, the Stop button)."""
        return self.error is not None or self.stopped_by is not None

    def _progress(self, event: AgentEvent | None) -> None:
        """The signs of life an event ends or starts: a status, a call being written, thinking."""
        if isinstance(event, RunStart):
            self.model, self.offered = event.model, event.tools
        elif isinstance(event, ModelStatus):
            self._status = event.text
        elif event is not None:
            self._status = None  # the answer has begun, or the turn is over
        if not isinstance(event, PartialCall):
            self._draft = None  # replaced by its complete card, or it was not a call after all
        last = self._items[-1] if self._items else None
        if isinstance(last, Block) and last.end is None:
            if not isinstance(event, TextDelta if last.kind == "text" else ThinkingDelta):
                last.end = self._clock()

    @property
    def clock_running(self) -> bool:
        """Whether the HTML shows a live counter (waiting, thinking) that a display should redraw."""
        if self.finished:
            return False
        last = self._items[-1] if self._items else None
        running = any(isinstance(item, Card) and item.counting for item in self._items)
        return (
            running
            or (self._waiting and self._draft is None)
            or (isinstance(last, Block) and last.kind == "thinking" and last.end is None)
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
        stopped = self._cut_short
        lines: list[str] = [] if self.variables is None else [f"[{self.variables}]"]
        for row in rows(self._items, stopped):
            if isinstance(row, Repeats):
                lines.extend(card_lines(row.card, stopped, row.times, row.told))
            elif isinstance(row, Note):
                lines.append(f"[{row.text}]")
            else:
                lines.append("[thinking]" if row.kind == "thinking" else row.text)
        if self.stopped_by is not None:
            lines.append(f"[stopped by {self.stopped_by} after {self.progress()}]")
        elif self.error is not None and error_text(self.error, self.progress(), self._error_below):
            lines.append(error_text(self.error, self.progress(), self._error_below))
        elif self.result is None:
            if self._draft is not None:
                lines.append(draft_line(self._draft.name))
            elif self._waiting:
                lines.append("[waiting for the model...]")
        elif stopped_note(self.result) is not None:
            lines.append(f"[{stopped_note(self.result)}]")
        elif len(lines) == (self.variables is not None):
            lines.append("[no answer]")
        elif self._answered_without_tools:
            lines.append(f"[{NO_TOOL_CALLED}]")
        return "\n".join(lines)

    # --- text/html ----------------------------------------------------------------------------

    def to_html(self) -> str:
        """The ``text/html`` form: Markdown answer, folded thinking and turns, cards, timelines, footer."""
        return '<div class="meowgent-transcript">' + "".join(self._html_parts()[0]) + "</div>"

    def html_sections(self) -> list[tuple[str, ToolCall | None]]:
        """`to_html` cut after each card waiting for approval and after each folded turn.

        Returns:
            ``(html, call)`` pairs, ``call`` being the waiting card's, else None.
        """
        parts, waiting = self._html_parts()
        cuts = [0, *(end for end, _ in waiting), len(parts)]
        calls = [call for _, call in waiting] + [None]
        return [
            ('<div class="meowgent-transcript">' + "".join(parts[a:b]) + "</div>", call)
            for a, b, call in zip(cuts, cuts[1:], calls)
        ]

    def _html_parts(self) -> tuple[list[str], list[tuple[int, ToolCall | None]]]:
        """The HTML pieces, and where `html_sections` cuts them: after each card waiting for
        approval (with its call), and after each folded turn (None)."""
        stopped = self._cut_short
        waiting: list[tuple[int, ToolCall | None]] = []
        budget = MediaBudget()  # the cards' images and audio, together: the transcript is one output
        now = self._stopped_at if self._stopped_at is not None else self._clock()
        shown = rows(self._items, stopped)
        open_turn = last_turn(shown[-1]) if shown else self._turn  # the answer, or the turn at work
        parts: list[str] = []
        if self.model is not None:
            parts.append(
                model_html(self.model if self.model_note is None else f"{self.model}, {self.model_note}")
            )
        if self.variables is not None:
            parts.append(note_html("meowgent-variables", self.variables))
        for segment in segments(shown):
            lo, hi = turns_of(segment)
            if hi < open_turn and any(isinstance(row, Repeats) for row in segment):
                body = "".join(self._row_html(row, row is shown[-1], stopped, now, budget) for row in segment)
                failed = failing(segment, stopped)  # not hidden: a person wants to see what went wrong
                line = summary(segment, stopped)
                parts.append(turn_html(*line, self._duration(lo, hi), body, open_=failed))
                waiting.append((len(parts), None))
                continue
            for row in segment:  # the open turn: a waiting card's buttons go right after it
                card, *timeline = self._row_parts(row, row is shown[-1], stopped, now, budget)
                parts.append(card)
                if isinstance(row, Repeats) and row.card.status(stopped) == "waiting":
                    waiting.append((len(parts), row.card.call))
                parts.extend(timeline)
        if self.stopped_by is not None:
            pass  # the footer says it: "stopped by you · 1 turn · 2 tool calls"
        elif self.error is not None and error_text(self.error, self.progress(), self._error_below):
            parts.append(
                f'<pre class="meowgent-error" style="color: #d32f2f">'
                f"{escape(error_text(self.error, self.progress(), self._error_below))}</pre>"
            )
        elif self._draft is not None:
            parts.append(draft_html(self._draft.name, self._draft.text))
        elif self.result is None and self._waiting:
            parts.append(waiting_html(self._status, now - self._waiting_since))
        elif self.result is not None and (note := stopped_note(self.result)) is not None:
            parts.append(note_html("meowgent-stopped", note))
        elif self._answered_without_tools:
            parts.append(note_html("meowgent-no-tool-call", NO_TOOL_CALLED))
        if self.finished:
            parts.append(self._footer_html())
        return parts, waiting

    def _row_html(self, row: Row, last: bool, stopped: bool, now: float, budget: MediaBudget) -> str:
        return "".join(self._row_parts(row, last, stopped, now, budget))

    def _row_parts(self, row: Row, last: bool, stopped: bool, now: float, budget: MediaBudget) -> list[str]:
        """A row's HTML; a card's is the card, then its turn's timeline after the turn's last card."""
        if isinstance(row, Note) and row.kind == "retry":
            return [note_html("meowgent-retry", row.text, "font-style: italic; ")]
        if isinstance(row, Note):
            return [note_html("meowgent-token-limit", row.text, "color: #b35900; font-weight: bold; ")]
        if isinstance(row, Block) and row.kind == "thinking":
            # Open while the model is still thinking, so a person sees it is at work.
            thinking = row.end is None and not self.finished
            title = thought_html((now if row.end is None else row.end) - row.start, live=thinking)
            return [thinking_html(row.text, expanded=thinking, title=title)]
        if isinstance(row, Block):
            return [f'<div class="meowgent-text">{markdown_html(row.text)}</div>']
        parts = [card_html_of(row.card, stopped, row.times, row.told, None if self.finished else now, budget)]
        for card in row.cards:  # after a turn's last card, the turn's timeline
            turn = [item for item in self._items if isinstance(item, Card) and item.turn == card.turn]
            if len(turn) > 1 and turn[-1] is card:
                parts.append(turn_timeline_html(turn, now, stopped))
        return parts

    def _duration(self, first: int, last: int) -> float | None:
        """Seconds from the end of the turn before ``first`` to the end of ``last``, where known."""
        start = self._turn_ends.get(first - 1, self._started if first == 1 else None)
        end = self._turn_ends.get(last)
        return None if start is None or end is None else end - start

    def _footer_html(self) -> str:
        facts = self.progress().split(", ")
        if self.stopped_by is not None:  # the same words as text/plain's last line
            facts = [f"stopped by {self.stopped_by} after {self.progress()}"]
        usage = self.usage
        if usage is not None and usage.prompt_tokens is not None:
            facts.append(f"{usage.prompt_tokens:,} prompt tokens")
        if usage is not None and usage.completion_tokens is not None:
            facts.append(f"{usage.completion_tokens:,} completion tokens")
        if usage is not None and usage.tokens_per_second is not None:
            facts.append(f"{usage.tokens_per_second:.1f} tokens/s")
        if usage is not None and usage.waited_seconds is not None and usage.waited_seconds >= 1:
            facts.append(f"waited for the server {seconds(usage.waited_seconds)}")
        if self.context is not None:
            facts.append(self.context)
        if self._stopped_at is not None:
            facts.append(seconds(self._stopped_at - self._started))
        return note_html("meowgent-footer", " \u00b7 ".join(facts), "margin-top: 0.4em; ")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def variables_line(seen: Iterable[Any]) -> str | None:
    """``"variables shown: df (DataFrame, 412 tokens; cut, about 2,031 tokens left out), xs (list, 58
    tokens)"``: what a cell showed the model, from its ``(name, view)`` items; None for none."""
    shown = [
        f"{item.name} ({item.view.kind}, {item.view.tokens:,} tokens"
        + (f"; cut, about {item.view.left_out:,} tokens left out)" if item.view.cut else ")")
        for item in seen
    ]
    return "variables shown: " + ", ".join(shown) if shown else None


def stopped_note(result: AgentResult) -> str | None:
    """Why the run stopped before the model answered, or None if it answered."""
    repeated = result.repeated_failure
    if result.stopped == "repeated_failure" and repeated is not None:
        call = repeated.result.call
        what = "an unreadable call" if repeated.result.kind == "parse_error" else call_text(call)
        if repeated.answered:  # the tool succeeded once; the model kept asking for the same call
            return f"stopped: the model asked for {what} {repeated.times} more times after it had the result"
        return f"stopped: {what} failed the same way {repeated.times} times"
    if result.stopped == "max_turns":
        turns = result.turns
        return f"stopped: the limit of {turns} turn{'s' * (turns != 1)} was reached"
    return None


def error_text(error: BaseException, progress: str, below: bool = False) -> str:
    """The transcript's line about what stopped the run; "" for an interrupt the cell shows below
    (`display.show_run` raises `RunInterrupted`, whose one line says it all)."""
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit)):
        return "" if below else f"[stopped by an interrupt after {progress}]"
    if below:
        return f"[error] {type(error).__name__}, shown below"
    message = str(error).strip()
    text = f"[error] {type(error).__name__}" + (f": {message}" if message else "")
    return text.replace("\n", "\n  ")
