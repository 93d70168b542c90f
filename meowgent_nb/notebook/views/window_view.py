"""``%agent context``: what the last request sent the model, and how each turn filled the window.

The text/plain is a stable table of the last request's tokens per part and its messages; the HTML
adds a stacked bar per request against the window, and the exact messages, folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._html import MUTED, escape, pre_html
from ..._visible import visible
from ...agent.window import PARTS, ContextUse

__all__ = ["ContextView", "context_view"]

COLORS = {
    "tool rules": "#8e24aa",
    "tool descriptions": "#5e35b1",
    "your instructions": "#3949ab",
    "earlier turns": "#039be5",
    "tool results": "#00897b",
    "the new prompt": "#7cb342",
    "the answer": "#f4511e",
    "message format": "#9e9e9e",
}
_MESSAGE_SHOWN = 2000  # characters of one message in the text form (the HTML has all of it)


class ContextView:
    """The context of a conversation's requests (`ContextUse`, oldest first) and the last request's messages."""

    def __init__(
        self, uses: Sequence[ContextUse], messages: Sequence[Any], model: str, compaction: Any = None
    ):
        self.uses, self.messages, self.model = list(uses), list(messages), model
        self.compaction = compaction
        """The conversation's `Compaction`, when it has left anything out or shortened it."""

    def _as_sent(self) -> str:
        """What compaction did to the conversation as sent, in a sentence; "" when nothing."""
        compaction = self.compaction
        if compaction is None or not (compaction.dropped or compaction.shortened):
            return ""
        dropped, shortened = compaction.dropped, len(compaction.shortened)
        done = []
        if dropped:
            summary = ", the model's summary of them in their place" if compaction.summary else ""
            done.append(f"the {dropped:,} oldest message{'s' * (dropped != 1)} left out{summary}")
        if shortened:
            done.append(f"{shortened:,} tool result{'s' * (shortened != 1)} shortened")
        return f"As sent, to fit the window: {'; '.join(done)}. The conversation keeps them all."

    def _total(self, use: ContextUse, part: str) -> str:
        mark = "~" if use.estimated and part != "message format" else ""
        return f"{mark}{use.tokens[part]:,}"

    def __repr__(self) -> str:
        if not self.uses:
            return "(no request yet: the context is shown after the first %%agent cell)"
        last = self.uses[-1]
        how = "estimated from its characters" if last.estimated else "counted with the model's tokenizer"
        lines = [f"Request {last.turn} of the conversation, to {self.model} ({how}):"]
        parts = [p for p in PARTS if p in last.tokens]
        width = max(len(p) for p in parts)
        lines += [f"  {part:<{width}}  {self._total(last, part):>9}" for part in parts]
        reported = " (as the model reported it)" if last.reported is not None else ""
        mark = "~" if last.estimated and last.reported is None else ""
        lines.append(f"  {'prompt':<{width}}  {mark + format(last.prompt, ','):>9}{reported}")
        lines.append(f"  {'in all':<{width}}  {mark + format(last.used, ','):>9}")
        lines.append(
            f"  {last.footer()}" if last.window else "  (the model's context window is not known here)"
        )
        if self._as_sent():
            lines.append(f"  {self._as_sent()}")
        lines.append("Messages sent:")
        for message in self.messages:
            text = visible(str(message.get("content", "")))
            if len(text) > _MESSAGE_SHOWN:
                text = text[:_MESSAGE_SHOWN] + f"... ({len(text) - _MESSAGE_SHOWN:,} more characters)"
            shown = "\n".join(("  " + line).rstrip() for line in text.splitlines())
            lines.append(f"[{message.get('role', '?')}] " + shown.lstrip())
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        if not self.uses:
            return f'<div style="{MUTED}">{escape(repr(self))}</div>'
        scale = max([u.window or 0 for u in self.uses] + [u.used for u in self.uses])
        rows = [self._bar(use, scale) for use in self.uses]
        sent = "".join(
            f"<div><b>{escape(str(m.get('role', '?')))}</b>{pre_html('meowgent-context-message', str(m.get('content', '')))}</div>"
            for m in self.messages
        )
        table = self._table(self.uses[-1])
        return (
            f'<div class="meowgent-context">{table}'
            f"{''.join(rows)}"
            f'<details><summary style="cursor: pointer; {MUTED}">the messages of request {self.uses[-1].turn}'
            f" ({len(self.messages)})</summary>{sent}</details></div>"
        )

    def _table(self, use: ContextUse) -> str:
        how = "estimated from its characters" if use.estimated else "counted with the model's tokenizer"
        cell = 'style="padding: 0 0.8em 0 0; text-align: {}"'
        rows = "".join(
            f'<tr><td {cell.format("left")}><span style="display: inline-block; width: 0.8em; height: 0.8em;'
            f' background: {COLORS[part]}; border-radius: 2px"></span> {escape(part)}</td>'
            f"<td {cell.format('right')}>{self._total(use, part)}</td></tr>"
            for part in PARTS
            if part in use.tokens
        )
        mark = "~" if use.estimated and use.reported is None else ""
        window = escape(use.footer()) if use.window else "the model's context window is not known here"
        return (
            f'<div class="meowgent-context-table"><div>request {use.turn} of the conversation, to'
            f" <code>{escape(self.model)}</code> ({how}): <b>{mark}{use.used:,} tokens</b>; {window}</div>"
            f'<table style="border-collapse: collapse; margin: 0.3em 0">{rows}</table>'
            + (f'<div style="{MUTED}">{escape(self._as_sent())}</div>' if self._as_sent() else "")
            + "</div>"
        )

    def _bar(self, use: ContextUse, scale: int) -> str:
        segments = "".join(
            f'<span title="{escape(part)}: {self._total(use, part)} tokens" style="display: inline-block;'
            f' height: 12px; width: {100 * n / scale:.2f}%; background: {COLORS[part]}"></span>'
            for part, n in use.tokens.items()
            if n > 0 and scale
        )
        window = f" of {use.window:,}" if use.window else ""
        return (
            f'<div class="meowgent-context-turn" style="display: flex; align-items: center; gap: 0.5em; margin: 2px 0">'
            f'<span style="{MUTED}; width: 6.5em; white-space: nowrap">request {use.turn}</span>'
            f'<span style="flex: 1; height: 12px; background: rgba(127,127,127,0.15); border-radius: 3px;'
            f' overflow: hidden; white-space: nowrap; font-size: 0">{segments}</span>'
            f'<span style="{MUTED}; width: 9em">{use.used:,}{window}</span></div>'
        )


def context_view(log: Sequence[Any], model: Any, compaction: Any = None) -> ContextView:
    """The view of a conversation's `ContextRecord` log, measured with ``model`` (the last cell's),
    and what its `Compaction` left out or shortened."""
    from ...models.base import describe_model

    uses = [record.measure(model) for record in log]
    messages = list(log[-1].request.messages) if log else []
    return ContextView(
        uses, messages, describe_model(model) if model is not None else "the model", compaction
    )
