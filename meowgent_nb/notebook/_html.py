"""HTML pieces of the transcript (`notebook.transcript`): cards, thinking, a small Markdown subset, the timeline.

Everything here takes values and returns HTML text, built from the blocks in `meowgent_nb._html`
(inline styles, for viewers that drop ``<style>``); the ``meowgent-*`` classes are for tests and
for people who style them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from .._html import MUTED, PRE_STYLE, escape, note_html, pre_html, seconds
from .._visible import visible_html

__all__ = ["Bar", "card_html", "markdown_html", "thinking_html", "timeline_svg"]

STATUS_COLORS = {
    "waiting": "#f9a825",
    "running": "#1e88e5",
    "done": "#2e7d32",
    "error": "#c62828",
    "timeout": "#ef6c00",
    "denied": "#757575",
    "not-run": "#757575",
    "unknown-tool": "#c62828",
    "invalid-arguments": "#c62828",
    "unreadable": "#c62828",
    "interrupted": "#757575",
}
"""A color per card status slug; muted tones that read on light and dark themes."""

_BOX = "padding: 0.3em 0.6em; margin: 0.4em 0; background: rgba(127,127,127,0.06); border-radius: 4px"


# --- transcript pieces ------------------------------------------------------------------------


def card_html(
    status: str,
    label: str,
    name: str,
    *,
    duration: float | None,
    approval: str | None,
    arguments: str | None,
    output: str | None,
    limit: int,
) -> str:
    """One tool call's card; ``output`` past ``limit`` characters is folded into a <details>.

    ``name``, ``arguments`` and ``output`` show their hidden characters marked (`visible_html`).
    """
    color = STATUS_COLORS.get(status, "#757575")
    head = (
        f'<code style="font-weight: bold">{visible_html(name)}</code> '
        f'<span class="meowgent-status" style="background: {color}; color: white; border-radius: 3px;'
        f' padding: 0 0.4em; font-size: 0.85em">{escape(label)}</span>'
    )
    if duration is not None:
        head += f' <span class="meowgent-duration" style="{MUTED}">{seconds(duration)}</span>'
    parts = [f"<div>{head}</div>"]
    if approval is not None:
        parts.append(note_html("meowgent-approval", approval))
    if arguments is not None:
        parts.append(pre_html("meowgent-arguments", arguments))
    if output is not None and len(output) <= limit:
        parts.append(pre_html("meowgent-output", output))
    elif output is not None:
        parts.append(
            pre_html("meowgent-output", output[:limit] + "\u2026")
            + f'<details><summary style="cursor: pointer; {MUTED}">'
            + f"show all {len(output):,} characters</summary>"
            + pre_html("meowgent-output-full", output)
            + "</details>"
        )
    style = f"border-left: 3px solid {color}; {_BOX}"
    return f'<div class="meowgent-card meowgent-status-{status}" style="{style}">{"".join(parts)}</div>'


def thinking_html(text: str, *, expanded: bool = False, title: str = "thinking") -> str:
    """The model's reasoning, folded unless ``expanded``: it is long and rarely what a person came for.

    ``title`` (HTML) begins the summary line: "thinking", or how long the model thought.
    """
    words = len(text.split())
    return (
        f'<details class="meowgent-thinking"{" open" * expanded}>'
        f'<summary style="cursor: pointer; {MUTED}">{title}'
        f" ({words} word{'s' * (words != 1)})</summary>"
        f'<div style="white-space: pre-wrap; {MUTED}">{escape(text)}</div></details>'
    )


# --- Markdown ---------------------------------------------------------------------------------
# A deliberately small subset (fences, paragraphs, lists, headings, code spans, bold, italics,
# http links): enough for model answers, and safe because every piece of text is escaped before
# any tag is added. Unclosed constructs (common while an answer is streaming) stay literal text.

_FENCE = re.compile(r"^```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:^```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
_BULLET = re.compile(r"^\s{0,3}([-*+]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CODE_STYLE = "background: rgba(127,127,127,0.15); padding: 0 0.2em; border-radius: 3px"


def markdown_html(text: str) -> str:
    """Model text (Markdown) as HTML; every character of ``text`` is escaped first."""
    parts = []
    position = 0
    for fence in _FENCE.finditer(text):
        parts.append(_blocks_html(text[position : fence.start()]))
        language = f' class="language-{escape(fence.group(1))}"' if fence.group(1) else ""
        code = escape(fence.group(2).rstrip("\n"))
        parts.append(f'<pre style="{PRE_STYLE}"><code{language}>{code}</code></pre>')
        position = fence.end()
    parts.append(_blocks_html(text[position:]))
    return "".join(parts)


def _blocks_html(text: str) -> str:
    out = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        heading = _HEADING.match(lines[0])
        if heading and len(lines) == 1:
            level = min(len(heading.group(1)) + 2, 6)  # a model's "#" should not outshout the notebook
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif _BULLET.match(lines[0]):
            out.append(_list_html(lines))
        else:
            out.append("<p>" + "<br>".join(_inline(line) for line in lines) + "</p>")
    return "".join(out)


def _list_html(lines: list[str]) -> str:
    items: list[str] = []
    for line in lines:
        bullet = _BULLET.match(line)
        if bullet:
            items.append(bullet.group(2))
        else:  # a continuation line belongs to the item above
            items[-1] += " " + line.strip()
    tag = "ol" if _BULLET.match(lines[0]).group(1)[0].isdigit() else "ul"
    return f"<{tag}>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + f"</{tag}>"


def _inline(text: str) -> str:
    out = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_emphasis(text[position : span.start()]))
        out.append(f'<code style="{_CODE_STYLE}">{escape(span.group(2))}</code>')
        position = span.end()
    out.append(_emphasis(text[position:]))
    return "".join(out)


def _emphasis(text: str) -> str:
    text = escape(text)  # the patterns below only add tags around text that is already escaped
    text = _LINK.sub(r'<a href="\2" target="_blank" rel="noopener noreferrer">\1</a>', text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    return _ITALIC.sub(r"<em>\1</em>", text)


# --- timeline ---------------------------------------------------------------------------------


class Bar(NamedTuple):
    """One tool call on a turn's timeline; times are seconds from the turn's first call."""

    label: str
    start: float
    """When the call was read from the model's answer."""
    end: float
    """When its result arrived (or now, while it runs)."""
    run: float | None
    """When the tool itself started, where its duration is known."""
    status: str


_WIDTH, _LABEL, _RIGHT, _ROW = 480, 130, 12, 18


def timeline_svg(bars: Sequence[Bar]) -> str:
    """An inline SVG with one bar per call, so calls that ran in parallel overlap visibly.

    The pale part of a bar is the wait (for the rest of the answer, for approval), the solid part
    the tool's own run time.
    """
    span = max((bar.end for bar in bars), default=0.0) or 1e-9
    scale = (_WIDTH - _LABEL - _RIGHT) / span
    height = len(bars) * _ROW + 16
    rows = []
    for row, bar in enumerate(bars):
        y = row * _ROW + 3
        color = STATUS_COLORS.get(bar.status, "#757575")
        x, width = _LABEL + bar.start * scale, max((bar.end - bar.start) * scale, 2.0)
        label = bar.label if len(bar.label) <= 18 else bar.label[:17] + "\u2026"
        total = seconds(bar.end - bar.start)
        title = f"{bar.label}: {total} in all" + (
            f", {seconds(bar.end - bar.run)} running" if bar.run is not None else ""
        )
        rows.append(
            f'<text x="{_LABEL - 6}" y="{y + 10}" text-anchor="end" font-size="11" fill="currentColor">'
            f"{escape(label)}</text>"
            f'<rect class="meowgent-bar" x="{x:.1f}" y="{y}" width="{width:.1f}" height="12" rx="2"'
            f' fill="{color}" fill-opacity="0.3"><title>{escape(title)}</title></rect>'
        )
        if bar.run is not None:
            run_x = _LABEL + bar.run * scale
            run_width = max((bar.end - bar.run) * scale, 2.0)
            rows.append(
                f'<rect class="meowgent-run" x="{run_x:.1f}" y="{y}" width="{run_width:.1f}"'
                f' height="12" rx="2"'
                f' fill="{color}"><title>{escape(title)}</title></rect>'
            )
    axis_y = len(bars) * _ROW + 12
    axis = (
        f'<text x="{_LABEL}" y="{axis_y}" font-size="10" fill="currentColor" opacity="0.6">0</text>'
        f'<text x="{_WIDTH - _RIGHT}" y="{axis_y}" font-size="10" text-anchor="end" fill="currentColor"'
        f' opacity="0.6">{seconds(span)}</text>'
    )
    return (
        f'<svg class="meowgent-timeline" xmlns="http://www.w3.org/2000/svg"'
        f' width="{_WIDTH}" height="{height}"'
        f' viewBox="0 0 {_WIDTH} {height}" style="max-width: 100%">{"".join(rows)}{axis}</svg>'
    )
