"""The transcript's signs of life while a run is going: the model, the wait, a call being written.

Only the HTML carries times: live counters are drawn only while a run is live, and the time a
model thought is in a ``meowgent-thought-time`` span that nbval_sanitize.cfg replaces.
"""

from __future__ import annotations

from ..._html import MUTED, escape, pre_html
from ..._visible import visible, visible_html

__all__ = ["draft_html", "draft_line", "elapsed_html", "model_html", "thought_html", "waiting_html"]

_DRAFT_COLOR = "#1e88e5"  # the color of a running call: the model is at work on it
_DRAFT_STYLE = (
    f"border-left: 3px dashed {_DRAFT_COLOR}; padding: 0.3em 0.6em; margin: 0.4em 0;"
    " background: rgba(127,127,127,0.06); border-radius: 4px"
)


def model_html(description: str) -> str:
    """The line at the top of a transcript naming the model and backend that answer."""
    return (
        f'<div class="meowgent-model-line" style="{MUTED}">model: '
        f'<span class="meowgent-model">{visible_html(description)}</span></div>'
    )


def elapsed_html(seconds: float) -> str:
    """A live counter, in whole seconds; nothing under one second (it would only flicker)."""
    if seconds < 1:
        return ""
    return f' <span class="meowgent-elapsed">{int(seconds)} s</span>'


def waiting_html(status: str | None, seconds: float) -> str:
    """The line shown while nothing streams: the backend's status, or "waiting for the model"."""
    text = escape(status or "waiting for the model") + "..." + elapsed_html(seconds)
    return f'<div class="meowgent-waiting" style="font-style: italic; {MUTED}">{text}</div>'


def thought_html(seconds: float, *, live: bool) -> str:
    """The summary of a thinking block: "thinking... 2 s" while it goes on, then "thought for 3.2 s"."""
    if live:
        return "thinking..." + elapsed_html(seconds)
    return f'thought for <span class="meowgent-thought-time">{seconds:.1f} s</span>'


def _draft_title(name: str | None) -> str:
    return "writing a call" + (f" to {name}" if name else "") + "..."


def draft_html(name: str | None, text: str) -> str:
    """A call the model is still writing: its name once known and what it wrote so far (display only)."""
    title = "writing a call"
    if name:
        title += f' to <code style="font-weight: bold">{visible_html(name)}</code>'
    parts = [f'<div style="font-style: italic">{title}...</div>']
    if text.strip():
        parts.append(pre_html("meowgent-draft-text", text.strip()))
    return f'<div class="meowgent-draft" style="{_DRAFT_STYLE}">{"".join(parts)}</div>'


def draft_line(name: str | None) -> str:
    """The text/plain line of a call being written (never in a finished transcript)."""
    return f"[{visible(_draft_title(name))}]"
