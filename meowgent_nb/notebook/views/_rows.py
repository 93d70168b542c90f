"""How a transcript's parts are laid out: identical calls in a row as one card, finished turns folded.

`rows` turns what `Transcript` kept into what is shown (empty blocks dropped, consecutive
identical cards merged into one `Repeats`, also across turns); `segments` cuts the rows into
turns to fold, keeping a `Repeats` that spans turns together; `summary` is a folded turn's line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._cards import Card, card_summary, failed, same_card, was_told

__all__ = [
    "Block",
    "Note",
    "Repeats",
    "Row",
    "failing",
    "first_turn",
    "last_turn",
    "rows",
    "segments",
    "summary",
    "turns_of",
]


@dataclass
class Block:
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
class Note:
    """A line between the parts of a run: a turn that ended at the token limit, a request asked again."""

    text: str
    turn: int
    kind: Literal["token-limit", "retry"] = "token-limit"
    """What it tells: the HTML's class is ``meowgent-`` and this."""


@dataclass
class Repeats:
    """One card, or several identical ones in a row (shown once, marked "x3")."""

    cards: list[Card]

    @property
    def card(self) -> Card:
        """The one shown: the latest (its duration is the latest)."""
        return self.cards[-1]

    @property
    def times(self) -> int:
        return len(self.cards)

    @property
    def told(self) -> bool:
        """Whether the model was told, on any of them, not to repeat the call."""
        return any(was_told(card) for card in self.cards)


Row = Block | Note | Repeats


def first_turn(row: Row) -> int:
    return row.cards[0].turn if isinstance(row, Repeats) else row.turn


def last_turn(row: Row) -> int:
    return row.cards[-1].turn if isinstance(row, Repeats) else row.turn


def rows(items: Sequence[Block | Note | Card], stopped: bool) -> list[Row]:
    """What is shown, in order: identical cards in a row merged (an empty block between them is nothing)."""
    out: list[Row] = []
    for item in items:
        if isinstance(item, Card):
            last = out[-1] if out else None
            if isinstance(last, Repeats) and same_card(last.card, item, stopped):
                last.cards.append(item)
            else:
                out.append(Repeats([item]))
        elif isinstance(item, Note) or item.text:
            out.append(item)
    return out


def segments(shown: Sequence[Row]) -> list[list[Row]]:
    """``shown`` cut between turns, except inside a `Repeats` that spans turns."""
    out: list[list[Row]] = []
    upto = None
    for row in shown:
        if upto is None or first_turn(row) > upto:
            out.append([])
            upto = last_turn(row)
        out[-1].append(row)
        upto = max(upto, last_turn(row))
    return out


_SHOWN = 3
"""Calls named in a folded turn's summary; the rest are counted."""


def turns_of(segment: Sequence[Row]) -> tuple[int, int]:
    """The first and the last turn of a segment."""
    return first_turn(segment[0]), max(last_turn(row) for row in segment)


def summary(segment: Sequence[Row], stopped: bool) -> tuple[str, list[tuple[str, float | None]]]:
    """A folded turn's line: its turns (``turns 2–4``), three calls with their times, ``and N more``.

    Returns:
        The turns' label, and ``(call in a few words, its time or None)`` per call shown.
    """
    lo, hi = turns_of(segment)
    calls: list[tuple[str, float | None]] = [
        (card_summary(row.card, stopped, row.times), _took(row.card))
        for row in segment
        if isinstance(row, Repeats)
    ]
    if len(calls) > _SHOWN:
        calls[_SHOWN:] = [(f"and {len(calls) - _SHOWN} more", None)]
    return (f"turn {lo}" if lo == hi else f"turns {lo}–{hi}"), calls


def _took(card: Card) -> float | None:
    """How long the call itself ran, where it ran."""
    return None if card.result is None else card.result.duration


def failing(segment: Sequence[Row], stopped: bool) -> bool:
    """Whether a call of the segment did not end well: its turn is not hidden behind its fold."""
    return any(failed(row.card, stopped) for row in segment if isinstance(row, Repeats))
