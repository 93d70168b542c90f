"""Where a tool call's JSON strings begin and end, chunk by chunk, while the parser looks for tags.

A tag inside a JSON string is data: ``{"text": "use </tool_call> to end a call"}`` is one call
whose argument holds the tag, not a call cut short with the rest of the string read as new
calls. `CallScanner` follows the call's text as it streams, in one pass over each character, and
reports the first ``<tool_call>`` or ``</tool_call>`` that stands outside every string.

Strings are JSON's double-quoted ones (with backslash escapes), and the single-quoted ones of
Python-style calls (``{'a': 'b'}``, which json-repair mends), recognised only where a value or
key may begin (after ``{ [ , :`` or at the start), so an apostrophe in ordinary words is not
taken for a string. The scanner also keeps the nesting depth of ``{`` and ``[`` outside strings,
so that at the end of a stream it can tell a call whose JSON was still open (cut off) from one
that was complete.
"""

from __future__ import annotations

import re
from typing import cast

__all__ = ["CallScanner", "match_end", "object_end"]

# Outside strings only these characters matter; everything else is skipped in one regex step.
_SIGNIFICANT = re.compile(r"[\"'{}\[\]<]")
# A string's body up to its closing quote, or up to a backslash with nothing after it yet.
_BODY = {'"': re.compile(r'(?:[^"\\]+|\\.)*', re.S), "'": re.compile(r"(?:[^'\\]+|\\.)*", re.S)}
_VALUE_START = frozenset("{[,:")
_STRUCTURE = re.compile(r"[\"'{}\[\],:]")  # what `object_end` looks at: strings, brackets, separators


def match_end(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where ``pattern``, one that matches the empty string too, ends its match at ``at``."""
    return cast("re.Match[str]", pattern.match(text, at)).end()


class CallScanner:
    """Finds the tags that end or follow a call's body, outside its JSON strings.

    Args:
        tags: The tags to look for (``</tool_call>``, ``<tool_call>``); each starts with ``<``.
    """

    def __init__(self, tags: tuple[str, ...]) -> None:
        self._tags = tags
        self._longest = max(map(len, tags), default=0)
        self.reset()

    def reset(self) -> None:
        """Forget the call: the next text starts a new body."""
        self._quote: str | None = None  # the quote of the string we are in
        self._depth = 0  # open { and [ outside strings
        self._last = ""  # the last non-whitespace character outside strings ("" at the start)

    @property
    def open(self) -> bool:
        """Whether the body so far ends inside a string or inside an unclosed object or array."""
        return self._quote is not None or self._depth > 0

    def scan(self, text: str) -> tuple[int, str | None]:
        """Reads ``text``, which continues the body: where its body part ends, and why.

        Returns:
            ``(end, tag)``: the body goes on to ``text[:end]``; ``tag`` is the tag found at
            ``end`` (None if none was), and the text after it is not read. Without a tag,
            ``text[end:]`` (at most one tag long) may start a tag or end in an unfinished
            escape: pass it again in front of the next chunk.
        """
        at, size = 0, len(text)
        while at < size:
            if self._quote is not None:
                stop = match_end(_BODY[self._quote], text, at)
                if stop == size:
                    return size, None
                if text[stop] == "\\":  # a backslash whose escaped character is in the next chunk
                    return stop, None
                self._quote, self._last, at = None, text[stop], stop + 1
                continue
            found = _SIGNIFICANT.search(text, at)
            if found is None:
                self._note(text, at, size)
                return size, None
            stop = found.start()
            self._note(text, at, stop)
            char = text[stop]
            at = stop + 1
            if char == "<":
                rest = text[stop : stop + self._longest]
                for tag in self._tags:
                    if rest.startswith(tag):
                        return stop, tag
                if stop + self._longest > size and any(tag.startswith(rest) for tag in self._tags):
                    return stop, None
            elif char == '"' or (char == "'" and (self._last == "" or self._last in _VALUE_START)):
                self._quote = char
                continue
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
            self._last = char
        return size, None

    def ends_open(self, text: str) -> bool:
        """Whether ``text``, read from the start of a body, ends inside its JSON."""
        self.reset()
        self.scan(text)
        return self.open

    def _note(self, text: str, start: int, stop: int) -> None:
        """Remembers the last non-whitespace character of ``text[start:stop]``, if it has one."""
        if start < stop:
            skipped = text[start:stop].rstrip()
            if skipped:
                self._last = skipped[-1]


def object_end(text: str, start: int) -> int | None:
    """Where the JSON object or array that opens at ``text[start]`` closes, strings respected.

    The same strings as `CallScanner` reads (double-quoted, and single-quoted where a value may
    begin), so a ``}`` inside a string does not close anything.

    Returns:
        The index just after the bracket that closes it, or None if the text ends first.
    """
    depth, quote, last, at, size = 0, None, "", start, len(text)
    while at < size:
        if quote is not None:
            stop = match_end(_BODY[quote], text, at)
            if stop >= size or text[stop] == "\\":  # the string never ends
                return None
            quote, last, at = None, quote, stop + 1
            continue
        found = _STRUCTURE.search(text, at)
        if found is None:
            return None
        skipped = text[at : found.start()].rstrip()
        if skipped:  # a word before the quote: an apostrophe in it starts no string
            last = skipped[-1]
        char, at = found.group(), found.end()
        if char == '"' or (char == "'" and (last == "" or last in _VALUE_START)):
            quote = char
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return at
        last = char
    return None
