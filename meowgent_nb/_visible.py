"""Characters a person cannot see, shown as escapes wherever a person reads or approves a call.

A model (or a web page, or an MCP server) can put characters into a tool's arguments, its name
or its output that draw nothing, or that reorder what follows: ``"report\\u202etxt.exe"`` reads
as "reportexe.txt". Every place that shows such text to a person (the approval panel, the
``input()`` prompt, the transcript's cards in text and HTML) passes it through `visible` or
`visible_html`; only what is shown changes, never the value a tool receives.

A character is shown as an escape (``\\r``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``, as Python's
repr writes them) when it is:

- a control character (category Cc) other than ``\\n`` and ``\\t``: ``\\r`` and ``\\x1b`` rewrite
  what a terminal shows, and the rest draw nothing;
- a format character (Cf): the zero-width space, joiners and word joiner (U+200B..U+200D,
  U+2060), the byte-order mark (U+FEFF), the bidirectional marks, embeddings, overrides and
  isolates (U+200E, U+200F, U+061C, U+202A..U+202E, U+2066..U+2069), the soft hyphen, and the
  tag characters (U+E0001, U+E0020..U+E007F) that can carry a hidden ASCII message;
- a line or paragraph separator (Zl, Zp: U+2028, U+2029), which breaks lines in some views only;
- a surrogate (Cs), a private-use character (Co) or an unassigned code point (Cn, in the Unicode
  version of this Python): none has an agreed appearance, so any could be drawn as nothing;
- any other Default_Ignorable_Code_Point of Unicode's DerivedCoreProperties.txt: characters that
  fonts draw as nothing although they are letters or marks, such as the Hangul fillers
  (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner (U+034F), and the variation
  selectors (U+180B..U+180F, U+FE00..U+FE0F, U+E0100..U+E01EF), which can also carry hidden data.

Spaces other than U+0020 (no-break, em, ideographic) are left alone: they look like a space,
which is what they are. Letters of right-to-left scripts are left alone too: they reorder
neighbouring punctuation, but only as their script always does. The cost: emoji built with the
zero-width joiner or VS16 (U+FE0F) show their parts, and the Persian and Indic uses of the
joiners show as escapes; in what a person approves, that is the right way round. In text/plain
an escape looks like the same six characters typed literally; HTML tells them apart by the mark.
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
