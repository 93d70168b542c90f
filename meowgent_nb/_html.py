"""HTML building blocks every rendering uses: escaping, a duration, a note, wrapped text, a table, code.

Below every wing, so that the tools view (`meowgent_nb.tools.view`), the eval report and the
notebook's transcript build their HTML the same way. Everything takes values and returns HTML
text. Styles are inline because notebook viewers that sanitize HTML (GitHub, untrusted notebooks
in JupyterLab) drop ``<style>`` blocks but keep ``style`` attributes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ._visible import visible_html

__all__ = [
    "MONO",
    "MUTED",
    "PRE_STYLE",
    "escape",
    "highlight",
    "note_html",
    "pre_html",
    "seconds",
    "table_html",
]

MUTED = "opacity: 0.65; font-size: 0.85em"
"""The style of secondary text: notes, durations, folded summaries."""
MONO = (
    "font-family: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas,"
    " 'DejaVu Sans Mono', 'Liberation Mono', monospace)"
)
"""A monospace font: JupyterLab's code font where it is defined, else a stack of common ones
(an HTML export or a viewer without JupyterLab's CSS would otherwise show a proportional font)."""
_WRAP = "white-space: pre-wrap; word-break: normal; overflow-wrap: break-word"
"""Wrap long lines between words; break a word only if it is longer than the line. (JupyterLab's
output CSS sets ``word-break: break-all``, which cut names mid-word.)"""
_BOX_PRE = f"margin: 0.2em 0; padding: 0.3em 0.5em; background: rgba(127,127,127,0.1); {_WRAP}; {MONO}"
PRE_STYLE = (
    f"background: rgba(127,127,127,0.12); padding: 0.5em; border-radius: 4px; overflow-x: auto; {MONO}"
)
"""The style of a block of code."""


def escape(text: str) -> str:
    """Text made safe for HTML content and quoted attribute values."""
    return html.escape(text, quote=True)


def seconds(value: float) -> str:
    """A duration for people: ``85 ms``, ``1.25 s``, ``12.5 s``."""
    if value < 1:
        return f"{value * 1000:.0f} ms"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def note_html(css_class: str, text: str, style: str = "") -> str:
    """A small muted line (status, approval, footer)."""
    return f'<div class="{css_class}" style="{style}{MUTED}">{escape(text)}</div>'


def pre_html(css_class: str, text: str) -> str:
    """Preformatted text that wraps, its hidden characters marked (`visible_html`)."""
    return f'<pre class="{css_class}" style="{_BOX_PRE}">{visible_html(text)}</pre>'


def table_html(css_class: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left-aligned table; the first column is a name, shown as code."""
    cell = '<td style="text-align: left">'
    head = "".join(f'<th style="text-align: left">{escape(name)}</th>' for name in header)
    body = "".join(
        f"<tr>{cell}<code>{escape(row[0])}</code></td>"
        + "".join(f"{cell}{escape(x)}</td>" for x in row[1:])
        + "</tr>"
        for row in rows
    )
    return f'<table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def highlight(code: str, language: str) -> str:
    """``code`` syntax-highlighted with Pygments (``"xml"``, ``"json"`` or ``"python"``), or plain if it is missing."""
    try:
        from pygments import highlight as pygmentize
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import JsonLexer, PythonLexer, XmlLexer
    except ImportError:  # Pygments comes with IPython, but the package does not require it
        return f'<pre class="meowgent-code" style="{PRE_STYLE}">{escape(code)}</pre>'
    lexer = {"xml": XmlLexer, "python": PythonLexer}.get(language, JsonLexer)()
    # The Pygments style's colours are for a light background: the <pre> gets one inline, and a
    # dark text colour, or dark themes (which style <pre>) would show them on black.
    pre = (
        f"margin: 0; padding: 0.5em; background: #f8f8f8; color: #1f1f1f; border-radius: 4px; {_WRAP}; {MONO}"
    )
    body = pygmentize(code, lexer, HtmlFormatter(noclasses=True, prestyles=pre))
    style = "color: #1f1f1f; border-radius: 4px; overflow-x: auto"
    return f'<div class="meowgent-code" style="{style}">{body}</div>'
