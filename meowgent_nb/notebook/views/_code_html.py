"""Code a call carries (a tool's ``code_argument``), as a person reads it before and after it runs.

`code_html` highlights it with Pygments (inline styles on a light block of its own, so its
colours read the same in JupyterLab's light and dark themes and in viewers that drop ``<style>``),
numbers its lines when it has more than a few, and folds what is past `CODE_LINES`. `risk_html`
is its risk label (a tool's ``risk`` fact, `notebook.workspace.code_risk`) as a badge, with what
the label is based on. `code_lines` is the text/plain form. Hidden characters are shown as
escapes before highlighting: what a person approves hides nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._html import MONO, escape
from ..._visible import visible

__all__ = ["CODE_LINES", "RISK_COLORS", "code_html", "code_lines", "code_of", "risk_html"]

CODE_LINES = 30
"""Lines of code shown before the rest is folded into "show all N lines"."""
_NUMBERED = 5
"""Code longer than this many lines has its lines numbered."""

RISK_COLORS = {
    "read-only": "#2e7d32",
    "modifies": "#8a5a00",
    "writes-files": "#b35900",
    "deletes": "#c62828",
    "network": "#c62828",
    "runs-commands": "#c62828",
    "unreadable": "#6a1b9a",
}
"""A colour per risk label; white text on each has a contrast of at least 4.5:1."""

_BLOCK = (
    "background: #f8f8f8; color: #1f1f1f; border: 1px solid rgba(127,127,127,0.45); border-radius: 4px;"
    f" padding: 0.4em 0.6em; margin: 0.3em 0; overflow-x: auto; line-height: 1.35; {MONO}"
)
_NUMBER = "color: #6e6e6e; user-select: none; display: inline-block; text-align: right; margin-right: 1em"


def code_of(arguments: object, code_argument: str | None) -> str | None:
    """The code in ``arguments`` (a dict) under ``code_argument``; None when there is none (not a str)."""
    if code_argument is None or not isinstance(arguments, dict):
        return None
    code = arguments.get(code_argument)
    return code if isinstance(code, str) else None


def code_html(code: str, *, css_class: str = "meowgent-code") -> str:
    """``code`` highlighted as Python in a block of its own; lines numbered past a few, folded past
    `CODE_LINES` (the rest in a ``<details>``)."""
    lines = _highlighted(visible(code)).rstrip("\n").split("\n")
    width = len(str(len(lines)))

    def block(shown: Sequence[str], css: str) -> str:
        if len(lines) > _NUMBERED:
            shown = [
                f'<span style="{_NUMBER}; min-width: {width}ch">{number}</span>{line}'
                for number, line in enumerate(shown, 1)
            ]
        return f'<pre class="{css}" style="{_BLOCK}">' + "\n".join(shown) + "</pre>"

    if len(lines) <= CODE_LINES:
        return block(lines, css_class)
    return (
        block(lines[:CODE_LINES], css_class)
        + '<details class="meowgent-code-more"><summary style="cursor: pointer; opacity: 0.75">'
        + f"show all {len(lines):,} lines</summary>"
        + block(lines, f"{css_class}-full")
        + "</details>"
    )


def _highlighted(code: str) -> str:
    """``code`` as HTML spans with inline colours (Pygments' default style), one line per line."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(noclasses=True, nowrap=True, style="default")
    # Pygments closes each token's span at the end of its line, so lines can be numbered apart.
    return highlight(code, PythonLexer(stripnl=False, ensurenl=False), formatter)


def risk_html(label: str | None, reasons: Sequence[str] = ()) -> str:
    """The risk label as a badge, and what it is based on (one line each); empty without a label."""
    if not label:
        return ""
    color = RISK_COLORS.get(label, "#6a1b9a")
    # Without its reasons (a card after the call ran) only read-only can say what it rests on.
    based = (
        "; ".join(reasons)
        if reasons
        else ("nothing above read-only was found" if label == "read-only" else "")
    )
    title = f' title="{escape(visible(based))}"' if based else ""
    badge = (
        f'<span class="meowgent-risk"{title} style="background: {color};'
        f' color: white; border-radius: 3px; padding: 0 0.4em; font-size: 0.85em">'
        f"risk: {escape(label)}</span>"
    )
    if not reasons:
        return badge
    items = "".join(f"<li>{escape(visible(reason))}</li>" for reason in reasons)
    return (
        f'{badge}<ul class="meowgent-risk-reasons" style="margin: 0.2em 0; padding-left: 1.4em;'
        f' font-size: 0.85em">{items}</ul>'
    )


def code_lines(code: str, indent: str = "    ") -> list[str]:
    """``code`` in text/plain, indented, hidden characters shown; past `CODE_LINES` lines cut with
    a line saying how many more there were."""
    lines = visible(code).rstrip("\n").split("\n")
    shown = [(indent + line).rstrip() for line in lines[:CODE_LINES]]
    if len(lines) > CODE_LINES:
        shown.append(f"{indent}[... {len(lines) - CODE_LINES:,} more lines]")
    return shown
