"""HTML pieces of the transcript (`notebook.views.transcript`): cards, thinking, a folded turn, Markdown.

Everything here takes values and returns HTML text, built from the blocks in `meowgent_nb._html`
(inline styles, for viewers that drop ``<style>``); the ``meowgent-*`` classes are for tests and
for people who style them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..._html import MONO, MUTED, PRE_STYLE, escape, note_html, pre_html, seconds
from ..._visible import visible, visible_html

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["STATUS_COLORS", "card_html", "markdown_html", "progress_html", "thinking_html", "turn_html"]

STATUS_COLORS = {
    "waiting": "#9e6c00",
    "answering": "#9e6c00",
    "running": "#1976d2",
    "done": "#2e7d32",
    "error": "#d32f2f",
    "timeout": "#b35900",
    "denied": "#757575",
    "not-run": "#757575",
    "unknown-tool": "#d32f2f",
    "invalid-arguments": "#d32f2f",
    "unreadable": "#d32f2f",
    "interrupted": "#757575",
    "stopped-waiting": "#757575",
    "stopped-queued": "#757575",
}
"""A color per card status slug (contrast: white text on it >= 4.5:1; it on white or a dark theme >= 3:1)."""

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
    times: int = 1,
    told: bool = False,
    notes: Sequence[str] = (),
    media: str = "",
    progress: str = "",
    edited: bool = False,
    running: str | None = None,
    code: str = "",
) -> str:
    """One tool call's card; ``output`` past ``limit`` characters is folded into a <details>.

    Text arguments are escaped, with hidden characters marked; ``progress`` and ``media`` are
    HTML already made safe. ``times`` and ``told`` are as for `card_lines`; ``edited``
    marks arguments a person changed; ``running`` is a live counter ("12 s of 30 s"); ``code`` is
    the code the call ran (HTML, `_code_html`), shown above the other arguments, and makes
    ``edited`` read "ran as edited".
    """
    color = STATUS_COLORS.get(status, "#757575")
    head = (
        f'<code style="font-weight: bold; {MONO}">{visible_html(name)}</code> '
        f'<span class="meowgent-status" style="background: {color}; color: white; border-radius: 3px;'
        f' padding: 0 0.4em; font-size: 0.85em">{escape(label)}</span>'
    )
    if edited:
        head += (
            ' <span class="meowgent-edited" title="a person changed the arguments before approving"'
            f' style="font-weight: bold; font-size: 0.85em">{"ran as edited" if code else "edited"}</span>'
        )
    if running is not None:
        head += f' <span class="meowgent-elapsed" style="{MUTED}">{escape(running)}</span>'
    if times > 1:
        head += (
            f' <span class="meowgent-repeats" title="the same call, with the same outcome, {times} times in a row"'
            f' style="font-weight: bold; font-size: 0.85em">\u00d7{times}</span>'
        )
    if duration is not None:
        head += f' <span class="meowgent-duration" style="{MUTED}">{seconds(duration)}</span>'
    parts = [f"<div>{head}</div>"]
    if approval is not None:
        parts.append(note_html("meowgent-approval", approval))
    if told:
        parts.append(note_html("meowgent-told", "the model was told not to repeat this call"))
    parts.extend(note_html("meowgent-server-asked", visible(note)) for note in notes)
    if progress:
        parts.append(progress)
    if code:
        parts.append(f'<div class="meowgent-code-call">{code}</div>')
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
    parts.append(media)
    style = f"border-left: 3px solid {color}; {_BOX}"
    return f'<div class="meowgent-card meowgent-status-{status}" style="{style}">{"".join(parts)}</div>'


def progress_html(progress: Any) -> str:
    """A running call's progress (an MCP ``Progress``): a bar where there is a total, and its text."""
    fraction = progress.fraction
    bar = ""
    if fraction is not None:
        bar = (
            '<span class="meowgent-progress-bar" style="display: inline-block; width: 10em; height: 0.6em;'
            ' background: rgba(127,127,127,0.25); border-radius: 3px; vertical-align: middle; margin-right: 0.5em">'
            f'<span style="display: block; width: {fraction * 100:.1f}%; height: 100%; background: #1e88e5;'
            ' border-radius: 3px"></span></span>'
        )
    text = f'<span class="meowgent-progress-text">{visible_html(progress.text())}</span>'
    return f'<div class="meowgent-progress" style="{MUTED}">{bar}{text}</div>'


def turn_html(
    turns: str,
    calls: Sequence[tuple[str, float | None]],
    duration: float | None,
    body: str,
    *,
    open_: bool = False,
) -> str:
    """A finished turn folded to one line, and ``body`` (HTML) inside.

    The line names each call with its time, then the turn's own.
    ``open_``: shown unfolded (a turn where a call failed), still foldable.
    """
    line = ", ".join(
        visible_html(text) + ("" if took is None else f" ({_duration_html(took)})") for text, took in calls
    )
    timing = "" if duration is None else f" \u00b7 the turn took {_duration_html(duration)}"
    css = "meowgent-turn meowgent-turn-failed" if open_ else "meowgent-turn"
    return (
        f'<details class="{css}"{" open" * open_} style="margin: 0.2em 0">'
        f'<summary style="cursor: pointer; {MUTED}">{visible_html(turns)}: {line}{timing}</summary>'
        f"{body}</details>"
    )


def _duration_html(took: float) -> str:
    """A measured time; meowgent_nb/nbval_sanitize.cfg replaces it by its class."""
    return f'<span class="meowgent-duration">{seconds(took)}</span>'


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

_CODE_STYLE = "background: rgba(127,127,127,0.15); padding: 0 0.2em; border-radius: 3px"
_SAFE_SCHEMES = ("http://", "https://")


@functools.lru_cache(maxsize=64)  # each redraw of a live transcript renders its finished blocks again
def markdown_html(text: str) -> str:
    """Model text (Markdown) as HTML, as CommonMark reads it (markdown-it-py), made safe.

    Raw HTML is shown as text, links are kept only to ``http``/``https``, images are not
    fetched, and headings are two levels down (a model's ``#`` is ``<h3>``).
    """
    markdown = _markdown()
    tokens = markdown.parse(text)
    for token in tokens:
        token.block = False  # no newline after each block's tags: the HTML is one line, as before
    return markdown.renderer.render(tokens, markdown.options, {})


@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark", {"html": False, "xhtmlOut": False}).disable("image")
    markdown.validateLink = lambda url: url.lower().startswith(_SAFE_SCHEMES)
    rules = {
        "text": lambda tokens, i: escape(tokens[i].content),
        "softbreak": lambda tokens, i: "<br>",
        "hardbreak": lambda tokens, i: "<br>",
        "code_inline": lambda tokens, i: f'<code style="{_CODE_STYLE}">{escape(tokens[i].content)}</code>',
        "fence": _code_block,
        "code_block": _code_block,
        "heading_open": lambda tokens, i: f"<h{_level(tokens[i])}>",
        "heading_close": lambda tokens, i: f"</h{_level(tokens[i])}>",
        "link_open": _link_open,
    }
    for name, rule in rules.items():
        # add_render_rule binds the rule as a method: (renderer, tokens, index, options, env)
        markdown.add_render_rule(name, lambda _, tokens, i, *__, rule=rule: rule(tokens, i))
    return markdown


def _code_block(tokens: Sequence[Token], i: int) -> str:
    token = tokens[i]
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    css = f' class="language-{escape(language)}"' if language else ""
    return f'<pre style="{PRE_STYLE}"><code{css}>{escape(token.content.rstrip(chr(10)))}</code></pre>'


def _level(token: Token) -> int:
    return min(int(token.tag[1]) + 2, 6)  # a model's "#" should not outshout the notebook


def _link_open(tokens: Sequence[Token], i: int) -> str:
    href = escape(str(tokens[i].attrGet("href") or ""))
    return f'<a href="{href}" target="_blank" rel="noopener noreferrer">'
