"""Characters a person cannot see, shown as escapes wherever a person reads or approves a call.

Text from a model, a web page or an MCP server can hold characters that draw nothing or reorder
what follows (a right-to-left override makes ``report<RLO>txt.exe`` read "reportexe.txt"). Every
place that shows such text to a person passes it through `visible` or `visible_html`, which
write each hidden character as Python's repr escapes it; only what is shown changes, never the
value a tool receives. `is_hidden` decides: control characters but newline and tab, format
characters, line and paragraph separators, surrogates, private-use and unassigned code points, and
Unicode's other default-ignorable code points. Spaces and right-to-left letters are left alone.
Each case is a test in tests/notebook/test_visible.py.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata

__all__ = ["escape_char", "is_hidden", "visible", "visible_html"]

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_DEFAULT_IGNORABLE = (  # the ranges of Default_Ignorable_Code_Point (Unicode 15.1)
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_CANDIDATE = re.compile(r"[^\t\n\x20-\x7e]")
"""Everything but printable ASCII, tab and newline: only these need a closer look."""
_MARK_STYLE = (
    "color: #c62828; background: rgba(198,40,40,0.12); border: 1px solid rgba(198,40,40,0.6);"
    " border-radius: 2px; padding: 0 1px"
)


@functools.lru_cache(maxsize=4096)
def is_hidden(char: str) -> bool:
    """Whether ``char`` (one character) is shown as an escape; see the module docstring."""
    if char in "\n\t":
        return False
    if unicodedata.category(char) in _HIDDEN_CATEGORIES:
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _DEFAULT_IGNORABLE)


def escape_char(char: str) -> str:
    """``char`` as Python's repr writes it: ``\\r``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``."""
    point = ord(char)
    if char == "\r":
        return "\\r"
    if point <= 0xFF:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def visible(text: str) -> str:
    """``text`` with each hidden character replaced by its escape, for plain text."""
    return _CANDIDATE.sub(lambda m: escape_char(m.group()) if is_hidden(m.group()) else m.group(), text)


def visible_html(text: str) -> str:
    """``text`` escaped for HTML, each hidden character shown as a marked escape.

    The mark is ``<span class="meowgent-hidden-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">``
    around the escape, styled to stand out; the title names the character for the curious.
    """
    parts = []
    position = 0
    for match in _CANDIDATE.finditer(text):
        char = match.group()
        if is_hidden(char):
            parts.append(html.escape(text[position : match.start()], quote=True))
            parts.append(_mark(char))
            position = match.end()
    parts.append(html.escape(text[position:], quote=True))
    return "".join(parts)


def _mark(char: str) -> str:
    name = unicodedata.name(char, "")
    title = f"U+{ord(char):04X}" + (f" {name}" if name else "")
    return (
        f'<span class="meowgent-hidden-char" title="{html.escape(title)}" style="{_MARK_STYLE}">'
        f"{escape_char(char)}</span>"
    )
