"""`DecisionsView`: ``%agent decisions``, the session's decision log as an HTML table that reads.

``text/plain`` is `DecisionLog.table` exactly (nbval and terminals read it). The HTML fits a
laptop's notebook (about 900 px): each column wraps inside its cell, a call's arguments are cut
short with the whole on hover and folded below, an edited call reads ``asked -> ran``, and a
tool's facts (its risk) get their column when a decided call's tool has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._html import MONO, MUTED, escape
from ..._visible import visible
from ...agent.approvals.decisions import DecisionLog, DecisionRecord

__all__ = ["DecisionsView"]

_ARGUMENTS_SHOWN = 80
"""Characters of a call's arguments shown in their cell; the rest are on hover and folded below."""

_COLORS = {"approved": "#2e7d32", "edited": "#1976d2", "denied": "#757575"}
"""The decision's badge (white text on it >= 4.5:1, as the cards' status colours)."""
_CELL = (
    "text-align: left; vertical-align: top; padding: 0.3em 0.5em; white-space: normal;"
    " word-break: normal; overflow-wrap: break-word; border-bottom: 1px solid rgba(127,127,127,0.25)"
)
"""Every cell wraps between words inside itself (JupyterLab's output CSS would cut words anywhere,
``word-break: break-all``); a word breaks only where it is longer than its column can be."""
_NARROW = {"#": "2.5em", "time": "5.5em", "decision": "6em"}
"""Columns that never need to wrap, at their width; the others share what is left."""


class DecisionsView:
    """The decision log as ``%agent decisions`` shows it: HTML for people, its `table` as text.

    Args:
        log: The decisions (`session_decisions()` for the session's).
    """

    def __init__(self, log: DecisionLog):
        self.log = log

    def to_text(self) -> str:
        """The ``text/plain`` form: `DecisionLog.table`, as ``%agent decisions`` printed it."""
        return self.log.table()

    def to_html(self) -> str:
        """The ``text/html`` form: a table whose columns wrap, with the arguments shortened."""
        if not len(self.log):
            return f'<div class="meowgent-decisions-empty" style="{MUTED}">{escape(self.log.table())}</div>'
        columns = ("#", *self.log.columns())
        head = "".join(
            f'<th style="{_CELL}{_width(name)}; font-weight: bold">{escape(name)}</th>' for name in columns
        )
        body = "".join(
            f'<tr class="meowgent-decision">{_row(number, record, columns)}</tr>'
            for number, record in enumerate(self.log, 1)
        )
        return (
            '<table class="meowgent-decisions" style="width: 100%; max-width: 100%; table-layout: auto;'
            f' border-collapse: collapse; margin: 0.2em 0"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def _width(column: str) -> str:
    width = _NARROW.get(column)
    return "" if width is None else f"; width: {width}; white-space: nowrap"


def _row(number: int, record: DecisionRecord, columns: Sequence[str]) -> str:
    row = record.row()
    cells = {
        "#": str(number),
        "time": escape(row["time"]),
        "tool": f'<code style="{MONO}">{escape(visible(record.tool))}</code>',
        "arguments": _arguments_html(record),
        "facts": escape(visible(row["facts"])),
        "decision": _badge(record.decision),
        "by": escape(visible(record.by)),
        "reason": escape(visible(record.reason)),
    }
    return "".join(
        f'<td class="meowgent-decision-{_slug(c)}" style="{_CELL}{_width(c)}">{cells[c]}</td>'
        for c in columns
    )


def _slug(column: str) -> str:
    return "number" if column == "#" else column


def _badge(decision: str) -> str:
    color = _COLORS.get(decision, "#757575")
    return (
        f'<span style="background: {color}; color: white; border-radius: 3px; padding: 0 0.4em;'
        f' font-size: 0.85em">{escape(decision)}</span>'
    )


def _arguments_text(arguments: Any) -> str:
    """Arguments as a call shows them: ``path='old.txt', mode=0``, hidden characters marked."""
    if not isinstance(arguments, dict):
        return visible(str(arguments))
    return visible(", ".join(f"{name}={value!r}" for name, value in arguments.items()))


def _arguments_html(record: DecisionRecord) -> str:
    """The arguments asked about (and, edited, those that ran), each cut at `_ARGUMENTS_SHOWN` with
    the whole in its ``title``; the whole folded below when one was cut."""
    parts = [("asked", _arguments_text(record.arguments))]
    if record.ran_with is not None:
        parts.append(("ran", _arguments_text(record.ran_with)))
    shown = []
    for label, text in parts:
        short = text if len(text) <= _ARGUMENTS_SHOWN else text[: _ARGUMENTS_SHOWN - 1] + "\u2026"
        words = f'<span style="{MUTED}">{label}</span> ' if record.ran_with is not None else ""
        shown.append(f'{words}<code title="{escape(text)}" style="{MONO}">{escape(short)}</code>')
    html = " \u2192 ".join(shown)
    if all(len(text) <= _ARGUMENTS_SHOWN for _, text in parts):
        return html
    whole = "".join(
        f'<div><span style="{MUTED}">{label}</span> <code style="{MONO}">{escape(text)}</code></div>'
        for label, text in parts
    )
    return (
        f'{html}<details class="meowgent-decision-whole"><summary style="cursor: pointer; {MUTED}">'
        f"all of it</summary>{whole}</details>"
    )
