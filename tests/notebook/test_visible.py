"""Hidden characters made visible: which ones, how they are written, and HTML escaping with marks."""

from __future__ import annotations

import pytest

from meowgent_nb._visible import is_hidden, visible, visible_html

MARK = (
    '<span class="meowgent-hidden-char" title="{title}" style="color: #c62828;'
    " background: rgba(198,40,40,0.12); border: 1px solid rgba(198,40,40,0.6); border-radius: 2px;"
    ' padding: 0 1px">{escape}</span>'
)


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x00", "\\x00"),
        ("\r", "\\r"),
        ("\x1b", "\\x1b"),
        ("\x7f", "\\x7f"),
        ("\x85", "\\x85"),  # a C1 control
        ("\u00ad", "\\xad"),  # soft hyphen
        ("\u034f", "\\u034f"),  # combining grapheme joiner
        ("\u061c", "\\u061c"),
        ("\u115f", "\\u115f"),  # Hangul choseong filler: a letter that draws nothing
        ("\u180e", "\\u180e"),
        ("\u200b", "\\u200b"),
        ("\u200c", "\\u200c"),
        ("\u200d", "\\u200d"),
        ("\u200e", "\\u200e"),
        ("\u200f", "\\u200f"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ("\u202a", "\\u202a"),
        ("\u202e", "\\u202e"),
        ("\u2060", "\\u2060"),
        ("\u2066", "\\u2066"),
        ("\u2069", "\\u2069"),
        ("\u3164", "\\u3164"),
        ("\ud800", "\\ud800"),  # a lone surrogate, as json.loads gives for "\ud800"
        ("\ue000", "\\ue000"),  # private use
        ("\ufe0f", "\\ufe0f"),  # a variation selector
        ("\ufeff", "\\ufeff"),
        ("\uffa0", "\\uffa0"),
        ("\U000e0001", "\\U000e0001"),
        ("\U000e0041", "\\U000e0041"),  # tag LATIN CAPITAL LETTER A
        ("\U000e007f", "\\U000e007f"),
        ("\U000e0100", "\\U000e0100"),
        ("\U0010fffd", "\\U0010fffd"),
        ("\U0010ffff", "\\U0010ffff"),  # a noncharacter (unassigned)
    ],
)
def test_each_hidden_character_is_written_as_an_escape(char, shown):
    assert is_hidden(char)
    assert visible(f"a{char}b") == f"a{shown}b"


def test_what_people_can_see_is_left_alone():
    text = (
        "tab\there\nnew line, caf\u00e9, \u65e5\u672c, \u05e9\u05dc\u05d5\u05dd, \u00a0no-break,"
        " \U0001f600, a literal C:\\u202e"
    )
    assert visible(text) == text
    assert not any(is_hidden(char) for char in text)


def test_the_reversed_extension_reads_as_it_is_stored():
    assert visible("report\u202etxt.exe") == "report\\u202etxt.exe"
    assert visible("\x1b[2J\rpaid\u200b") == "\\x1b[2J\\rpaid\\u200b"


def test_html_is_escaped_and_the_hidden_characters_marked():
    shown = visible_html("<script>alert('x')</script>\u202e&\"\U000e0041")
    assert shown == (
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
        + MARK.format(title="U+202E RIGHT-TO-LEFT OVERRIDE", escape="\\u202e")
        + "&amp;&quot;"
        + MARK.format(title="U+E0041 TAG LATIN CAPITAL LETTER A", escape="\\U000e0041")
    )
    # A character without a name (unassigned) is titled by its code point alone.
    assert visible_html("\U0010ffff") == MARK.format(title="U+10FFFF", escape="\\U0010ffff")
