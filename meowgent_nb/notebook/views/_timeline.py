"""The timeline of a turn's tool calls (`timeline_svg`): an inline SVG, one bar per call.

It shows what a card cannot: calls that ran in parallel, and where the time went (the rest of the
model's answer, a person's approval, the run). A turn with a single call has none.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

from ..._html import escape, seconds
from ..._visible import visible
from ._cards import Card, card_title, shown_arguments
from ._transcript_html import STATUS_COLORS

__all__ = ["Bar", "timeline_svg", "turn_timeline_html"]


class Bar(NamedTuple):
    """One tool call on a turn's timeline; times are seconds from the turn's first call."""

    label: str
    start: float
    """When the call was read from the model's answer."""
    end: float
    """When its result arrived (or now, while it runs or waits)."""
    run: float | None
    """When the tool itself started, where its duration is known."""
    status: str
    asked: float | None = None
    """When the call was sent for approval, if it was."""
    decided: float | None = None
    """When the decision arrived (None while it is awaited)."""
    call: str = ""
    """The call with the arguments that ran, for the bar's tooltip (the label, if empty)."""


def turn_timeline_html(cards: Sequence[Card], now: float, stopped: bool) -> str:
    """The timeline of one turn's cards (``now``: a ``clock()`` reading, the end of those still at work)."""
    origin = min(card.start for card in cards)
    bars = []
    for card in cards:
        end = card.end if card.end is not None else now
        duration = card.result.duration if card.result is not None else None
        decided = None if card.decided_at is None else card.decided_at - origin
        asked = None if card.asked_at is None else card.asked_at - origin
        # The tool ran for the last ``duration`` seconds before its result arrived, after any decision.
        run = None
        if duration is not None:
            run = min(max(end - origin - duration, decided or 0.0, card.start - origin), end - origin)
        elif card.running_at is not None:  # running now
            run = card.running_at - origin
        status = card.status(stopped)
        label = visible(card.call.name) + " (edited)" * shown_arguments(card)[1]
        ran = card_title(card, status)  # the tooltip: the arguments that ran
        bars.append(Bar(label, card.start - origin, end - origin, run, status, asked, decided, ran))
    return f'<div class="meowgent-timeline-box" style="margin: 0.2em 0 0.6em">{timeline_svg(bars)}</div>'


_WIDTH, _RIGHT, _ROW = 480, 12, 18
_CHAR = 6.6
"""Width of a label character at font-size 11 (a wide one: labels must not be cut)."""
_LABEL_CHARS = 28
"""Longer tool names are shortened with an ellipsis; the bar's tooltip has the full name."""
_WAIT_COLOR = "#757575"
_ids = itertools.count(1)


def timeline_svg(bars: Sequence[Bar]) -> str:
    """An inline SVG with one bar per call, so calls that ran in parallel overlap visibly.

    Each bar spans read to result: outlined while the answer streams, hatched while approval
    waits, solid while the tool runs.
    """
    labels = [
        bar.label if len(bar.label) <= _LABEL_CHARS else bar.label[: _LABEL_CHARS - 1] + "\u2026"
        for bar in bars
    ]
    left = min(
        max(round(_CHAR * max(map(len, labels), default=0)) + 12, 70), round(_CHAR * _LABEL_CHARS) + 12
    )
    span = max((bar.end for bar in bars), default=0.0) or 1e-9
    scale = (_WIDTH - left - _RIGHT) / span
    height = len(bars) * _ROW + 16
    hatch = f"meowgent-hatch-{next(_ids)}"  # unique: a folded (hidden) timeline's pattern cannot serve others
    rows = []
    for row, (bar, label) in enumerate(zip(bars, labels)):
        y = row * _ROW + 3
        color = STATUS_COLORS.get(bar.status, "#757575")
        title = f"<title>{escape(_title(bar))}</title>"

        def rect(css_class: str, start: float, end: float, paint: str) -> str:
            x, width = left + start * scale, max((end - start) * scale, 2.0)
            # y and title are this bar's: rect is called within this iteration only
            return (
                f'<rect class="{css_class}" x="{x:.1f}" y="{y}" width="{width:.1f}" height="12" rx="2"'  # noqa: B023
                f" {paint}>{title}</rect>"  # noqa: B023
            )

        rows.append(
            f'<text x="{left - 6}" y="{y + 10}" text-anchor="end" font-size="11" fill="currentColor">'
            f"{escape(label)}<title>{escape(bar.label)}</title></text>"
        )
        rows.append(
            rect("meowgent-bar", bar.start, bar.end, f'fill="{color}" fill-opacity="0.25" stroke="{color}"')
        )
        if bar.asked is not None:
            waited = bar.decided if bar.decided is not None else bar.end
            rows.append(rect("meowgent-wait", bar.asked, waited, f'fill="url(#{hatch}) {_WAIT_COLOR}"'))
        if bar.run is not None:
            rows.append(rect("meowgent-run", bar.run, bar.end, f'fill="{color}"'))
    axis_y = len(bars) * _ROW + 12
    axis = (
        f'<text x="{left}" y="{axis_y}" font-size="10" fill="currentColor" opacity="0.7">0</text>'
        f'<text x="{_WIDTH - _RIGHT}" y="{axis_y}" font-size="10" text-anchor="end" fill="currentColor"'
        f' opacity="0.7">{seconds(span)}</text>'
    )
    pattern = (
        f'<defs><pattern id="{hatch}" width="5" height="5" patternUnits="userSpaceOnUse"'
        f' patternTransform="rotate(45)"><rect width="2.5" height="5" fill="{_WAIT_COLOR}"/></pattern></defs>'
    )
    return (
        f'<svg class="meowgent-timeline" xmlns="http://www.w3.org/2000/svg"'
        f' width="{_WIDTH}" height="{height}"'
        f' viewBox="0 0 {_WIDTH} {height}" style="max-width: 100%">{pattern}{"".join(rows)}{axis}</svg>'
    )


def _title(bar: Bar) -> str:
    parts = [f"{bar.call or bar.label}: {seconds(bar.end - bar.start)} in all"]
    if bar.asked is not None:
        waited = (bar.decided if bar.decided is not None else bar.end) - bar.asked
        parts.append(f"{seconds(waited)} waiting for approval")
    if bar.run is not None:
        parts.append(f"{seconds(bar.end - bar.run)} running")
    return ", ".join(parts)
